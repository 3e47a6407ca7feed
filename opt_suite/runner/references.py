"""Reference returns of every (seed, test task): the 0 and the 1 of the normalised scores.

For each seed and held-out test task the suite measures two returns (see
:mod:`opt_suite.report.normalise` for how the report uses them):

- **random**: the expected return of a uniform-random policy over the primitive actions, with
  episodes cut at ``evaluation.max_steps`` as the learner's are. Exact on families with a tabular
  model (finite-horizon policy evaluation, :func:`uniform_random_return`); otherwise the mean of
  :data:`RANDOM_EPISODES` sampled episodes.
- **expert**: the mean return of the spec's demonstration source on that test task -- the same
  ``collect`` that demonstrates the train tasks, called on the test task (``optimal``: value
  iteration; ``qlearning``: a Q-learning expert; ``ppo_expert``: one PPO expert trained per test
  task and seed, which is why ``report.references: auto`` measures only tabular families).

Each (seed, test task) pair is content-hashed by what it depends on (family, test task, seed, the
``demonstrations`` section, ``max_steps`` and the code of the family and source, as cell ids are)
and kept in ``references/<hash>.json`` of the run directory, so a rerun or another spec with the
same test tasks reuses it. The pairs of one spec are then written to
``references/spec-<spec hash>.json``, which the report reads. Draws use their own seed stream
(:func:`opt_suite.runner.seeding.reference_seed`), so measuring references changes no other number.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from opt_suite.families.base import TabularModel, Task, TaskFamily, exact_model
from opt_suite.runner.seeding import reference_seed
from opt_suite.runner.versions import provider
from opt_suite.spec import content_hash, spec_hash, to_plain
from opt_suite.store.files import (
    REFERENCES_DIR,
    copy_missing_files,
    references_file,
    write_text_atomic,
)

if TYPE_CHECKING:
    from opt_suite.runner.protocol import Components
    from opt_suite.spec import Spec

__all__ = [
    "RANDOM_EPISODES",
    "ReferenceError",
    "measure_references",
    "merge_references",
    "references_wanted",
    "uniform_random_return",
]

#: Sampled episodes of the uniform-random policy on a family without a tabular model.
RANDOM_EPISODES = 20
#: Bump when what a reference measures changes, so cached ones are not reused.
VERSION = 1


class ReferenceError(RuntimeError):
    """A reference return could not be measured; the message names the task and the cause."""


def references_wanted(spec: Spec, components: Components, family: TaskFamily, task: Task) -> bool:
    """Whether ``report.references`` asks for references on this run.

    ``auto``: on families with a tabular model and sources that train no checkpointed agent
    (cheap: exact evaluation and value iteration); ``measure``: always; ``none``: never.
    """
    choice = spec.report.references
    if choice == "none":
        return False
    if choice == "measure":
        return True
    cheap_source = not components.demonstrations.uses_checkpoints
    return cheap_source and exact_model(family, task) is not None


def uniform_random_return(model: TabularModel, horizon: int) -> float:
    """Expected undiscounted return of the uniform-random policy from the start, cut at ``horizon``.

    Finite-horizon policy evaluation: ``V_0 = 0`` and, for a non-terminal state,
    ``V_h(s) = mean_a sum_k p(s, a, k) (r(s, a, k) + V_{h-1}(s'_k))`` with ``V = 0`` at terminal
    states; the answer is ``V_horizon(start)``.
    """
    import scipy.sparse

    S, A, K = model.next_state.shape
    live = ~np.asarray(model.terminal, dtype=bool)
    # P_pi[s, s'] and r_pi[s] of the uniform policy, rows of terminal states zero (V = 0 there).
    weight = np.where(live[:, None, None], model.prob / A, 0.0)
    rows = np.repeat(np.arange(S), A * K)
    p_pi = scipy.sparse.csr_matrix((weight.ravel(), (rows, model.next_state.ravel())), shape=(S, S))
    r_pi = np.sum(weight * model.reward, axis=(1, 2))
    value: np.ndarray = np.zeros(S)
    for _ in range(horizon):
        value = r_pi + p_pi @ value
    return float(value[model.start])


def _sampled_random_return(
    family: TaskFamily, task: Task, horizon: int, seed: np.random.SeedSequence
) -> float:
    """Mean return of :data:`RANDOM_EPISODES` uniform-random episodes of at most ``horizon``."""
    rng = np.random.default_rng(seed)
    env = family.make_env(task)
    try:
        env.action_space.seed(int(rng.integers(2**31)))
        returns = []
        for _ in range(RANDOM_EPISODES):
            env.reset(seed=int(rng.integers(2**31)))
            total, steps, done = 0.0, 0, False
            while not done and steps < horizon:
                _, reward, terminated, truncated, _ = env.step(env.action_space.sample())
                total += float(reward)
                steps += 1
                done = bool(terminated or truncated)
            returns.append(total)
    finally:
        env.close()
    return float(np.mean(returns))


def _expert_return(
    spec: Spec,
    components: Components,
    family: TaskFamily,
    task: Task,
    seed: np.random.SeedSequence,
    checkpoint_dir: Path,
) -> float:
    """Mean return of the demonstration source's trajectories on ``task``."""
    from opt_suite.demonstrations import collect_demonstrations

    demos = collect_demonstrations(
        family,
        [task],
        spec.demonstrations,
        seed,
        components.demonstrations,
        checkpoint_dir=checkpoint_dir,
    )
    if not demos:
        raise ReferenceError(f"the demonstration source gave no trajectory on {task.task_id}")
    return float(np.mean([float(np.sum(d.rewards)) for d in demos]))


def _key(spec: Spec, components: Components, seed: int, task: Task) -> dict[str, Any]:
    """What one (seed, test task) reference depends on (hashed into its file name)."""
    return {
        "version": VERSION,
        "seed": seed,
        "task_seed": spec.tasks.seed,
        "family": to_plain(spec.family),
        "test_task": to_plain(task.params),
        "test_task_index": task.index,
        "max_steps": spec.evaluation.max_steps,
        "demonstrations": to_plain(spec.demonstrations),
        "random_episodes": RANDOM_EPISODES,
        "code": {
            "family": provider(components.family),
            "source": provider(components.demonstrations),
        },
    }


def _measure_one(
    spec: Spec,
    components: Components,
    family: TaskFamily,
    task: Task,
    seed: int,
    directory: Path,
) -> tuple[float, float]:
    """(random, expert) of one (seed, test task), from its cache file or measured and cached."""
    path = directory / REFERENCES_DIR / f"{content_hash(_key(spec, components, seed, task))}.json"
    if path.is_file():
        cached = json.loads(path.read_text())
        return float(cached["random"]), float(cached["expert"])
    random_seed, expert_seed = reference_seed(spec.tasks.seed, seed, task.index).spawn(2)
    model = exact_model(family, task)
    horizon = spec.evaluation.max_steps
    random = (
        uniform_random_return(model, horizon)
        if model is not None
        else _sampled_random_return(family, task, horizon, random_seed)
    )
    expert = _expert_return(spec, components, family, task, expert_seed, directory / "experts")
    if not (np.isfinite(random) and np.isfinite(expert)):
        raise ReferenceError(f"non-finite reference returns on {task.task_id}: {random}, {expert}")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps({"random": random, "expert": expert}) + "\n")
    return random, expert


def measure_references(
    spec: Spec,
    components: Components,
    family: TaskFamily,
    test_tasks: Sequence[Task] | Callable[[int], Sequence[Task]],
    seeds: Sequence[int],
    directory: str | Path,
) -> Path:
    """Measure (or reuse) every (seed, test task) reference and write the spec's file.

    ``test_tasks`` are the test tasks every seed shares, or a function from a seed index to its
    own (``tasks.test_per_seed``: ``SpecTasks.test``); each seed's must be equally many.

    Returns:
        :func:`references_file` of the spec: ``{"expert": label, "seeds", "tasks", "random":
        [[...]], "expert_returns": [[...]]}`` (seeds x tasks, tasks by index).

    Raises:
        ReferenceError, DemonstrationError: a reference could not be measured (e.g. the source
            cannot demonstrate a test task); nothing is written for the spec then.
    """
    directory = Path(directory)
    tasks_of = test_tasks if callable(test_tasks) else (lambda seed: test_tasks)
    by_seed = [tuple(tasks_of(seed)) for seed in seeds]
    width = len(by_seed[0]) if by_seed else 0
    if any(len(tasks) != width for tasks in by_seed):
        raise ReferenceError(f"the seeds have different numbers of test tasks: {by_seed}")
    random = np.empty((len(seeds), width))
    expert = np.empty_like(random)
    for i, seed in enumerate(seeds):
        for j, task in enumerate(by_seed[i]):
            random[i, j], expert[i, j] = _measure_one(
                spec, components, family, task, seed, directory
            )
    path = references_file(directory, spec_hash(spec))
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "format": "opt-suite-references",
        "version": VERSION,
        "expert": f"{spec.demonstrations.source} expert",
        "seeds": list(seeds),
        "tasks": list(range(width)),
        "random": random.tolist(),
        "expert_returns": expert.tolist(),
    }
    write_text_atomic(path, json.dumps(doc, indent=1) + "\n")
    return path


