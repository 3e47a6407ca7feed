"""Fingerprints of ``smdp_q_learning`` runs: proof that a change of its engine changed no number.

    nice .venv/bin/python benchmarks/smdp_run_hashes.py

Each setting runs the learner (``run`` and ``run_with_usage``) and prints the SHA-256 of the runs'
returns, steps and option-usage counts and the CPU seconds it took; two checkouts that print the
same hashes produced bit-identical runs. To compare against another commit, run this file with
that commit's package first on the path (``git archive <commit> | tar -x -C /tmp/old`` then
``PYTHONPATH=/tmp/old``). The settings cover each way a run reaches the engine: one run and a
cell's many runs on the paper's 40x40 four rooms (slip 0.1) with random options, Sutton's hallway
options (initiation sets), a non-zero ``q_init`` with a bump of 0, and FrozenLake 8x8 without a
model (the env-stepping path).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time

import numpy as np

from opt_suite.families.base import Task
from opt_suite.families.gymnasium.family import Gymnasium
from opt_suite.families.gymnasium.family import Params as GymParams
from opt_suite.families.tabular.fourrooms import FourRooms, Params, Variation
from opt_suite.learners.base import LearnerContext, LearnerRun
from opt_suite.learners.smdp_q import SMDPQLearning
from opt_suite.options import OptionSet, TabularOptionSet
from opt_suite.params import FrozenDict


def _random_options(num_states: int, seed: int = 0) -> TabularOptionSet:
    rng = np.random.default_rng(seed)
    mu = np.eye(4)[rng.integers(4, size=(4, num_states))]
    return TabularOptionSet(mu, rng.uniform(0.0, 0.2, size=(4, num_states)))


@dataclasses.dataclass(frozen=True)
class Setting:
    """One fingerprinted setting: a family, its runs, the options and the learner's numbers."""

    name: str
    context: LearnerContext
    params: SMDPQLearning.Params


def settings() -> list[Setting]:
    """The fingerprinted settings (see the module docstring)."""
    rooms = FourRooms(Params())
    _, tests = rooms.make_tasks(Variation(), (), 30, 6, 24, seed=0)
    S = rooms.tabular_model(tests[0]).num_states
    hallways: OptionSet = rooms.reference_options(tests[0])
    one = [LearnerRun(tests[0], np.random.SeedSequence(0))]
    cell = [LearnerRun(t, np.random.SeedSequence(s)) for t in tests[:6] for s in range(8)]
    lake = Gymnasium(GymParams(id="FrozenLake-v1", kwargs=FrozenDict(map_name="8x8")))
    lake_task = Task(f"{lake.instance_name}/test/0", "test", 0, lake.default_task())
    lake_runs = [LearnerRun(lake_task, np.random.SeedSequence(s)) for s in range(3)]
    default = SMDPQLearning.Params()
    return [
        Setting(
            "rooms40/one-run", LearnerContext(rooms, one, _random_options(S), 100, 1000), default
        ),
        Setting(
            "rooms40/48-runs", LearnerContext(rooms, cell, _random_options(S), 60, 1000), default
        ),
        Setting("rooms40/hallways", LearnerContext(rooms, cell, hallways, 60, 1000), default),
        Setting(
            "rooms40/q_init-2-no-bump",
            LearnerContext(rooms, cell[:12], _random_options(S, 1), 40, 500),
            SMDPQLearning.Params(alpha=0.3, epsilon=0.2, termination_bump=0.0, q_init=2.0),
        ),
        Setting(
            "frozenlake8x8/model-free",
            LearnerContext(lake, lake_runs, _random_options(64), 300, 1000),
            default,
        ),
    ]


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def main() -> None:
    """Print one line per setting and engine call: hashes and CPU seconds."""
    for setting in settings():
        learner = SMDPQLearning(setting.params)
        start = time.process_time()
        logs = learner.run(setting.context)
        cpu = time.process_time() - start
        found = learner.run_with_usage(setting.context)
        returns = _digest(*(log.returns for log in logs), *(log.steps for log in logs))
        usage = _digest(*(u.calls for _, u in found), *(u.steps for _, u in found))
        same = all(
            np.array_equal(a.returns, b.returns) and np.array_equal(a.steps, b.steps)
            for a, (b, _) in zip(logs, found, strict=True)
        )
        steps = sum(int(log.steps.sum()) for log in logs)
        print(
            f"{setting.name:26s} returns+steps {returns}  usage {usage}  "
            f"run==run_with_usage {same}  {steps} steps in {cpu:.2f} CPU s"
        )


if __name__ == "__main__":
    main()
