"""Plugins survive upgrades: every old import path in CHANGELOG.md still imports, and warns."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

import opt_suite
from opt_suite.moved import MOVED_MODULES, MOVED_NAMES, REMOVED_IN

CHANGELOG = Path(__file__).resolve().parents[1] / "CHANGELOG.md"
ROW = re.compile(r"^\| `(opt_suite[\w.]*)`(?: \([^)]*\))? \| `(opt_suite[\w.]*)` \|$", re.M)


def _documented() -> dict[str, str]:
    return dict(ROW.findall(CHANGELOG.read_text()))


def test_the_changelog_documents_exactly_the_moved_modules():
    assert _documented() == MOVED_MODULES
    assert len(MOVED_MODULES) == 14


@pytest.mark.parametrize(("old", "new"), sorted(_documented().items()))
def test_an_old_path_gives_the_new_module_with_a_warning_naming_it(old, new):
    sys.modules.pop(old, None)  # imported by an earlier test: import it afresh
    with pytest.warns(DeprecationWarning, match=rf"{re.escape(old)} moved to {re.escape(new)};"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)  # the same classes, not copies


def test_the_grid_dynamics_plugin_import_of_issue_39_works():
    sys.modules.pop("opt_suite.families.grid_dynamics", None)
    with pytest.warns(DeprecationWarning, match=rf"goes in {re.escape(REMOVED_IN)}") as caught:
        from opt_suite.families.grid_dynamics import __name__ as name  # noqa: F401
    assert name == "opt_suite.families.tabular.grid_dynamics"
    assert caught[0].filename == __file__  # the warning points at the plugin's import line


def test_the_old_names_of_the_atari_module_come_from_its_package():
    from opt_suite.families.atari import family

    for name, where in MOVED_NAMES["opt_suite.families.atari"].items():
        assert name in CHANGELOG.read_text()
        with pytest.warns(DeprecationWarning, match=rf"opt_suite.families.atari.{name} moved"):
            value = getattr(importlib.import_module("opt_suite.families.atari"), name)
        assert where == family.__name__ and value is getattr(family, name)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        importlib.import_module("opt_suite.families.atari").nothing  # noqa: B018


def test_every_moved_name_answers_from_its_old_module_with_a_warning():
    for old, names in MOVED_NAMES.items():
        for name, where in names.items():
            assert name in CHANGELOG.read_text() and where in CHANGELOG.read_text()
            # Both modules imported first: the new one's own imports (TensorFlow's distutils
            # warning) must not fall inside the block that expects exactly our warning.
            target = importlib.import_module(where)
            module = importlib.import_module(old)
            with pytest.warns(DeprecationWarning, match=rf"{old}.{name} moved to {where}"):
                value = getattr(module, name)
            assert value is getattr(target, name)


def test_the_version_is_recorded_the_same_everywhere():
    toml = (CHANGELOG.parent / "pyproject.toml").read_text()
    assert f'version = "{opt_suite.__version__}"' in toml
    assert f"## {opt_suite.__version__}\n" in CHANGELOG.read_text()