def merge_references(out: str | Path, shards: Sequence[str | Path], spec_hash: str) -> Path | None:
    """Join the shards' reference returns of one spec into ``out``'s (``opt-suite merge-stores``).

    Copies the (seed, test task) files ``out`` lacks and writes the spec's file with every seed
    any of them measured, ascending (as one run of all the seeds writes it). A shard whose
    measurement failed passes its error on: the report then says why it has no normalised scores.

    Returns:
      The spec's file in ``out``, or None when no shard measured references.

    Raises:
      ReferenceError: two stores hold different reference returns for one seed.
    """
    out = Path(out)
    docs: list[tuple[Path, dict[str, Any]]] = []
    for directory in [out, *map(Path, shards)]:
        path = references_file(directory, spec_hash)
        if path.is_file():
            docs.append((path, json.loads(path.read_text())))
        if directory != out:
            copy_missing_files(
                directory / REFERENCES_DIR,
                out / REFERENCES_DIR,
                lambda p: not p.name.startswith("spec-"),
            )
    if not docs:
        return None
    target = references_file(out, spec_hash)
    failed = [doc for _, doc in docs if "error" in doc]
    if failed:
        write_text_atomic(target, json.dumps(failed[0]) + "\n")
        return target
    rows: dict[int, tuple[list[float], list[float], Path]] = {}
    for path, doc in docs:
        for seed, random, expert in zip(
            doc["seeds"], doc["random"], doc["expert_returns"], strict=True
        ):
            seen = rows.setdefault(int(seed), (random, expert, path))
            if seen[:2] != (random, expert):
                raise ReferenceError(
                    f"{path}: seed {seed}'s reference returns differ from those in {seen[2]}"
                )
    seeds = sorted(rows)
    doc = {
        **docs[0][1],
        "seeds": seeds,
        "random": [rows[s][0] for s in seeds],
        "expert_returns": [rows[s][1] for s in seeds],
    }
    write_text_atomic(target, json.dumps(doc, indent=1) + "\n")
    return target
