"""The paper's three task variations, shared by the families that vary any env as it varies Atari.

Garcia, Nota & Thomas (2020, Sec. 4.2) vary one part of the MDP each: the initial-state
distribution (``start_actions`` uniformly random actions at each episode start, a number drawn per
task in lo..hi), the reward function (a ``reward_scale`` drawn in (lo, hi]) and the transition
function (a ``frame_skip`` drawn from a set). The Atari and gymnasium families declare these
ranges in their own ``Variation`` dataclasses (with their own defaults); the rules and the draw
are here, once, so that both mean the same thing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["draw", "range_problems"]


def range_problems(variation: Any) -> list[tuple[str, str]]:
    """Ordered ranges, a positive top reward scale, a non-empty frame-skip set: ``(field, msg)``."""
    problems = []
    if variation.start_actions[0] > variation.start_actions[1]:
        got = list(variation.start_actions)
        problems.append(("start_actions", f"expected lo <= hi, got {got}"))
    low, high = variation.reward_scale
    if not (high > 0 and low <= high):
        got = list(variation.reward_scale)
        problems.append(("reward_scale", f"expected 0 <= lo <= hi and hi > 0, got {got}"))
    if not variation.frame_skip:
        problems.append(("frame_skip", "expected at least one frame skip"))
    return problems


def draw(variation: Any, rng: np.random.Generator) -> tuple[int, float, int]:
    """(start actions ~ U{lo..hi}, reward scale ~ U(lo, hi], frame skip ~ U(set)), in that order."""
    lo, hi = variation.start_actions
    start_actions = int(rng.integers(lo, hi + 1))
    low, high = variation.reward_scale
    # high - (high - low) * U[0, 1) lies in (low, high]: a scale of exactly 0 is impossible.
    reward_scale = float(high - (high - low) * rng.random())
    frame_skip = int(variation.frame_skip[rng.integers(len(variation.frame_skip))])
    return start_actions, reward_scale, frame_skip
