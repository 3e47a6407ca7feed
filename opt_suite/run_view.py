"""One way to reopen a run directory: :class:`RunView`, and its one error type.

Every command that reads a finished run (``report``, ``compare``, ``diagnose``, ``option-usage``,
``show-options``, ``export-tensorboard``, ``export-demos``) and the results pages' ``collect.py``
open it here: the directory, the spec chosen by name or hash prefix (default: the latest run's),
the stored spec parsed and checked against its hash, its components resolved, the plan rebuilt
for the chosen seeds, and the stored cells compared with the planned ones. Whatever is wrong is a
:class:`RunViewError`, one line naming the directory, which the CLI prints with exit status 2.

The view sits above the store (it reads through :class:`opt_suite.store.ResultsStore`) and the
runner (it re-plans with :func:`opt_suite.runner.protocol.plan_spec`), below ``report/`` and
``cli/``. Parsing the spec and re-planning import the plugins, so they happen only when asked:
``report`` and ``compare`` read rows and never load a family.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from opt_suite.stages import Stage
from opt_suite.store import DB_NAME, ResultsStore, RunInfo, StoreError
from opt_suite.store.reader import select_spec
from opt_suite.store.schema import StoreDatabaseError

__all__ = [
    "RunView",
    "RunViewError",
    "CellCheck",
    "MAX_SEED_INDEX",
    "parse_seeds",
    "select_methods_and_seeds",
    "run_provenance",
]

MAX_SEED_INDEX = 2**31 - 1  # stored as SQLite integers, spawned into SeedSequences

RERUN = "rerun the spec"  # what a user does when the stored run and the current code disagree


class RunViewError(StoreError):
    """A run directory that cannot be read as asked: one line naming it (exit status 2).

    A :class:`opt_suite.store.StoreError` (hence a :class:`opt_suite.files_guard.InputError`), so
    every command's existing handler prints it as the one line it is.
    """


def parse_seeds(text: str) -> list[int]:
    """``"0-2,5"`` -> ``[0, 1, 2, 5]``.

    Raises:
      ValueError: with a message naming the bad part.
    """
    from opt_suite.spec.schema import MAX_SEEDS

    seeds: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        low, dash, high = part.partition("-")
        try:
            first, last = (int(low), int(high)) if dash else (int(part), int(part))
        except ValueError:
            raise ValueError(
                f"--seeds: {part!r} is not a seed index or range (expected e.g. '0-4' or '0,2,7')"
            ) from None
        if first < 0 or last < first:
            raise ValueError(f"--seeds: {part!r} is not a non-empty range of indices >= 0")
        if last > MAX_SEED_INDEX:
            raise ValueError(f"--seeds: {part!r}: seed indices go up to {MAX_SEED_INDEX}")
        if last - first + 1 + len(seeds) > MAX_SEEDS:
            raise ValueError(
                f"--seeds: {text!r} names more than {MAX_SEEDS} seeds (evaluation.seeds allows"
                f" at most {MAX_SEEDS}; run large sweeps in slices, e.g. '0-99' then '100-199')"
            )
        seeds.update(range(first, last + 1))
    return sorted(seeds)


def select_methods_and_seeds(
    methods: list[str], seeds: list[int], wanted_methods: list[str] | None, wanted_seeds: str | None
) -> tuple[list[str], list[int]]:
    """The run's method entries and seeds that ``--methods`` / ``--seeds`` choose (default: all).

    Raises:
      ValueError: a method entry or seed the run does not have, or a bad ``--seeds`` text.
    """
    for name in wanted_methods or []:
        if name not in methods:
            raise ValueError(f"--methods {name!r}: the run has {', '.join(methods)}")
    if wanted_seeds:
        chosen = parse_seeds(wanted_seeds)
        absent = sorted(set(chosen) - set(seeds))
        if absent:
            raise ValueError(f"--seeds: the run has no seed {absent} (it has {seeds})")
        seeds = chosen
    return [m for m in methods if not wanted_methods or m in wanted_methods], seeds


@dataclasses.dataclass(frozen=True)
class CellCheck:
    """Planned cells of some stages, methods and seeds against what the store holds.

    Attributes:
      planned: the cells the current code plans from the stored spec, in plan order.
      done: ids of the planned cells that the store holds as done.
      missing: planned cells the store does not hold as done, with their state (``not run``,
        ``failed``, ``missing`` — begun, never finished).
      replaced: planned cells whose (stage, method, seed) the store holds as done under another
        cell id (the code changed since), with the stored id.
      unplanned: ids of done cells the store holds for these stages, methods and seeds that the
        current code does not plan.
    """

    planned: tuple[Any, ...]
    done: frozenset[str]
    missing: tuple[tuple[Any, str], ...]
    replaced: tuple[tuple[Any, str], ...]
    unplanned: frozenset[str]


class RunView:
    """A run directory opened for reading: one spec's runs in it, parsed and re-planned on demand.

    Args:
      directory: the ``--out`` directory of ``opt-suite run``.
      selector: a spec's name or a prefix of its hash (``--spec``); None: the latest run's spec.
      spec_hash: a full spec hash instead of ``selector`` (a sweep's variant).
      remedy: what the user should do when the stored run and the current code disagree, the
        tail of those messages (e.g. "rerun the spec, then diagnose").

    Raises:
      RunViewError: no such directory, no results store, no run, a damaged store, or a selector
        that names no spec or several.
    """

    def __init__(
        self,
        directory: str | Path,
        selector: str | None = None,
        *,
        spec_hash: str | None = None,
        remedy: str = RERUN,
    ) -> None:
        self.directory = Path(directory)
        self.remedy = remedy
        if not self.directory.is_dir():
            raise RunViewError(f"{self.directory}: no such directory")
        try:
            if spec_hash is None and selector is not None:
                spec_hash = select_spec(self.directory, selector)
            self.store = ResultsStore(self.directory, spec_hash)
            try:
                self.info: RunInfo = self.store.run()
                self._recorded = _recorded_specs(self.store.runs())
            except BaseException:
                self.store.close()
                raise
        except RunViewError:
            raise
        except StoreDatabaseError as exc:
            raise RunViewError(
                f"the results store {self.directory / DB_NAME} is damaged ({exc}): rerun"
                " `opt-suite run SPEC --out DIR` into a fresh directory"
            ) from None
        except StoreError as exc:
            raise RunViewError(str(exc)) from None
        self._spec: Any = None
        self._components: Any = None
        self._plans: dict[tuple[int, ...], Any] = {}

    def close(self) -> None:
        """Close the store."""
        self.store.close()

    def __enter__(self) -> RunView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- which spec ---------------------------------------------------------------------------
    @property
    def label(self) -> str:
        """The viewed spec as people name it: ``fourrooms-quick (hash 395dea5a1b2c)``."""
        return f"{self.info.spec_name} (hash {self.info.spec_hash[:12]})"

    def others(self) -> list[str]:
        """Labels of the other specs recorded in the directory, oldest latest run first."""
        return [
            f"{name} (hash {hash_[:12]})"
            for hash_, name in self._recorded
            if hash_ != self.info.spec_hash
        ]

    def which(self) -> str | None:
        """A line saying which spec is read when the directory holds several; None otherwise."""
        others = self.others()
        if not others:
            return None
        return (
            f"{self.directory} holds {len(others) + 1} specs; reading {self.label} (choose another"
            f" with --spec NAME_OR_HASH; also recorded: {'; '.join(others)})"
        )

    # -- the spec, its components, its plan -------------------------------------------------
    def spec(self) -> Any:
        """The viewed run's stored spec as a typed ``Spec``, checked against its recorded hash.

        Raises:
          RunViewError: the stored spec no longer parses, or parses to another hash (the spec
            format or a plugin's params changed since the run).
        """
        if self._spec is None:
            from opt_suite.spec import SpecError, parse_spec, spec_hash

            where = f"{self.directory} (the spec stored by run {self.info.run_id})"
            try:
                spec = parse_spec(self.store.spec_yaml(), where)
            except SpecError as exc:
                raise RunViewError(
                    f"{self.directory}: the stored spec does not load ({exc.problems[0]}):"
                    f" {self.remedy}"
                ) from None
            if spec_hash(spec) != self.info.spec_hash:
                raise RunViewError(
                    f"{self.directory}: the stored spec no longer hashes to"
                    f" {self.info.spec_hash[:12]} (the spec format changed since the run):"
                    f" {self.remedy}"
                )
            self._spec = spec
        return self._spec

    def components(self) -> Any:
        """The family, method, learner and source classes of the stored spec.

        Raises:
          RunViewError: a component is no longer registered or its module fails to import.
        """
        if self._components is None:
            from opt_suite.registry import RegistryError
            from opt_suite.runner.planning import resolve_components

            try:
                self._components = resolve_components(self.spec())
            except RegistryError as exc:
                raise RunViewError(f"{self.directory}: {exc}: {self.remedy}") from None
        return self._components

    def plan(self, seeds: Sequence[int]) -> Any:
        """The plan the current code builds from the stored spec for ``seeds``."""
        key = tuple(seeds)
        if key not in self._plans:
            from opt_suite.runner.planning import plan_spec

            self._plans[key] = plan_spec(self.spec(), list(seeds), self.components())[3]
        return self._plans[key]

    def select(
        self, methods: list[str] | None = None, seeds: str | None = None
    ) -> tuple[list[str], list[int]]:
        """The run's method entries and seeds that ``--methods`` / ``--seeds`` choose.

        Raises:
          RunViewError: a method entry or seed the run does not have, or a bad ``--seeds`` text.
        """
        try:
            return select_methods_and_seeds(
                self.store.methods(), self.store.seeds(), methods, seeds
            )
        except ValueError as exc:
            raise RunViewError(str(exc)) from None

    # -- stored versus planned -------------------------------------------------------------------
    def check_cells(
        self, stages: Iterable[Stage], methods: Iterable[str], seeds: Sequence[int]
    ) -> CellCheck:
        """Planned cells of ``stages``, ``methods`` and ``seeds`` against the stored ones.

        Demonstrations cells belong to no method: they are chosen by stage and seed alone.
        """
        stages, methods = set(stages), set(methods)

        def wanted(stage: Any, method: str | None, seed: int) -> bool:
            return (
                stage in stages
                and seed in seeds
                and (stage == Stage.DEMONSTRATIONS or method in methods)
            )

        planned = tuple(c for c in self.plan(seeds).cells if wanted(c.stage, c.method, c.seed))
        stored = [c for c in self.store.cells() if wanted(c.kind, c.method, c.seed)]
        done_ids = {c.cell_id for c in stored if c.status == "done"}
        by_slot: dict[tuple[Any, ...], Any] = {}
        for c in stored:  # a slot's done cell wins over a failed one of the same slot
            slot = (c.kind, c.method, c.seed)
            if slot not in by_slot or c.status == "done":
                by_slot[slot] = c
        planned_ids = {c.cell_id for c in planned}
        missing, replaced = [], []
        for cell in planned:
            if cell.cell_id in done_ids:
                continue
            have = by_slot.get((cell.kind, cell.method, cell.seed))
            if have is not None and have.status == "done":
                replaced.append((cell, have.cell_id))
            else:
                missing.append((cell, "not run" if have is None else have.status))
        return CellCheck(
            planned=planned,
            done=frozenset(done_ids & planned_ids),
            missing=tuple(missing),
            replaced=tuple(replaced),
            unplanned=frozenset(done_ids - planned_ids),
        )

    def require_done(
        self, stages: Iterable[Stage], methods: Iterable[str], seeds: Sequence[int]
    ) -> CellCheck:
        """:meth:`check_cells`, raising unless every planned cell is stored done as planned.

        Raises:
          RunViewError: the first planned cell not done ("the run is incomplete"), or stored
            under another id than the current code plans (the code changed since).
        """
        check = self.check_cells(stages, methods, seeds)
        missing, replaced = dict(check.missing), dict(check.replaced)
        for cell in check.planned:  # the first problem in plan order
            if cell in missing:
                raise RunViewError(
                    f"{self.directory}: {cell.label} is {missing[cell]}: the run is incomplete"
                )
            if cell in replaced:
                raise RunViewError(
                    f"{self.directory}: {cell.label} was stored as cell {replaced[cell][:12]},"
                    f" the current code plans {cell.cell_id[:12]}: {self.remedy}"
                )
        return check


def _recorded_specs(runs: Sequence[RunInfo]) -> list[tuple[str, str]]:
    """(spec hash, name) of every spec run in a directory, ordered by its latest run."""
    latest: dict[str, tuple[int, str]] = {}
    for r in runs:
        latest[r.spec_hash] = (r.run_id, r.spec_name)
    return [(h, name) for h, (_, name) in sorted(latest.items(), key=lambda kv: kv[1][0])]


def run_provenance(directory: str | Path) -> list[dict[str, object]]:
    """Provenance of every run recorded in ``directory`` (a sweep records one per variant).

    What the results pages publish beside their numbers (``docs/results/*/collect.py``).

    Raises:
      RunViewError: no results store, or a damaged one.
    """
    with RunView(directory) as view:
        runs = view.store.runs()
    return [
        {
            "spec": r.spec_name,
            "spec_hash": r.spec_hash,
            "git_commit": r.git_commit,
            "versions": r.versions,
            "argv": r.argv,
            "workers": r.workers,
            "seeds": r.seeds,
            "status": r.status,
            "wall_seconds": None if r.finished is None else round(r.finished - r.started, 1),
            "cells": {
                "total": r.cells_total,
                "reused": r.cells_reused,
                "computed": r.cells_computed,
                "failed": r.cells_failed,
            },
        }
        for r in runs
    ]
