"""The minor cases of the third round, each as a user meets it."""

from __future__ import annotations

import json

from runner_support import REPO

from opt_suite.cli import main


def test_extends_of_a_non_spec_file_does_not_echo_its_text(tmp_path, capsys):
    """``extends: ~/.netrc``: the error line may reach a CI log, so the file's text stays out."""
    secret = tmp_path / "token.txt"
    secret.write_text("ghp_SECRETSECRETSECRETSECRET0123456789\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"extends: {secret}\nname: x\n")
    capsys.readouterr()
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert f"{secret}:1:1" in err and "expected a mapping of spec sections" in err
    assert "SECRET" not in err and "ghp_" not in err, err


def test_a_baseline_whose_version_is_true_is_refused(tmp_path, capsys):
    doc = json.loads((REPO / "ci" / "baseline.json").read_text())
    doc["version"] = True  # == 1 in Python
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(doc))
    run = tmp_path / "run"
    run.mkdir()
    capsys.readouterr()
    assert main(["compare", str(run), "--baseline", str(path)]) == 2
    err = capsys.readouterr().err
    assert "version True, expected 1" in err or "no results store" in err, err
    from opt_suite.report import BaselineError, load_baseline

    try:
        load_baseline(path)
    except BaselineError as exc:
        assert "version True, expected 1" in str(exc)
    else:
        raise AssertionError("a baseline with version true was accepted")


def test_a_run_the_user_can_read_but_not_write_is_not_called_unreadable(tmp_path, monkeypatch):
    """SQLite opened read-only (as for a store the user does not own; the tests run as root,
    whom file modes do not stop): `run` into it says it cannot write, not "not a readable store".
    """
    import sqlite3

    from opt_suite.store import StoreError, schema

    path = tmp_path / "results.sqlite"
    schema.connect(path, create=True).close()
    connect = sqlite3.connect

    def read_only(database, **kwargs):
        return connect(f"file:{database}?mode=ro", uri=True, **kwargs)

    monkeypatch.setattr(schema.sqlite3, "connect", read_only)
    try:
        schema.connect(path, create=True)
    except StoreError as exc:
        message = str(exc)
    else:
        raise AssertionError("a read-only store was opened for writing")
    assert "cannot write the results store" in message and "read-only" in message, message
    assert "not a readable" not in message
    schema.connect(path, create=False).close()  # reading it still works
