"""Shared helpers of the runner tests: the fake plugin on sys.path, small specs, running the CLI."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opt_suite import registry
from opt_suite.cli import main
from opt_suite.runner import versions

PLUGIN = Path(__file__).resolve().parent / "fixtures" / "runner_plugin"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def fakes(monkeypatch):
    """Register the fake methods/learner (``tests/fixtures/runner_plugin``) for this test only."""
    monkeypatch.syspath_prepend(str(PLUGIN))
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(PLUGIN) + (os.pathsep + path if path else ""))
    registry._entry_points.cache_clear()
    registry.load.cache_clear()
    versions._distributions.cache_clear()  # cell ids name the fakes' package (runner/versions.py)
    yield
    registry._entry_points.cache_clear()
    registry.load.cache_clear()
    versions._distributions.cache_clear()  # cell ids name the fakes' package (runner/versions.py)


def method(name: str, kind: str = "fake_options", **params) -> dict:
    """One ``methods`` entry."""
    return {"name": name, "method": kind, "params": params}


DEFAULT_METHODS = (method("none", num_options=0), method("rand", num_options=2))


def write_spec(
    folder: Path,
    methods=DEFAULT_METHODS,
    learner: dict | None = None,
    seeds: int = 2,
    episodes: int = 10,
    test: int = 3,
    name: str = "runner-toy",
    file: str = "spec.yaml",
) -> Path:
    """A tiny chain spec using the fake plugin; returns its path."""
    import yaml

    spec = {
        "name": name,
        "family": {"name": "chain", "params": {"num_states": 5}},
        "tasks": {"count": 2 + test, "train": 2, "test": test, "seed": 0},
        "demonstrations": {"trajectories_per_task": 1, "max_steps": 50},
        "methods": [dict(m) for m in methods],
        "evaluation": {
            "learner": "fake_learner",
            "params": dict(learner or {}),
            "episodes": episodes,
            "max_steps": 20,
            "seeds": seeds,
            "interaction_budget": 100,
        },
        "report": {"baseline": methods[0]["name"]},
    }
    path = folder / file
    path.write_text(textwrap.dedent(yaml.safe_dump(spec, sort_keys=False)))
    return path


def run_cli(*args: str) -> int:
    """``opt-suite run ARGS`` in this process."""
    return main(["run", *map(str, args)])


def cli_command(*args: str) -> list[str]:
    """``opt-suite run ARGS`` as a subprocess command line."""
    return [sys.executable, "-m", "opt_suite", "run", *map(str, args)]


def run_subprocess(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``opt-suite run ARGS`` in a fresh process (the fakes come through PYTHONPATH)."""
    return subprocess.run(
        cli_command(*args), capture_output=True, text=True, timeout=timeout, cwd=REPO
    )


def done_cells(directory: Path) -> int:
    """How many cells are done in ``directory`` (0 if the store does not exist yet)."""
    db = directory / "results.sqlite"
    if not db.exists():
        return 0
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute("SELECT COUNT(*) FROM cells WHERE status = 'done'").fetchone()[0]
    except sqlite3.OperationalError:  # tables not created yet
        return 0
    finally:
        conn.close()


def numbers(directory: Path) -> tuple[list, list, dict]:
    """Everything a report reads: episodes, curves and option sets (as lists), for equality."""
    from opt_suite.store import ResultsStore

    with ResultsStore(directory) as store:
        episodes = [tuple(r.__dict__.values()) for r in store.episodes()]
        curves = [(r.method, r.seed, r.name, r.step, repr(r.value)) for r in store.curves()]
        options = {}
        for m in store.methods():
            for s in store.seeds():
                found = store.option_set(m, s)
                options[(m, s)] = (
                    None if found is None else (found.mu.tolist(), found.beta.tolist())
                )
    return episodes, curves, options
