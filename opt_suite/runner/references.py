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
  task and seed, which is why ``report.references: auto`` measures only tabular families) --
  with each trajectory's rewards cut at ``evaluation.max_steps`` too, so that both references
  are returns under the same cap. A trajectory the source itself cut at a shorter
  ``demonstrations.max_steps`` would be an expert under a shorter cap: that is refused
  (:class:`ReferenceError` naming both keys), never measured.

Any error while measuring a pair (an env that rewards NaN, a damaged dataset of the ``minari``
source, ...) is a :class:`ReferenceError` naming the seed, the task and the cause, so the run
reports one failed step instead of a traceback.

Each (seed, test task) pair is content-hashed by what it depends on (family, test task, seed, the
``demonstrations`` section, ``max_steps`` and the code of the family and source, as cell ids are:
:func:`reference_key`). That key is the inputs of the pair's ``references`` cell of the plan
(:mod:`.plan`), which a worker computes (:class:`~opt_suite.runner.cells.ReferencesJob` calls
:func:`measure_pair`) like any cell -- in parallel, counted in the progress and the estimate,
resumed after an interrupt -- and its hash names both the cell and the pair's file
``references/<hash>.json`` of the run directory, so a rerun or another spec with the same test
tasks reuses it. Every file is sealed (:mod:`opt_suite.store.sealed`: the SHA-256 of its
content, which records the key it was computed from): a cached file that is damaged, edited, of
another type or computed from another key is named in a warning and measured again, never
reused. Once the run's cells are done, :func:`measure_references` reads the pairs of one spec
back and writes them, sealed too, to ``references/spec-<spec hash>.json``, which the report reads
and checks the same way. Draws use their own seed stream (:func:`pair_seeds`), so measuring
references changes no other number.

Length (over the 400 lines the tree aims for): measuring a pair, its key and sealed file, the
spec's file and joining shards' files (:func:`merge_references`, a public name that moving would
have to keep answering here through :mod:`opt_suite.moved`) are one format's reader and writer.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from opt_suite.families.base import TabularModel, Task, TaskFamily, exact_model
from opt_suite.runner.seeding import reference_seed
from opt_suite.runner.versions import provider
from opt_suite.spec import content_hash, spec_hash, to_plain
from opt_suite.store.files import (
    EXPERTS_FOLDER,
    REFERENCES_DIR,
    copy_missing_files,
    references_file,
)
from opt_suite.store.sealed import SealedFileError, read_sealed, write_sealed

if TYPE_CHECKING:
    from opt_suite.demonstrations.base import DemonstrationSource
    from opt_suite.runner.components import Components
    from opt_suite.spec import Spec

__all__ = [
    "RANDOM_EPISODES",
    "SPEC_FORMAT",
    "ReferenceError",
    "cached_pair",
    "keep_pair",
    "measure_pair",
    "measure_references",
    "merge_references",
    "pair_seeds",
    "reference_key",
    "references_wanted",
    "uniform_random_return",
]

#: Sampled episodes of the uniform-random policy on a family without a tabular model.
RANDOM_EPISODES = 20
#: Bump when what a reference measures changes, so cached ones are not reused. 2: the expert's
#: return cut at ``evaluation.max_steps`` like the random one's; files sealed with a digest.
VERSION = 2
#: The sealed payload's ``format`` of a spec's references file (what the report reads).
SPEC_FORMAT = "opt-suite-references"


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
    checkpoint_dir: Path | None,
) -> float:
    """Mean return of the demonstration source's trajectories on ``task``, cut at ``max_steps``.

    Raises:
        ReferenceError: no trajectory, or one the source cut at a shorter cap than the
            learner's (the expert and random references would be under different caps).
    """
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
    cap, own_cap = spec.evaluation.max_steps, spec.demonstrations.max_steps
    if own_cap < cap and any(len(d.rewards) >= own_cap for d in demos):
        raise ReferenceError(
            f"the expert's trajectory on {task.task_id} reached demonstrations.max_steps ="
            f" {own_cap}, shorter than evaluation.max_steps = {cap} that cuts the random policy's"
            " episodes: the two references would be returns under different caps; set"
            f" demonstrations.max_steps to at least {cap}"
        )
    return float(np.mean([float(np.sum(d.rewards[:cap])) for d in demos]))


