"""Altered recorded option counts: the leaderboard's option-usage section never shows them.

The report reads each evaluation cell's ``option_usage.npz`` (the leaderboard's "Option usage"
table, :mod:`opt_suite.report.option_usage_section`); an altered file is refused with one line
naming the cell and saying how to recompute it (exit 2), and the leaderboard already written
stays as it was.
"""

from __future__ import annotations

import sqlite3
import textwrap

import pytest

from opt_suite.cli import main

SPEC = textwrap.dedent(
    """\
    name: usage-fault
    family: {name: chain, params: {num_states: 5}}
    tasks: {count: 3, train: 1, test: 2, seed: 0}
    methods:
      - {name: primitives, method: primitives}
      - {name: random, method: random_options, params: {count: 2}}
    evaluation: {learner: smdp_q_learning, episodes: 10, max_steps: 40, seeds: 1}
    """
)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("usage-fault")
    (folder / "spec.yaml").write_text(SPEC)
    out = folder / "run"
    assert (
        main(["run", str(folder / "spec.yaml"), "--out", str(out), "--workers", "0", "--quiet"])
        == 0
    )
    assert "## Option usage" in (out / "leaderboard.md").read_text()
    return out


def test_an_altered_counts_file_is_refused_in_one_line_and_the_leaderboard_kept(run, capsys):
    with sqlite3.connect(run / "results.sqlite") as db:
        (cell,) = db.execute(
            "SELECT cell_id FROM cells WHERE kind = 'evaluation' AND method = 'random'"
            " AND status = 'done' LIMIT 1"
        ).fetchone()
    db.close()
    before = (run / "leaderboard.md").read_bytes()
    counts = run / "cells" / cell / "option_usage.npz"
    counts.write_bytes(counts.read_bytes()[: counts.stat().st_size // 2])
    capsys.readouterr()
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert cell in err and "option_usage.npz" in err and "altered or truncated" in err
    assert (run / "leaderboard.md").read_bytes() == before
