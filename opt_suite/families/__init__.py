"""Task families, and their gymnasium registration.

Importing this package registers every built-in family's env with gymnasium under its versioned id
(``opt_suite/FourRooms-v0``, ``opt_suite/Chain-v0``, ``opt_suite/Atari-v0``). Registration is lazy —
the entry points are strings, so no family module is imported until an env is made — and
idempotent. Env kwargs are the
family's ``Params`` fields plus the task's ``TaskParams`` fields, flat::

    import gymnasium, opt_suite.families
    env = gymnasium.make("opt_suite/FourRooms-v0", layout="sutton-13x13", start=(1, 1), goal=(7, 9))

A family's ``max_episode_steps`` param is gymnasium's ``TimeLimit`` (``make_env`` passes it to
``gymnasium.make``); the registered default equals the param's default. Nothing here imports
TensorFlow.
"""

from __future__ import annotations

import gymnasium

__all__ = ["ENV_IDS", "register_envs"]

# Versioned gymnasium id -> (entry point "module:Env class", default max_episode_steps or None).
ENV_IDS: dict[str, tuple[str, int | None]] = {
    "opt_suite/FourRooms-v0": ("opt_suite.families.fourrooms:FourRoomsEnv", 1000),
    "opt_suite/Chain-v0": ("opt_suite.families.chain:ChainEnv", 100),
    # Atari episodes are capped in emulator frames by the env itself (max_episode_frames).
    "opt_suite/Atari-v0": ("opt_suite.families.atari:AtariTaskEnv", None),
}


def register_envs() -> None:
    """Register the built-in envs with gymnasium (a no-op for ids already registered)."""
    for env_id, (entry_point, max_episode_steps) in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id, entry_point=entry_point, max_episode_steps=max_episode_steps
            )


register_envs()
