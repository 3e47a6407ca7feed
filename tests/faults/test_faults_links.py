"""Nothing is written outside ``--out``: the suite never writes through a symlink in a run folder.

A ``leaderboard.md`` symlink inside a run folder once made the report overwrite the file it pointed
to; a ``results.sqlite`` symlink to another run's store appended this run there.
"""

from __future__ import annotations

import hashlib

import pytest
from runner_support import fakes, run_cli, write_spec  # noqa: F401  (fixture)

from opt_suite.cli import main


@pytest.fixture
def spec(fakes, tmp_path):  # noqa: F811
    return write_spec(tmp_path, seeds=1, test=1)


def test_a_report_file_symlink_is_replaced_not_written_through(spec, tmp_path, capsys):
    outside = tmp_path / "precious.txt"
    outside.write_text("the user's own file\n")
    out = tmp_path / "run"
    out.mkdir()
    for name in ("leaderboard.md", "curves.png"):
        (out / name).symlink_to(outside)
    assert run_cli(spec, "--out", out, "--workers", "0", "--quiet") == 0, capsys.readouterr().err
    assert outside.read_text() == "the user's own file\n"
    assert not (out / "leaderboard.md").is_symlink()
    assert (out / "leaderboard.md").read_text().startswith("#")
    (out / "index.html").unlink()
    (out / "index.html").symlink_to(outside)  # and `opt-suite report` alike
    assert main(["report", str(out)]) == 0
    assert outside.read_text() == "the user's own file\n" and not (out / "index.html").is_symlink()


def test_a_symlinked_results_store_is_refused_and_the_other_store_untouched(spec, tmp_path, capsys):
    other = tmp_path / "other"
    assert run_cli(spec, "--out", other, "--workers", "0", "--quiet", "--no-report") == 0
    store = other / "results.sqlite"
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    out = tmp_path / "run"
    out.mkdir()
    (out / "results.sqlite").symlink_to(store)
    capsys.readouterr()
    code = run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report")
    err = capsys.readouterr().err
    assert code == 2 and "results store is a symlink" in err and "Traceback" not in err, err
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before
    assert main(["report", str(out)]) == 2  # readers refuse it too
    assert "is a symlink" in capsys.readouterr().err


def test_a_symlinked_write_ahead_log_is_refused(spec, tmp_path, capsys):
    """SQLite writes results.sqlite-wal through a link: the store refuses it before opening."""
    outside = tmp_path / "precious.txt"
    outside.write_text("the user's own file\n")
    out = tmp_path / "run"
    out.mkdir()
    (out / "results.sqlite-wal").symlink_to(outside)
    capsys.readouterr()
    code = run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report")
    err = capsys.readouterr().err
    assert code == 2 and "results.sqlite-wal: the results store is a symlink" in err, err
    assert outside.read_text() == "the user's own file\n"


@pytest.mark.parametrize("folder", ["claims", "logs"])
def test_a_linked_claims_or_logs_folder_is_refused_before_anything_is_written(
    spec, tmp_path, capsys, folder
):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "run"
    out.mkdir()
    (out / folder).symlink_to(elsewhere, target_is_directory=True)
    capsys.readouterr()
    code = run_cli(spec, "--out", out, "--workers", "0", "--quiet")
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    (line,) = err.strip().splitlines()
    assert f"{out / folder}:" in line and "is a symlink" in line, line
    assert list(elsewhere.iterdir()) == [] and not (out / "results.sqlite").exists()


def test_a_claim_lock_file_symlink_fails_its_cell_and_is_not_written_through(tmp_path):
    from opt_suite.runner.claims import Claims

    outside = tmp_path / "precious.txt"
    outside.write_text("the user's own file\n")
    claims = Claims(tmp_path / "run")
    (claims.root / "abc.lock").symlink_to(outside)
    with pytest.raises(OSError, match="abc.lock is a symlink"):
        claims.try_claim("abc")
    assert outside.read_text() == "the user's own file\n"
    assert claims.try_claim("def") and (claims.root / "def.lock").is_file()