def reference_key(
    spec: Spec,
    family_cls: type[TaskFamily] | None,
    source_cls: type[DemonstrationSource] | None,
    seed: int,
    task: Task,
) -> dict[str, Any]:
    """What one (seed, test task) reference depends on: its cell's inputs and file name's hash."""
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
        "code": {"family": provider(family_cls), "source": provider(source_cls)},
    }


def _key(spec: Spec, components: Components, seed: int, task: Task) -> dict[str, Any]:
    return reference_key(spec, components.family, components.demonstrations, seed, task)


def _finite_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and np.isfinite(value)


def _cached(
    path: Path, key: dict[str, Any], warn: Callable[[str], None]
) -> tuple[float, float] | None:
    """(random, expert) of a cache file the suite wrote for ``key``; None to measure them.

    Anything else there (damaged, edited, a JSON list, another key's values) is named in a
    warning and then measured again and rewritten, never reused and never a traceback.
    """
    if not (path.exists() or path.is_symlink()):
        return None
    try:
        payload = read_sealed(path, "cached reference returns")
        if payload.get("key") != json.loads(json.dumps(key)):
            raise SealedFileError(f"{path.absolute()}: cached reference returns of another key")
        random, expert = payload.get("random"), payload.get("expert")
        if _finite_number(random) and _finite_number(expert):
            return float(random), float(expert)
        raise SealedFileError(
            f"{path.absolute()}: cached reference returns {random!r}, {expert!r} are not"
            " finite numbers"
        )
    except SealedFileError as exc:
        warn(f"{exc}; measuring the references again and rewriting it")
        return None


def cached_pair(
    directory: Path, key: dict[str, Any], warn: Callable[[str], None]
) -> tuple[float, float] | None:
    """(random, expert) of ``key``'s sealed file in run ``directory`` if it can be trusted.

    None to measure them: no file, or one that is not the suite's for this key (named in a
    warning through ``warn``). The runner reads it before it sends a references cell, so that a
    worker needs no access to the run directory.
    """
    return _cached(directory / REFERENCES_DIR / f"{content_hash(key)}.json", key, warn)


def measure_pair(
    spec: Spec,
    components: Components,
    family: TaskFamily,
    task: Task,
    seed: int,
    experts: Path | None,
) -> tuple[float, float]:
    """(random, expert) of one (seed, test task), measured; what a references cell computes.

    ``experts``: the folder of the source's checkpoints (a worker's own, filled by the runner
    from the run's ``experts/``: :class:`opt_suite.runner.cells.ReferencesJob`).

    Raises:
        ReferenceError: it could not be measured; the message names the seed, the task and
            the cause.
    """
    try:
        return _measure(spec, components, family, task, seed, experts)
    except ReferenceError as exc:
        raise ReferenceError(f"seed {seed}, test task {task.task_id}: {exc}") from exc
    except Exception as exc:  # an env's or a source's own error: one line naming the pair
        cause = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
        raise ReferenceError(
            f"seed {seed}, test task {task.task_id}: {type(exc).__name__}: {cause}"
        ) from exc


def keep_pair(directory: Path, key: dict[str, Any], random: float, expert: float) -> None:
    """Write one pair's sealed file, ``references/<hash of key>.json``, in run ``directory``."""
    path = directory / REFERENCES_DIR / f"{content_hash(key)}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_sealed(path, {"key": key, "random": random, "expert": expert})


