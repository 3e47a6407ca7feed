"""A rerun of the same spec by other code supersedes the older cells; it never adds them twice.

Cell ids name the versions of the packages that provide the family, method and learner
(runner/versions.py). Reinstalling a plugin at a new version and rerunning the same spec into the
same directory computes new cells; the report's view spans every run of that spec (so that
`--seeds 5-9` after `--seeds 0-4` adds seeds), and must take each (kind, method, seed) from the
latest run that planned it, or every episode and curve would be counted twice.
"""

from __future__ import annotations

from runner_support import fakes, numbers, run_cli, write_spec  # noqa: F401  (fixture)

from opt_suite.runner import plan, references
from opt_suite.store import ResultsStore


def test_rerun_by_new_code_replaces_old_cells_in_every_view(tmp_path, monkeypatch, fakes):  # noqa: F811
    spec = write_spec(tmp_path, seeds=2)
    clean, out = tmp_path / "clean", tmp_path / "out"
    assert run_cli(spec, "--out", clean, "--workers", "0", "--quiet", "--no-report") == 0
    assert run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    with ResultsStore(out) as store:
        first_cells = {c.cell_id for c in store.cells()}

    real = plan.provider
    monkeypatch.setattr(plan, "provider", lambda cls: f"{real(cls)} (reinstalled)")
    monkeypatch.setattr(references, "provider", lambda cls: f"{real(cls)} (reinstalled)")
    assert run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0

    with ResultsStore(out) as store:
        cells = store.cells()
        assert len(store.runs()) == 2
    assert {c.cell_id for c in cells}.isdisjoint(first_cells), "new code must get new cells"
    assert len(cells) == len(first_cells)
    assert numbers(out) == numbers(clean)


class _WriterBetweenQueries:
    """The reader's connection, with another process's commit between its first and second query."""

    def __init__(self, conn, commit):
        self._conn, self._commit, self.queries = conn, commit, 0

    def __getattr__(self, name):
        return getattr(self._conn, name)

    def execute(self, *args):
        cursor = self._conn.execute(*args)
        if "FROM episodes e" in args[0]:
            self._commit()
        return cursor


def test_episodes_read_while_a_run_finishes_a_cell_are_consistent(tmp_path, fakes):  # noqa: F811
    import sqlite3

    spec = write_spec(tmp_path, seeds=2)
    out = tmp_path / "out"
    assert run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    with ResultsStore(out) as store:
        every = store.episodes()
        late = next(c for c in store.cells() if c.kind == "evaluation").cell_id
    writer = sqlite3.connect(out / "results.sqlite", isolation_level=None)
    writer.execute("UPDATE cells SET status = 'running' WHERE cell_id = ?", (late,))

    def finish_the_cell():  # what a live run does: the cell's done row lands mid-read
        writer.execute("UPDATE cells SET status = 'done' WHERE cell_id = ?", (late,))

    with ResultsStore(out) as store:
        store._conn = _WriterBetweenQueries(store._conn, finish_the_cell)
        seen = store.episodes()  # the snapshot before the cell finished: no false "corrupted"
    writer.close()
    assert 0 < len(seen) < len(every)
    with ResultsStore(out) as store:
        assert store.episodes() == every
