"""Trained-agent experts: PPO trained per task, and their trusted checkpoints.

The paper (Sec. 4.2) first learned "a good performing policy with A3C for each game", then "sampled
12 trajectories for training" from three train tasks, "each trajectory lasted until a life was
lost, not for the entire duration of the episode". Here:

- :func:`train_expert`: a PPO agent (:mod:`opt_suite.agents.ppo`; why PPO is said there) learns
  one train task within a budget of emulator frames, on one vector env of that task. Its weights are
  saved as a checkpoint keyed by everything that determines them (family params, task, expert
  params, seed, package versions); a rerun with the same key loads them instead of training.
  A checkpoint is trusted only as written: the SHA-256 of its bytes and a digest of its weights go
  into a sidecar (``<checkpoint>.sha256.json``) written after it, and a checkpoint whose bytes or
  weights differ from both (swapped, truncated, damaged, or weights forged under a recomputed file
  digest) or that has no sidecar is retrained, with a line on stderr, never loaded. Both files are
  read through :mod:`opt_suite.files_guard`: regular, bounded (the checkpoint by the size of the
  expert's own weights), never blocking on a FIFO or endless on ``/dev/zero``. Training is seeded,
  so the retrained expert is the one whose demonstrations the run already used (a retrained expert
  that differs says so).
Sampling demonstrations from these experts (one trajectory until a life is lost, the paper's 12
per game, cut trajectories counted) is the demonstration source's job:
:mod:`opt_suite.demonstrations.agent_sampling`. Its old names here still answer, with a
``DeprecationWarning`` (:data:`opt_suite.moved.MOVED_NAMES`).

"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import sys
import zipfile
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.agents import agent_cache, ppo
from opt_suite.agents.environment import GymnasiumPyEnvironment
from opt_suite.agents.params import ExpertParams
from opt_suite.families.base import Task, TaskFamily
from opt_suite.files_guard import InputError, read_bounded

__all__ = ["TrainedExpert", "checkpoint_key", "sidecar_name", "train_expert", "weights_digest"]

# Part of every checkpoint's key: raise it when the same inputs train a different expert.
# 2: PPO acts in NumPy with its own sample stream (opt_suite.agents.acting), not tf-agents' policy.
CHECKPOINT_FORMAT = 2


@dataclasses.dataclass(eq=False)
class TrainedExpert:
    """A trained actor network and what its training did.

    Attributes:
      actor: the tf-agents actor network (softmax policy over the task's actions).
      key: the checkpoint key (see :func:`checkpoint_key`).
      frames: emulator frames it was trained for.
      episode_returns: returns of the training episodes, in order (the expert's learning curve).
      reused: loaded from a checkpoint rather than trained now.
      rejected: why a checkpoint under this key was not loaded (None when there was none, or it
        was loaded).
    """

    actor: Any
    key: str
    frames: int
    episode_returns: np.ndarray
    reused: bool = False
    rejected: str | None = None
    _logits: Any = dataclasses.field(default=None, repr=False)

    def action_probabilities(self, observations: np.ndarray) -> np.ndarray:
        """pi(a | s) [N, A] for a batch of observations [N, ...]."""
        if self._logits is None:
            self._logits = ppo.policy_logits(self.actor)
        logits = self._logits(observations).astype(np.float64)
        logits -= logits.max(axis=-1, keepdims=True)
        probs = np.exp(logits)
        return probs / probs.sum(axis=-1, keepdims=True)


def _versions() -> dict[str, str]:
    names = ("opt-suite", "tensorflow", "tf-agents", "ale-py", "gymnasium")
    return {name: metadata.version(name) for name in names}


def checkpoint_key(family: TaskFamily, task: Task, params: ExpertParams, seed: int) -> str:
    """A hash of everything an expert's weights depend on (a changed input retrains)."""
    plain = {
        "format": CHECKPOINT_FORMAT,
        "family": type(family).name,
        "family_params": dataclasses.asdict(family.params),
        "task": dataclasses.asdict(task.params),
        # min_complete only decides which samples are kept: the same weights with or without it
        "expert": {k: v for k, v in dataclasses.asdict(params).items() if k != "min_complete"},
        "seed": int(seed),
        "versions": _versions(),
    }
    return hashlib.sha256(json.dumps(plain, sort_keys=True).encode()).hexdigest()


def train_expert(
    family: TaskFamily,
    task: Task,
    params: ExpertParams,
    seed: int,
    checkpoint: str | Path | None = None,
    progress: Callable[[ppo.TrainingLog], None] | None = None,
) -> TrainedExpert:
    """A PPO expert for ``task`` trained for ``params.frames`` emulator frames, or its checkpoint.

    Args:
      family: the family (its ``make_vector_env`` acts in lockstep).
      task: the train task.
      params: budget and agent settings.
      seed: networks, policy samples and env seeds all derive from it.
      checkpoint: an ``.npz`` path; reused when it holds this key, (over)written after training.
      progress: called after every PPO iteration with the training log so far.
    """
    key = checkpoint_key(family, task, params, seed)
    env = family.make_vector_env(task, params.ppo.num_envs)
    py_env = GymnasiumPyEnvironment(env, seed=seed)
    # The worker's agent of this graph, reset for ``seed``: its update is traced once per worker.
    agent = agent_cache.fresh_agent(py_env.time_step_spec(), py_env.action_spec(), params.ppo, seed)
    rejected = None
    if checkpoint is not None and (Path(checkpoint).exists() or Path(checkpoint).is_symlink()):
        loaded = _load(Path(checkpoint), key, _checkpoint_limit(agent.actor_net.get_weights()))
        if not isinstance(loaded, str):
            weights, frames, returns = loaded
            agent.actor_net.set_weights(weights)
            py_env.close()
            actor = agent_cache.detached_actor(agent, params.ppo, seed)
            return TrainedExpert(actor, key, frames, returns, reused=True)
        rejected = loaded
        print(
            f"opt-suite: expert checkpoint {checkpoint} not used: {rejected}; retraining it",
            file=sys.stderr,
        )
    log = ppo.train(py_env, agent, params.ppo, params.frames, progress, seed=seed)
    py_env.close()
    returns = np.array(log.episode_returns, dtype=np.float64)
    weights = agent.actor_net.get_weights()
    if checkpoint is not None:
        recorded = _recorded(Path(checkpoint)).get("weights")
        if rejected is not None and recorded not in (None, weights_digest(weights)):
            print(
                f"opt-suite: WARNING: the retrained expert {checkpoint} differs from the one "
                "first trained under this key (training was not reproducible); demonstrations "
                "computed from the old one are not those of the new one",
                file=sys.stderr,
            )
        _save(Path(checkpoint), key, weights, log.frames, returns)
    # A copy: the cached agent's actor is reset by the next run in this process.
    actor = agent_cache.detached_actor(agent, params.ppo, seed)
    return TrainedExpert(actor, key, log.frames, returns, rejected=rejected)


def weights_digest(weights: Sequence[np.ndarray]) -> str:
    """SHA-256 of the weight arrays' dtypes, shapes and bytes (not of a file: zip headers vary)."""
    digest = hashlib.sha256()
    for w in weights:
        array = np.ascontiguousarray(w)
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def _save(
    path: Path, key: str, weights: list[np.ndarray], frames: int, returns: np.ndarray
) -> None:
    """Write the checkpoint atomically (a crash never leaves half a file under the real name)."""
    buffer = io.BytesIO()
    arrays: dict[str, Any] = {f"weight_{i}": w for i, w in enumerate(weights)}
    np.savez_compressed(
        buffer,
        key=np.array(key),
        frames=np.array(frames),
        episode_returns=returns,
        num_weights=np.array(len(weights)),
        **arrays,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    data = buffer.getvalue()
    sidecar = {
        "key": key,
        "sha256": hashlib.sha256(data).hexdigest(),
        "weights": weights_digest(weights),
    }
    # The checkpoint first, then its sidecar: a crash between them leaves a checkpoint without
    # a digest, which is retrained, never one whose digest describes other bytes.
    _write_atomically(path, data)
    _write_atomically(_sidecar(path), json.dumps(sidecar, sort_keys=True).encode())


def _write_atomically(path: Path, data: bytes) -> None:
    """A crash never leaves half a file under the real name."""
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def sidecar_name(checkpoint_name: str) -> str:
    """The name of a checkpoint's sidecar of digests, beside it."""
    return checkpoint_name + ".sha256.json"


def _sidecar(path: Path) -> Path:
    return path.with_name(sidecar_name(path.name))


#: A sidecar holds a key and two hex digests: a few hundred bytes.
_SIDECAR_LIMIT = 1 << 16


def _checkpoint_limit(weights: Sequence[np.ndarray]) -> int:
    """The most bytes a checkpoint of these weights may have: the raw weights twice, plus 1 MiB.

    ``savez_compressed`` never makes weights much larger than raw (zip stores incompressible data
    as is); the episode returns and zip headers fit in the MiB.
    """
    return 2 * sum(int(np.asarray(w).nbytes) for w in weights) + (1 << 20)


def _recorded(path: Path) -> dict[str, Any]:
    """The checkpoint's sidecar, or ``{}`` when it is missing, not a regular file or unreadable."""
    try:
        recorded = json.loads(read_bounded(_sidecar(path), _SIDECAR_LIMIT, "expert sidecar"))
    except (InputError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def _load(path: Path, key: str, limit: int) -> tuple[list[np.ndarray], int, np.ndarray] | str:
    """The checkpoint's weights if both digests match its sidecar and it holds ``key``; else why.

    The sidecar's SHA-256 of the bytes catches a damaged or swapped file; its digest of the weights
    catches weights replaced under a recomputed file digest (e.g. zeroed): both must match.
    """
    recorded = _recorded(path)
    if not recorded or not recorded.get("weights"):
        return f"it has no readable digests ({_sidecar(path).name} is missing or damaged)"
    try:
        data = read_bounded(path, limit, "expert checkpoint")
    except InputError as exc:
        return f"it cannot be used ({exc})"
    if recorded.get("key") != key or hashlib.sha256(data).hexdigest() != recorded.get("sha256"):
        return "its bytes differ from the SHA-256 recorded when it was written (swapped or damaged)"
    try:
        with np.load(io.BytesIO(data)) as arrays:
            if str(arrays["key"]) != key:
                return "it holds another key"
            weights = [arrays[f"weight_{i}"] for i in range(int(arrays["num_weights"]))]
            loaded = weights, int(arrays["frames"]), arrays["episode_returns"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        return f"it cannot be read ({type(exc).__name__}: {exc})"
    if weights_digest(weights) != recorded["weights"]:
        return "its weights differ from the digest recorded when it was written (altered weights)"
    return loaded


def __getattr__(name: str) -> Any:
    # The sampling moved to demonstrations/ (0.3.0): its old names answer here, with a warning.
    from opt_suite.moved import moved_name

    return moved_name(__name__, name)
