"""No failure ends in exit 0: a cell whose code raises SystemExit or KeyboardInterrupt has failed.

An env that calls ``sys.exit(0)`` once made ``run`` exit 0 with no summary and the cell missing:
the exception unwound the runner (``--workers 0``) or came back from a worker's future and was
re-raised there (``--workers 2``).
"""

from __future__ import annotations

import sqlite3

import pytest
from runner_support import fakes, method, run_cli, write_spec  # noqa: F401  (fixture)


@pytest.mark.parametrize(
    ("raised", "workers"),
    [("SystemExit", "0"), ("KeyboardInterrupt", "0"), ("SystemExit", "2")],
)
def test_a_cell_raising_systemexit_or_keyboardinterrupt_fails_and_run_exits_nonzero(
    fakes,  # noqa: F811
    tmp_path,
    capsys,
    raised,
    workers,
):
    methods = (method("none", num_options=0), method("bad", raise_base=raised))
    spec = write_spec(tmp_path, methods=methods, seeds=1, test=1)
    out = tmp_path / "run"
    code = run_cli(spec, "--out", out, "--workers", workers, "--no-report")
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"{raised}" in err and "raised by the cell's code" in err and "1 failed" in err, err
    with sqlite3.connect(out / "results.sqlite") as conn:
        status = dict(conn.execute("SELECT cell_id, status FROM cells WHERE method = 'bad'"))
        runs = [r[0] for r in conn.execute("SELECT status FROM runs")]
    assert "failed" in status.values(), status
    assert runs and runs[-1] != "interrupted", runs  # not mistaken for a Ctrl-C


def _validate(capsys, spec, *flags):
    from opt_suite.cli import main

    capsys.readouterr()
    code = main(["validate", *flags, str(spec)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err
    return code, captured.err


@pytest.mark.parametrize("raised", ["SystemExit", "KeyboardInterrupt"])
def test_validate_deep_fails_a_plugin_that_exits_in_discover(fakes, tmp_path, capsys, raised):  # noqa: F811
    spec = write_spec(tmp_path, methods=(method("exits", "fake_exiter", in_discover=raised),))
    code, err = _validate(capsys, spec, "--deep")
    # The plugin's failure, never exit 0 and never reported as the user's Ctrl-C (130).
    assert code == 2, (code, err)
    assert "deep check: methods[0] 'exits' (fake_exiter)" in err and f"{raised}(" in err, err
    assert "not a signal" in err and "interrupted" not in err, err


@pytest.mark.parametrize("raised", ["SystemExit", "KeyboardInterrupt"])
def test_validate_fails_a_plugin_that_exits_in_params_check(fakes, tmp_path, capsys, raised):  # noqa: F811
    spec = write_spec(tmp_path, methods=(method("exits", "fake_exiter", in_check=raised),))
    code, err = _validate(capsys, spec)
    assert code == 2 and raised in err and "interrupted" not in err, (code, err)
    assert str(spec) in err, err


@pytest.mark.parametrize(
    ("declared", "why"), [("1", "discover returned 2"), ("true", "whole number")]
)
def test_validate_deep_fails_a_plugin_whose_option_count_contradicts_its_options(
    fakes,  # noqa: F811
    tmp_path,
    capsys,
    declared,
    why,
):
    spec = write_spec(tmp_path, methods=(method("miscounts", "fake_exiter", declared=declared),))
    code, err = _validate(capsys, spec, "--deep")
    assert code == 2 and "option_count says" in err and why in err, (code, err)
