"""The Atari family's typed params: family-wide settings, the task variations, one task.

Apart from :mod:`opt_suite.families.atari.family` so that the thread batch
(:mod:`opt_suite.families.atari.threads`) can build and check them without importing the family
that imports it. ``opt_suite.families.atari.family`` re-exports every name.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Literal

from opt_suite.families.paper_variations import range_problems
from opt_suite.params import param

__all__ = ["Params", "TaskParams", "Variation", "installed_games"]


@functools.cache
def installed_games() -> tuple[str, ...]:
    """The ALE game ids whose ROMs are installed (ale-py 0.12 bundles them), sorted."""
    from ale_py import roms

    return tuple(sorted(roms.get_all_rom_ids()))


@dataclasses.dataclass(frozen=True)
class Params:
    """Family-wide settings (spec key ``family.params``)."""

    game: str = param("breakout", doc="ALE game id in snake_case, e.g. breakout, amidar")
    action_set: Literal["minimal", "full"] = param(
        "minimal", doc="the game's minimal action set, or all 18 joystick actions"
    )
    max_episode_frames: int = param(
        108_000, doc="episodes are truncated after this many emulator frames (30 min of play)", ge=1
    )

    def check(self) -> list[tuple[str, str]]:
        """The game's ROM must be installed."""
        from opt_suite.registry import suggest

        games = installed_games()
        if self.game not in games:
            hint = suggest(self.game, list(games))
            installed = ", ".join(games)
            return [("game", f"unknown ALE game {self.game!r}{hint} (installed: {installed})")]
        return []


@dataclasses.dataclass(frozen=True)
class Variation:
    """How tasks are sampled (spec key ``tasks.vary``); defaults are the paper's."""

    start_actions: tuple[int, int] = param(
        (1, 20), doc="random actions at each episode start: per task uniform in [lo, hi]", ge=0
    )
    reward_scale: tuple[float, float] = param(
        (0.0, 10.0), doc="reward multiplier: drawn per task uniform in (lo, hi]", ge=0
    )
    frame_skip: tuple[int, ...] = param(
        (2, 3, 4), doc="emulator frames per action: drawn per task uniformly from this set", ge=1
    )

    def check(self) -> list[tuple[str, str]]:
        """Ordered ranges, a positive top reward scale, a non-empty frame-skip set."""
        return range_problems(self)


@dataclasses.dataclass(frozen=True)
class TaskParams:
    """One Atari task: its random start actions, reward scale and frame skip."""

    start_actions: int = param(1, doc="uniformly random actions taken at every episode start", ge=0)
    reward_scale: float = param(1.0, doc="every reward is multiplied by this", gt=0)
    frame_skip: int = param(4, doc="emulator frames each action is repeated for", ge=1)
