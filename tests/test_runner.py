"""``opt-suite run`` end to end with cheap fake methods: storing, resuming, reusing, seeds."""

from __future__ import annotations

import io

import numpy as np
import pytest
from runner_support import (
    DEFAULT_METHODS,
    fakes,  # noqa: F401  (fixture)
    method,
    numbers,
    run_cli,
    write_spec,
)

from opt_suite.runner.cells import CPU_SECONDS_INFO
from opt_suite.runner.progress import Progress, format_duration
from opt_suite.store import ResultsStore

pytestmark = pytest.mark.usefixtures("fakes")


def test_run_stores_every_cell_and_a_rerun_computes_nothing(tmp_path, capsys):
    spec = write_spec(tmp_path)
    out = tmp_path / "out"
    assert run_cli(spec, "--out", out, "--workers", "0", "--no-report") == 0
    err = capsys.readouterr().err
    # 4 discoveries, 12 evaluations and one references cell per (seed, test task)
    assert "22 cells (0 reused, 22 computed) all done" in err
    assert str(out / "results.sqlite") in err

    with ResultsStore(out) as store:
        assert store.methods() == ["none", "rand"]
        assert store.seeds() == [0, 1]
        assert [c.status for c in store.cells()] == ["done"] * 22
        arrays = store.episode_arrays("rand")
        assert arrays.returns.shape == (2, 3, 10) and np.isfinite(arrays.returns).all()
        # fake learner: returns ~ N(task index, 1) — the task axis is the right one
        assert arrays.returns.mean(axis=(0, 2)) == pytest.approx([0, 1, 2], abs=0.9)
        # a learner that logs no frames spent one frame per primitive step
        np.testing.assert_array_equal(arrays.frames, np.cumsum(arrays.steps, axis=-1))
        assert store.option_set("rand", 1).mu.shape == (2, 5, 2)
        assert len(store.option_set("none", 0)) == 0
        assert {c.name for c in store.curves("rand")} == {"loss", "extra"}
        run = store.run()
        assert run.status == "done" and run.cells_computed == 22 and run.git_commit
        assert [t.task_id for t in store.tasks("test")] == [f"chain-5/test/{i}" for i in range(3)]
        assert store.spec().name == "runner-toy"
    first = numbers(out)

    assert run_cli(spec, "--out", out, "--workers", "0", "--no-report") == 0
    err = capsys.readouterr().err
    assert "resuming: 22 of 22 cells already done" in err and "(22 reused, 0 computed)" in err
    assert numbers(out) == first
    assert [r.cells_computed for r in ResultsStore(out).runs()] == [22, 0]


def test_changed_spec_reuses_the_unchanged_cells(tmp_path, capsys):
    out = tmp_path / "out"
    assert run_cli(write_spec(tmp_path), "--out", out, "--workers", "0", "--no-report") == 0
    before = numbers(out)
    capsys.readouterr()
    methods = (*DEFAULT_METHODS[:1], method("rand", num_options=3), method("new", num_options=1))
    assert (
        run_cli(write_spec(tmp_path, methods), "--out", out, "--workers", "0", "--no-report") == 0
    )
    err = capsys.readouterr().err
    # the references cells are reused too: their key holds no method
    assert "the spec changed" in err and "reusing 14 of 30 cells" in err
    assert "(14 reused, 16 computed)" in err
    episodes, _, options = numbers(out)
    # the unchanged method's numbers are the same rows as before; the report sees the new spec
    assert [e for e in episodes if e[0] == "none"] == [e for e in before[0] if e[0] == "none"]
    assert ResultsStore(out).methods() == ["none", "rand", "new"]
    assert options[("rand", 0)][0] != before[2][("rand", 0)][0]


def test_demonstrations_are_collected_once_per_seed_and_stored(tmp_path, capsys):
    methods = (method("demo-a", "fake_demo_options"), method("plain", num_options=1))
    spec, out = write_spec(tmp_path, methods, seeds=1), tmp_path / "out"
    assert run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    with ResultsStore(out) as store:
        kinds = [c.kind for c in store.cells()]
        assert kinds.count("demonstrations") == 1
        demos = store.demonstrations(0)
        assert len(demos) == 2 and {d.task_id for d in demos} == {
            "chain-5/train/0",
            "chain-5/train/1",
        }
        # only the method whose discovery_budget says it reads them receives them
        infos = {
            c.method: {k: v for k, v in c.info.items() if k != CPU_SECONDS_INFO}  # measured
            for c in store.cells()
            if c.kind == "discovery"
        }
        # ... and is charged their steps (report/discovery_cost.py)
        steps = sum(len(d.actions) for d in demos)
        assert infos == {
            "demo-a": {"budget": 0, "demos": 2, "demonstration_steps": steps},
            "plain": {"budget": 0, "demos": 0},
        }
    # a second demonstration-using entry reuses the stored demonstrations
    more = (*methods, method("demo-b", "fake_demo_options", num_options=1))
    capsys.readouterr()
    assert run_cli(write_spec(tmp_path, more, seeds=1), "--out", out, "--workers", "0") == 0
    assert "(1 demonstrations, 2 discovery, 6 evaluation, 3 references)" in capsys.readouterr().err


