"""The ``frames`` column: cumulative emulator frames per episode, and curves against frames."""

from __future__ import annotations

import numpy as np
import pytest

from opt_suite.learners.base import EpisodeLog
from opt_suite.report.curves import frame_bands, uses_frames, write_curves_png
from opt_suite.report.episodes import EpisodeTable, ReportDataError, learning_curves


def test_episode_log_defaults_to_one_frame_per_step():
    log = EpisodeLog(np.zeros(3), np.array([5, 1, 2]))
    assert log.frames.tolist() == [5, 6, 8]
    skipping = EpisodeLog(np.zeros(2), np.array([5, 1]), frames=np.array([20, 24]))
    assert skipping.frames.tolist() == [20, 24]


def test_table_without_frames_counts_each_runs_steps_in_episode_order():
    rows = [
        ("a", 0, 0, 1, 0.0, 7),  # out of order on purpose
        ("a", 0, 0, 0, 0.0, 3),
        ("a", 1, 0, 0, 0.0, 2),
        ("b", 0, 0, 0, 0.0, 4),
    ]
    table = EpisodeTable.from_rows(rows)
    assert table.frames.tolist() == [10, 3, 2, 4]


def test_rows_either_all_have_frames_or_none():
    with pytest.raises(ReportDataError, match="or all but frames"):
        EpisodeTable.from_rows([("a", 0, 0, 0, 0.0, 3, 12), ("a", 0, 0, 1, 0.0, 3)])


def _skipping_table():
    """Two runs with frame skip 4: run 0 episodes end at 40, 80, 120; run 1 at 60, 90, 200."""
    rows = []
    for seed, ends, rets in ((0, [40, 80, 120], [1.0, 2.0, 3.0]), (1, [60, 90, 200], [0, 4, 8])):
        for e, (f, r) in enumerate(zip(ends, rets, strict=True)):
            rows.append(("a", seed, 0, e, float(r), 10, f))
    return EpisodeTable.from_rows(rows)


def test_frame_bands_read_each_runs_latest_episode():
    curves = learning_curves(_skipping_table())
    assert uses_frames(curves)
    axis, mean, se = frame_bands(curves["a"], points=7)
    # from 60 (both runs have one episode) to 120 (run 0's last episode): 60, 70, ..., 120
    assert axis.tolist() == [60, 70, 80, 90, 100, 110, 120]
    run0 = np.array([1, 1, 2, 2, 2, 2, 3])
    run1 = np.array([0, 0, 0, 4, 4, 4, 4])
    np.testing.assert_allclose(mean, (run0 + run1) / 2)
    np.testing.assert_allclose(se, np.abs(run0 - run1) / 2)


def test_tabular_runs_are_plotted_against_episodes(tmp_path):
    rows = [("a", 0, 0, e, float(e), 5) for e in range(4)]
    curves = learning_curves(EpisodeTable.from_rows(rows))
    assert not uses_frames(curves)
    frames = learning_curves(_skipping_table())
    path = write_curves_png(frames, tmp_path / "curves.png", "atari")
    assert path.read_bytes()[:4] == b"\x89PNG"