def _measure(
    spec: Spec,
    components: Components,
    family: TaskFamily,
    task: Task,
    seed: int,
    experts: Path | None,
) -> tuple[float, float]:
    """(random, expert) of one (seed, test task), measured (the source's checkpoints in experts)."""
    random_seed, expert_seed = pair_seeds(spec, seed, task)
    model = exact_model(family, task)
    horizon = spec.evaluation.max_steps
    random = (
        uniform_random_return(model, horizon)
        if model is not None
        else _sampled_random_return(family, task, horizon, random_seed)
    )
    expert = _expert_return(spec, components, family, task, expert_seed, experts)
    if not (np.isfinite(random) and np.isfinite(expert)):
        raise ReferenceError(f"non-finite reference returns: random {random}, expert {expert}")
    return random, expert


def pair_seeds(
    spec: Spec, seed: int, task: Task
) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    """The (random policy's, expert's) seeds of one (seed, test task): a stream of their own."""
    random_seed, expert_seed = reference_seed(spec.tasks.seed, seed, task.index).spawn(2)
    return random_seed, expert_seed


def _to_stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def measure_references(
    spec: Spec,
    components: Components,
    family: TaskFamily,
    test_tasks: Sequence[Task] | Callable[[int], Sequence[Task]],
    seeds: Sequence[int],
    directory: str | Path,
    warn: Callable[[str], None] = _to_stderr,
) -> Path:
    """Measure (or reuse) every (seed, test task) reference and write the spec's file.

    The runner calls it once its references cells are done, so it reads their files; a pair
    with no trusted file (a stored seed outside this run's plan) is measured here, in process.

    ``test_tasks`` are the test tasks every seed shares, or a function from a seed index to its
    own (``tasks.test_per_seed``: ``SpecTasks.test``); each seed's must be equally many.
    ``warn`` gets one line per cached file that could not be trusted (and was remeasured).

    Returns:
        :func:`references_file` of the spec, sealed (:mod:`opt_suite.store.sealed`); its payload
        is ``{"format", "version", "spec_hash", "expert": label, "seeds", "tasks", "random":
        [[...]], "expert_returns": [[...]]}`` (seeds x tasks, tasks by index).

    Raises:
        ReferenceError: a reference could not be measured (the message names the seed, the
            task and the cause); nothing is written for the spec then.
        OSError: the files cannot be written.
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
            key = _key(spec, components, seed, task)
            pair = cached_pair(directory, key, warn)
            if pair is None:
                experts = directory / EXPERTS_FOLDER
                pair = measure_pair(spec, components, family, task, seed, experts)
                keep_pair(directory, key, *pair)
            random[i, j], expert[i, j] = pair
    path = references_file(directory, spec_hash(spec))
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": SPEC_FORMAT,
        "version": VERSION,
        "spec_hash": spec_hash(spec),
        "expert": f"{spec.demonstrations.source} expert",
        "seeds": list(seeds),
        "tasks": list(range(width)),
        "random": random.tolist(),
        "expert_returns": expert.tolist(),
    }
    write_sealed(path, payload)
    return path


def merge_references(out: str | Path, shards: Sequence[str | Path], spec_hash: str) -> Path | None:
    """Join the shards' reference returns of one spec into ``out``'s (``opt-suite merge-stores``).

    Copies the (seed, test task) files ``out`` lacks (sealed: a damaged one is remeasured by the
    next run, as any) and writes the spec's file, sealed, with every seed any of them measured,
    ascending (as one run of all the seeds writes it). A shard whose measurement failed passes its
    error on: the report then says why it has no normalised scores.

    Returns:
      The spec's file in ``out``, or None when no shard measured references.

    Raises:
      ReferenceError: a spec file cannot be trusted (damaged, edited), or two stores hold
        different reference returns for one seed.
    """
    out = Path(out)
    docs: list[tuple[Path, dict[str, Any]]] = []
    for directory in [out, *map(Path, shards)]:
        path = references_file(directory, spec_hash)
        if path.is_file():
            try:
                docs.append((path, read_sealed(path, "reference returns")))
            except SealedFileError as exc:
                raise ReferenceError(f"{exc}; rerun that shard to measure them again") from None
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
        write_sealed(target, failed[0])
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
    write_sealed(target, doc)
    return target