def test_a_subset_of_seeds_gives_the_same_numbers_as_the_full_run(tmp_path):
    full, part = tmp_path / "full", tmp_path / "part"
    spec = write_spec(tmp_path, seeds=3)
    assert run_cli(spec, "--out", full, "--workers", "0", "--no-report", "--quiet") == 0
    assert run_cli(spec, "--out", part, "--workers", "0", "--seeds", "2", "--quiet") == 0
    full_rows = [e for e in numbers(full)[0] if e[1] == 2]
    assert numbers(part)[0] == full_rows
    assert ResultsStore(part).seeds() == [2]


def test_worker_count_does_not_change_results(tmp_path):
    spec = write_spec(tmp_path)
    assert run_cli(spec, "--out", tmp_path / "a", "--workers", "0", "--quiet", "--no-report") == 0
    assert run_cli(spec, "--out", tmp_path / "b", "--workers", "2", "--quiet", "--no-report") == 0
    assert numbers(tmp_path / "a") == numbers(tmp_path / "b")
    assert ResultsStore(tmp_path / "b").run().workers == 2


def test_the_run_writes_the_reports(tmp_path, capsys):
    out = tmp_path / "out"
    assert run_cli(write_spec(tmp_path), "--out", out, "--workers", "0", "--quiet") == 0
    assert (out / "index.html").exists() and (out / "spec.yaml").exists()
    assert str(out / "index.html") in capsys.readouterr().err


def test_bad_seeds_and_workers_are_clear_errors(tmp_path, capsys):
    spec = write_spec(tmp_path)
    assert run_cli(spec, "--seeds", "2-x") == 2
    assert "--seeds: '2-x' is not a seed index or range" in capsys.readouterr().err
    assert run_cli(spec, "--seeds", "3-1") == 2
    assert run_cli(spec, "--workers", "-1") == 2
    assert "--workers must be >= 0" in capsys.readouterr().err
    assert run_cli(spec, "--address", "x:1") == 2
    assert "--address needs --backend ray" in capsys.readouterr().err


def test_progress_redraws_in_place_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    stream = Tty()
    progress = Progress(total=4, stream=stream)
    progress.update("discovery", "2 running")
    progress.done = 2
    progress.update("evaluation", "1 running")
    progress.message("FAILED x")
    progress.close()
    text = stream.getvalue()
    assert text.startswith("\r[0/4 cells] | discovery (2 running) | elapsed 0s | ETA ?")
    assert "\r[2/4 cells] | evaluation (1 running)" in text and "FAILED x\n" in text
    assert "\n" not in text.split("FAILED x\n")[0].replace("\r", "")  # no stray lines


def test_progress_prints_lines_when_not_a_terminal():
    stream = io.StringIO()
    progress = Progress(total=10, reused=4, stream=stream, interval=3600)
    progress.update("discovery", "1 running")
    progress.update("discovery", "2 running")  # same phase, interval not passed: no line
    progress.done = 7
    progress.update("evaluation")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and lines[1].startswith("[7/10 cells] | evaluation |")
    # 3 cells computed in the elapsed time, 3 left: ETA ~ elapsed
    assert progress.eta() == pytest.approx(0.0, abs=1.0)
    assert [format_duration(s) for s in (5, 75, 3700)] == ["5s", "1m15s", "1h01m"]


def test_reusing_cells_computed_by_other_code_is_pointed_out(tmp_path, capsys, monkeypatch):
    import opt_suite.runner.protocol as protocol

    spec, out = write_spec(tmp_path), tmp_path / "out"
    assert run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    real = protocol.collect_provenance
    monkeypatch.setattr(protocol, "collect_provenance", lambda: {**real(), "git_commit": "abc"})
    capsys.readouterr()
    assert run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    err = capsys.readouterr().err
    assert "note: the code changed since the last run" in err and "-> abc)" in err
    assert ResultsStore(out).run().git_commit == "abc"


def test_the_phase_names_what_is_in_flight():
    from opt_suite.runner.plan import Cell
    from opt_suite.runner.scheduler import _phase
    from opt_suite.stages import Stage

    def cell(kind):
        return Cell(kind, Stage(kind), 0, "m", 0, (), {})

    inflight = {"a": cell("evaluation"), "b": cell("discovery"), "c": cell("evaluation")}
    assert _phase(inflight, 2, 1) == (
        "discovery + evaluation",
        "2 running, 1 queued, 1 claimed by another runner",
    )
    assert _phase({}, 2, 3) == ("waiting", "3 claimed by another runner")
    assert _phase({"a": cell("demonstrations")}, 0, 0) == ("demonstrations", "1 running")


def test_seeds_run_separately_add_up_in_the_store(tmp_path):
    spec, out = write_spec(tmp_path, seeds=3), tmp_path / "out"
    assert (
        run_cli(spec, "--out", out, "--workers", "0", "--seeds", "0", "--quiet", "--no-report") == 0
    )
    assert run_cli(spec, "--out", out, "--workers", "0", "--seeds", "1-2", "--quiet") == 0
    assert run_cli(spec, "--out", tmp_path / "all", "--workers", "0", "--quiet", "--no-report") == 0
    assert ResultsStore(out).seeds() == [0, 1, 2]
    assert numbers(out) == numbers(tmp_path / "all")
