"""A cell's id names the code that computes it, also for a plugin installed in editable mode.

Cell ids carry package versions (runner/versions.py); an editable plugin keeps its version while its
code changes, so they also carry a digest of the plugin's source. Editing the plugin and rerunning
must recompute its cells and only its cells' dependants.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from runner_support import PLUGIN, REPO, write_spec

from opt_suite.runner import versions
from opt_suite.store import ResultsStore


def _run(spec, out, plugin_dir):
    env = dict(os.environ, PYTHONPATH=str(plugin_dir))
    args = [sys.executable, "-m", "opt_suite", "run", str(spec), "--out", str(out)]
    done = subprocess.run(
        [*args, "--workers", "0", "--no-report"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def _cells(out, kinds=("demonstrations", "discovery", "evaluation", "references")):
    with ResultsStore(out) as store:
        return {c.cell_id for c in store.cells() if c.kind in kinds}


def test_editing_a_plugin_recomputes_its_cells(tmp_path):
    plugin = tmp_path / "plugin"
    shutil.copytree(PLUGIN, plugin, ignore=shutil.ignore_patterns("__pycache__"))
    spec = write_spec(tmp_path, seeds=1)
    out = tmp_path / "out"
    first = _run(spec, out, plugin)
    assert "(0 reused" in first, first
    assert "(0 computed" not in first
    again = _run(spec, out, plugin)
    assert "0 computed" in again, again  # unchanged code: every cell reused
    before = _cells(out)

    # The same version (0.1), other code.
    source = plugin / "runner_fakes.py"
    source.write_text(source.read_text() + "\n\nEDITED = True  # a new line of code\n")
    edited = _run(spec, out, plugin)
    # Only the 3 references cells are reused: the chain family and the optimal source that
    # compute them are opt_suite's, not the edited plugin's.
    assert "(3 reused" in edited, edited
    after = _cells(out)
    assert len(after) == len(before) and len(after & before) == 3
    plugins = ("discovery", "evaluation")
    assert _cells(out, plugins).isdisjoint(before), "new code must get new cells"


def test_the_digest_follows_the_source_and_nothing_else(tmp_path, monkeypatch):
    package = tmp_path / "digest_toy"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("X = 1\n")
    (package / "sub" / "mod.py").write_text("Y = 2\n")
    (package / "notes.txt").write_text("not code")
    monkeypatch.syspath_prepend(str(tmp_path))
    import digest_toy  # noqa: F401

    def digest():
        versions.source_digest.cache_clear()
        return versions.source_digest("digest_toy")

    first = digest()
    assert first is not None and len(first) == versions.DIGEST_CHARS
    (package / "notes.txt").write_text("other notes")
    assert digest() == first  # not a source file
    (package / "sub" / "mod.py").write_text("Y = 3\n")
    changed = digest()
    assert changed != first
    (package / "sub" / "mod.py").rename(package / "mod.py")  # same bytes, another file
    assert digest() not in (first, changed)
    versions.source_digest.cache_clear()
    assert versions.source_digest("no_such_module_here") is None


def test_provider_names_package_version_and_source():
    from opt_suite.families.tabular.chain import Chain

    named = versions.provider(Chain)
    assert named is not None and named.startswith("opt-suite ")
    assert named.endswith(f" src {versions.source_digest('opt_suite')}")
    assert versions.provider(None) is None


def test_a_distribution_found_twice_is_named_once(tmp_path, monkeypatch):
    # An editable install's checkout on sys.path adds its egg-info beside the installed dist-info:
    # the provider, and so every cell id, must not depend on the working directory.
    from opt_suite.stages import Stage  # any class of opt_suite

    twice = {"opt_suite": ["opt-suite", "opt-suite"]}
    monkeypatch.setattr(versions.metadata, "packages_distributions", lambda: twice)
    versions._distributions_on.cache_clear()
    try:
        doubled = versions.provider(Stage)
    finally:
        monkeypatch.undo()
        versions._distributions_on.cache_clear()
    assert doubled == versions.provider(Stage)
    assert doubled.startswith("opt-suite ") and ", opt-suite" not in doubled
