"""Shared helpers of the runner tests: the fake plugin on sys.path, small specs, running the CLI."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opt_suite import registry
from opt_suite.cli import main

PLUGIN = Path(__file__).resolve().parent / "fixtures" / "runner_plugin"
REPO = Path(__file__).resolve().parents[1]


def register_plugin(monkeypatch, folder: Path) -> None:
    """Install the plugin in ``folder`` (its ``*.dist-info`` beside its modules) for one test.

    On ``sys.path`` and on ``PYTHONPATH`` (a folder there counts as installed, and worker
    subprocesses see it too); the registry then forgets what it had loaded.
    """
    monkeypatch.syspath_prepend(str(folder))
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(folder) + (os.pathsep + path if path else ""))
    forget_registered()


def forget_registered() -> None:
    """Clear the registry's caches. (The package list the cell ids name, runner/versions.py, is
    kept per sys.path: a plugin folder on it or off it is seen without clearing, and the list of
    each path is scanned once per process, not once per test.)"""
    registry._entry_points.cache_clear()
    registry.load.cache_clear()


@pytest.fixture
def fakes(monkeypatch):
    """Register the fake methods/learner (``tests/fixtures/runner_plugin``) for this test only."""
    register_plugin(monkeypatch, PLUGIN)
    yield
    forget_registered()


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


TINY_PPO = "{num_envs: 2, steps_per_iteration: 32, epochs: 1, network: {fc_units: [16]}}"
TINY_EXPERT = f"{{frames: 256, ppo: {TINY_PPO}}}"
TINY_BC = "{offline_options: {epochs: 2, steps_per_epoch: 2, max_options: 1, hidden_sizes: [8]}}"


def write_expert_spec(folder: Path, seeds: int = 1, trajectories: int = 2) -> Path:
    """A real spec whose demonstrations come from ``ppo_expert`` (deterministic FrozenLake), at
    budgets of a few seconds: two train tasks, one behaviour-cloned option, one test task."""
    path = folder / f"experts-{seeds}-{trajectories}.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            name: lake-experts
            family:
              name: gymnasium
              params: {{id: FrozenLake-v1, kwargs: {{is_slippery: false}}, max_episode_steps: 100}}
            tasks: {{count: 3, train: 2, test: 1, seed: 0}}
            demonstrations:
              source: ppo_expert
              params: {TINY_EXPERT}
              trajectories_per_task: {trajectories}
              max_steps: 100
            methods: [{{name: bc, method: bc_option, params: {TINY_BC}}}]
            evaluation: {{learner: smdp_q_learning, episodes: 5, max_steps: 100, seeds: {seeds}}}
            report: {{final_fraction: 0.2, baseline: null}}
            """
        )
    )
    return path


def file_digests(folder: Path, skip: str = "cell.json") -> dict[str, str]:
    """SHA-256 of every file under ``folder`` by relative path (``skip``: names left out, e.g.
    ``cell.json``, which records when and where a cell ran)."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != skip
    }


def forge_experts(experts: Path) -> None:
    """Rewrite every expert checkpoint in ``experts`` with its weights halved and a sidecar that
    matches: valid files an expert trained here would never be, so a run that loads one keeps it
    as it is, and a run that retrains writes the trained bytes back."""
    import io
    import json

    import numpy as np

    from opt_suite.agents.expert import sidecar_name, weights_digest

    for path in sorted(experts.glob("expert-*.npz")):
        with np.load(path) as stored:
            arrays = {name: stored[name] for name in stored.files}
        weights = [arrays[f"weight_{i}"] * 0.5 for i in range(int(arrays["num_weights"]))]
        arrays.update({f"weight_{i}": w for i, w in enumerate(weights)})
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        data = buffer.getvalue()
        path.write_bytes(data)
        sidecar = {
            "key": str(arrays["key"]),
            "sha256": hashlib.sha256(data).hexdigest(),
            "weights": weights_digest(weights),
        }
        (experts / sidecar_name(path.name)).write_text(json.dumps(sidecar, sort_keys=True))
