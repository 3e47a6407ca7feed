"""Joining a ``ray start`` cluster: the driver follows ``ray start``'s token rule, and says what
to set when joining fails (no cluster needed: the rule is about environment and files)."""

from __future__ import annotations

import os
import sys

import pytest

from opt_suite.runner.ray_cluster import follow_ray_start_auth, join_hint


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A HOME of this test's own, no Ray auth variable set, and Ray's configuration untouched."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.setenv(name, "")  # recorded first, so what the code sets is undone after
        monkeypatch.delenv(name)
    monkeypatch.setitem(sys.modules, "ray", None)  # `from ray._raylet import Config` fails
    return tmp_path


def _token(home):
    (home / ".ray").mkdir()
    (home / ".ray" / "auth_token").write_text("0123456789abcdef")


def test_a_token_on_this_machine_turns_token_mode_on(home):
    _token(home)
    assert follow_ray_start_auth() is True
    assert os.environ["RAY_AUTH_MODE"] == "token"


def test_no_token_leaves_the_mode_unset(home):
    assert follow_ray_start_auth() is False
    assert "RAY_AUTH_MODE" not in os.environ


def test_a_token_in_the_environment_counts(home, monkeypatch):
    monkeypatch.setenv("RAY_AUTH_TOKEN", "0123456789abcdef")
    assert follow_ray_start_auth() is True
    assert os.environ["RAY_AUTH_MODE"] == "token"


def test_an_explicit_mode_is_kept(home, monkeypatch):
    _token(home)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    assert follow_ray_start_auth() is False
    assert os.environ["RAY_AUTH_MODE"] == "disabled"


def test_the_hint_names_what_to_set(home, monkeypatch):
    hint = join_hint("10.0.0.1:6379")
    assert "export RAY_AUTH_MODE=token RAY_AUTH_TOKEN=$(ssh HEAD ray get-auth-token)" in hint
    _token(home)
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    assert "is this node's token the head's?" in join_hint("10.0.0.1:6379")
