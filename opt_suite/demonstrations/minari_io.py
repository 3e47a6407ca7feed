"""Minari datasets (Farama's offline-RL format) as a demonstration source, and export to one.

Import (``demonstrations: {source: minari, params: {dataset: ...}}``): ``dataset`` is the path of
a dataset folder (the one holding ``data/``, or ``data/`` itself) or the id of a dataset in the
local Minari store (``MINARI_DATASETS_PATH``, default ``~/.minari/datasets``; never downloaded).
Its observation and action spaces must equal the family's. An episode names its task through
``options["task_id"]`` in its metadata (what :func:`export_demonstrations` writes); episodes
without one are given to the train tasks in order, ``trajectories_per_task`` each. Every episode
used must end in a termination (a goal), within ``demonstrations.max_steps`` steps.

Export (``opt-suite export-demos RUN_DIR``): each seed's stored demonstrations become one dataset,
``<spec name>/demos-seed<seed>-v0``, written whole into a temporary folder and renamed into place,
with the manifest :data:`EXPORT_MANIFEST` (the SHA-256 of every file written). A re-export replaces
a dataset folder only when its manifest proves the suite wrote all of it, unchanged
(:mod:`opt_suite.export_folder`); a folder holding anything else, or a symlink, is refused and
nothing is deleted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import stat
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from opt_suite.demonstrations.base import DemonstrationError, DemonstrationSource, SourceContext
from opt_suite.export_folder import replace_problem, swap_in, write_manifest
from opt_suite.families.base import TaskFamily
from opt_suite.files_guard import (
    InputError,
    file_kind,
    output_dir,
    read_bounded,
    unlinked_folder,
)
from opt_suite.params import param
from opt_suite.trajectory import Trajectory

__all__ = [
    "MAX_METADATA_BYTES",
    "MinariParams",
    "MinariSource",
    "check_dataset_files",
    "EXPORT_MANIFEST",
    "dataset_id",
    "export_demonstrations",
    "export_problem",
]

MAX_METADATA_BYTES = 16 << 20  # a dataset's metadata.json is a few kB (spaces, ids, counts)
EXPORT_MANIFEST = "opt-suite-export.json"  # beside data/: Minari reads only data/
EXPORT_FORMAT = "opt-suite minari export 1"


@dataclasses.dataclass(frozen=True)
class MinariParams:
    """Which Minari dataset to read."""

    dataset: str = param(
        doc="path of a Minari dataset folder, or the id of a dataset in the local Minari store"
    )


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    # Minari warns about missing author metadata and env specs; the data is ours, not a release.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def check_dataset_files(data: Path) -> None:
    """Refuse a dataset folder Minari would hang or run out of memory on.

    Minari reads ``metadata.json`` whole and opens every episode file it finds: a FIFO there
    blocks forever, a link to ``/dev/zero`` fills memory. Every entry must be a folder or a regular
    file, and the metadata at most :data:`MAX_METADATA_BYTES`.

    Raises:
        InputError: naming the offending file.
    """
    read_bounded(data / "metadata.json", MAX_METADATA_BYTES, "Minari metadata")
    for root, dirs, files in os.walk(data):
        for name in files + [d for d in dirs if (Path(root) / d).is_symlink()]:
            entry = Path(root) / name
            try:
                mode = entry.stat().st_mode
            except OSError as exc:
                raise InputError(f"{entry}: cannot read it ({exc.strerror or exc})") from None
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise InputError(
                    f"{entry}: a Minari dataset file is {file_kind(mode)}, expected a regular file"
                )


def _open(dataset: str) -> Any:
    import minari

    where = f"demonstrations.params.dataset {dataset!r}"
    path = Path(dataset).expanduser()
    try:
        with _quiet():
            if path.is_dir():
                data = path / "data" if (path / "data").is_dir() else path
                check_dataset_files(data)
                return minari.MinariDataset(data)
            local = minari.storage.get_dataset_path(dataset) / "data"
            if local.is_dir():
                check_dataset_files(local)
            if dataset in minari.list_local_datasets():
                return minari.load_dataset(dataset)
    except InputError as exc:
        raise DemonstrationError(f"{where}: {exc}") from None
    except Exception as exc:  # a corrupt or truncated dataset: h5py/json errors
        raise DemonstrationError(f"{where}: not a readable Minari dataset ({exc})") from exc
    raise DemonstrationError(
        f"{where}: no such dataset folder, and no local Minari dataset of that id (local: "
        f"{', '.join(sorted(minari.list_local_datasets())) or 'none'})"
    )


class MinariSource(DemonstrationSource):
    """Demonstrations read from a Minari dataset (bring your own data)."""

    name: ClassVar[str] = "minari"
    description: ClassVar[str] = "episodes of a Minari dataset (Farama's offline-RL format)"
    Params: ClassVar[type] = MinariParams

    def collect(self, context: SourceContext) -> list[Trajectory]:
        """``trajectories_per_task`` episodes per train task (see the module docstring)."""
        family, train_tasks = context.family, context.train_tasks
        trajectories_per_task, max_steps = context.trajectories_per_task, context.max_steps
        dataset = _open(self.params.dataset)
        where = f"Minari dataset {self.params.dataset!r}"
        for kind in ("observation", "action"):
            theirs, ours = getattr(dataset, f"{kind}_space"), getattr(family, f"{kind}_space")
            if theirs != ours:
                raise DemonstrationError(
                    f"{where}: its {kind} space {theirs} disagrees with family {family.name!r}'s "
                    f"{ours}"
                )
        ids = [task.task_id for task in train_tasks]
        chosen: dict[str, list[Any]] = {task_id: [] for task_id in ids}
        unnamed = []
        with _quiet():
            metadata = list(dataset.storage.get_episode_metadata(dataset.episode_indices))
            episodes = list(dataset.iterate_episodes())
        for meta, episode in zip(metadata, episodes, strict=True):
            task_id = (meta.get("options") or {}).get("task_id")
            if task_id in chosen:
                chosen[task_id].append(episode)
            elif task_id is None:
                unnamed.append(episode)
        for task_id in ids:  # episodes without a task go to the train tasks in order
            while len(chosen[task_id]) < trajectories_per_task and unnamed:
                chosen[task_id].append(unnamed.pop(0))
        demos = []
        for task_id in ids:
            if len(chosen[task_id]) < trajectories_per_task:
                raise DemonstrationError(
                    f"{where}: {len(chosen[task_id])} episodes for train task {task_id}, expected "
                    f"demonstrations.trajectories_per_task = {trajectories_per_task}"
                )
            for episode in chosen[task_id][:trajectories_per_task]:
                demos.append(_trajectory(episode, task_id, max_steps, where))
        return demos


def _trajectory(episode: Any, task_id: str, max_steps: int, where: str) -> Trajectory:
    steps = len(episode.actions)
    if steps == 0 or not bool(episode.terminations[-1]):
        raise DemonstrationError(
            f"{where}: episode {episode.id} for {task_id} does not reach a goal (its last step "
            "is not a termination)"
        )
    if steps > max_steps:
        raise DemonstrationError(
            f"{where}: episode {episode.id} for {task_id} has {steps} steps, more than "
            f"demonstrations.max_steps = {max_steps}"
        )
    return Trajectory(
        task_id,
        np.asarray(episode.observations),
        np.asarray(episode.actions, dtype=np.int64),
        np.asarray(episode.rewards, dtype=np.float64),
    )


def dataset_id(spec_name: str, seed: int) -> str:
    """The id an exported dataset gets: ``<spec name>/demos-seed<seed>-v0``."""
    return f"{spec_name}/demos-seed{seed}-v0"


def export_problem(out: Path, name: str) -> str | None:
    """Why dataset ``name`` must not be (re)written under ``out`` (one line), or None.

    The dataset folder must be absent, empty, or an earlier export its manifest proves unchanged;
    neither it nor the spec's folder above it may be a symlink (the export would land, and an old
    one be deleted, wherever the link points).
    """
    final = Path(out) / name
    try:
        for folder in reversed(final.relative_to(out).parents[:-1]):
            unlinked_folder(Path(out) / folder, "a folder of the export")
    except InputError as exc:
        return f"{exc}; nothing was deleted"
    if final.is_symlink():
        return f"{final}: the dataset folder is a symlink; nothing was deleted: give another --out"
    problem = replace_problem(final, EXPORT_MANIFEST, EXPORT_FORMAT)
    return None if problem is None else f"{problem}; nothing was deleted"


def export_demonstrations(
    trajectories: Sequence[Trajectory],
    family: TaskFamily,
    out: Path,
    name: str,
    description: str = "",
) -> Path:
    """Write ``trajectories`` as the Minari dataset ``name`` under ``out``; returns its folder.

    Each episode records its task in ``options["task_id"]`` (read back by :class:`MinariSource`).
    The dataset is built in a temporary folder next to its destination and renamed into place, so
    an interrupted export leaves nothing half-written; it replaces only an earlier export
    (:func:`export_problem`).

    Raises:
        InputError: the dataset's folder is neither absent, empty nor an unchanged earlier export.
    """
    import minari
    from minari.data_collector import EpisodeBuffer

    if not trajectories:
        raise DemonstrationError(f"no demonstrations to export as {name}")
    buffers = [
        EpisodeBuffer(
            id=i,
            options={"task_id": t.task_id},
            observations=list(t.observations),
            actions=list(t.actions),
            rewards=[float(r) for r in t.rewards],
            terminations=[False] * (len(t) - 1) + [True],
            truncations=[False] * len(t),
        )
        for i, t in enumerate(trajectories)
    ]
    # Absolute: Minari joins the dataset path to MINARI_DATASETS_PATH, and a relative one twice.
    out = output_dir(out, "the export folder").resolve()
    final = out / name
    problem = export_problem(out, name)
    if problem is not None:
        raise InputError(problem)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=out))
    saved = os.environ.get("MINARI_DATASETS_PATH")
    try:
        os.environ["MINARI_DATASETS_PATH"] = str(staging)
        with _quiet():
            minari.create_dataset_from_buffers(
                name,
                buffers,
                observation_space=family.observation_space,
                action_space=family.action_space,
                algorithm_name="opt-suite demonstrations",
                author="opt-suite",
                description=description or f"demonstrations exported by opt-suite ({name})",
                # Minari JPEG-encodes image observations by default: lossy, and it cannot encode
                # Atari's stacked frames at all. Demonstrations must read back bit-identical.
                jpeg_encoding=False,
            )
        write_manifest(staging / name, EXPORT_MANIFEST, EXPORT_FORMAT, {"dataset": name})
        final.parent.mkdir(parents=True, exist_ok=True)
        swap_in(staging / name, final)
    finally:
        if saved is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = saved
        shutil.rmtree(staging, ignore_errors=True)
    return final
