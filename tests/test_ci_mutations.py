"""ci/mutations.py: every injected bug still applies to today's code, and the table says what ran.

The mutation check itself runs the gate specs (minutes); these tests keep its patches honest in
seconds: a patch whose old text moved away would make a row "patch-failed" in the next check.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load():
    spec = importlib.util.spec_from_file_location("ci_mutations", ROOT / "ci" / "mutations.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["ci_mutations"] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


mutations = _load()


@pytest.mark.parametrize("mutation", mutations.MUTATIONS, ids=lambda m: m.name)
def test_each_patch_applies_once_and_leaves_python(mutation, tmp_path):
    assert mutations.patched_copy(mutation, tmp_path) is None
    patched = (tmp_path / mutation.path).read_text()
    ast.parse(patched)  # a syntax error would be an import failure in the check
    original = (ROOT / mutation.path).read_text()
    assert (patched != original) == bool(mutation.old)
    assert mutation.gate in mutations.GATES


def test_a_stale_patch_is_a_listed_failure_not_a_pass(tmp_path):
    stale = mutations.dataclasses.replace(mutations.MUTATIONS[1], old="text that is not there")
    problem = mutations.patched_copy(stale, tmp_path)
    assert problem == (f"patch does not apply: its old text occurs 0 times in {stale.path}")


def test_the_table_counts_broken_rows_apart_from_caught_and_missed():
    by_name = {m.name: m for m in mutations.MUTATIONS}
    outcomes = [
        mutations.Outcome(by_name["control"], "passed", "replay: identical", 10.0, 5.0),
        mutations.Outcome(by_name["smdp-discount"], "caught", "regression: primitives", 10.0, 5.0),
        mutations.Outcome(by_name["beta-frozen"], "missed", "PASS", 10.0, 5.0),
        mutations.Outcome(by_name["demos-shuffled"], "patch-failed", "patch does not apply", 0, 0),
    ]
    page = mutations.render(outcomes, "python ci/mutations.py", "1.0 / 1.0 / 1.0")
    assert "Learning bugs turned red: **1 of 2** (1 by a regression verdict)." in page
    assert "Broken rows (not counted): demos-shuffled." in page
    assert "| `beta-frozen` |" in page and "**missed**" in page
    assert "Whole check: 30 s wall, 15 CPU-seconds." in page
