"""opt_suite/installed.py: which distributions count as installed, and which modules are theirs.

Each case builds the folders pip would leave (tests/installed_plugin.py) and asks the check
directly; the hostile cases through ``validate`` are in tests/faults/test_faults_imports.py.
"""

from __future__ import annotations

import json
import sys

import pytest
from installed_plugin import install_module

from opt_suite import installed


@pytest.fixture
def clean_path(monkeypatch):
    """No PYTHONPATH (so a folder counts only by its name) and the module names freed after."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    yield monkeypatch
    for name in ("site_mod", "loose_mod", "path_mod", "editable_mod"):
        sys.modules.pop(name, None)


def _names():
    return {dist.metadata["Name"] for dist in installed.distributions()}


def test_a_distribution_in_site_packages_is_installed_and_its_module_accepted(tmp_path, clean_path):
    site = install_module(tmp_path / "site-packages", "site_mod", "X = 1\n")
    clean_path.syspath_prepend(str(site))
    assert "site_mod" in _names()
    assert installed.refusal("site_mod") is None
    assert installed.import_installed("site_mod").X == 1


def test_a_dist_info_outside_an_install_folder_is_ignored(tmp_path, clean_path):
    loose = install_module(tmp_path / "beside-the-spec", "loose_mod", "X = 1\n")
    clean_path.syspath_prepend(str(loose))
    assert "loose_mod" not in _names()
    why = installed.refusal("loose_mod")
    assert why is not None and "not a package of an installed distribution" in why
    with pytest.raises(installed.NotInstalled):
        installed.import_installed("loose_mod")
    assert "loose_mod" not in sys.modules


def test_a_pythonpath_folder_is_an_install_folder_but_an_empty_entry_is_not(tmp_path, clean_path):
    folder = install_module(tmp_path / "target", "path_mod", "X = 1\n")
    clean_path.syspath_prepend(str(folder))
    clean_path.chdir(folder)  # an empty PYTHONPATH entry would mean the current folder
    clean_path.setenv("PYTHONPATH", "")
    assert installed.refusal("path_mod") is not None
    clean_path.setenv("PYTHONPATH", str(folder))
    assert installed.refusal("path_mod") is None


def test_an_editable_install_accepts_its_project_folder(tmp_path, clean_path):
    project = tmp_path / "my project"  # a space: the URL spells it %20
    project.mkdir()
    (project / "editable_mod.py").write_text("X = 1\n")
    site = tmp_path / "site-packages"
    info = site / "editable_mod-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: editable_mod\nVersion: 0.1\n")
    (info / "top_level.txt").write_text("editable_mod\n")
    (info / "RECORD").write_text("editable_mod-0.1.dist-info/METADATA,,\n")
    clean_path.syspath_prepend(str(project))
    clean_path.syspath_prepend(str(site))
    assert installed.refusal("editable_mod") is not None  # nothing says the project is its own
    url = {"url": project.as_uri(), "dir_info": {"editable": True}}
    (info / "direct_url.json").write_text(json.dumps(url))
    installed._refusal.cache_clear()  # the answer is cached for the process; the files changed
    assert installed.refusal("editable_mod") is None


def test_a_file_shadowing_an_installed_module_is_refused(tmp_path, clean_path):
    site = install_module(tmp_path / "site-packages", "site_mod", "X = 1\n")
    shadow = tmp_path / "cwd"
    shadow.mkdir()
    (shadow / "site_mod.py").write_text("X = 2\n")
    clean_path.syspath_prepend(str(site))
    clean_path.syspath_prepend(str(shadow))  # first on sys.path, as the cwd is under python -m
    why = installed.refusal("site_mod")
    assert why is not None and f"would be imported from {shadow / 'site_mod.py'}" in why


@pytest.mark.parametrize(
    ("module", "words"),
    [
        ("antigravity", "'antigravity' is the standard library"),
        ("json.tool", "'json' is the standard library"),
        ("pip.__main__", "a __main__ module runs a program"),
        ("os;rm", "expected a dotted module name"),
        ("no_such_module_xyz", "not a package of an installed distribution"),
    ],
)
def test_refused_names(module, words):
    why = installed.refusal(module)
    assert why is not None and words in why


def test_the_suites_own_packages_and_installed_ones_are_accepted():
    for module in ("opt_suite.demonstrations.minigrid_planner", "baselines", "numpy", "gymnasium"):
        assert installed.refusal(module) is None, module
