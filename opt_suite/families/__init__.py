"""Task families, and their gymnasium registration.

Importing this package registers every built-in family's env with gymnasium under its versioned id
(``opt_suite/FourRooms-v0``, ``opt_suite/Chain-v0``, ``opt_suite/Atari-v0``,
``opt_suite/Gymnasium-v0``). Registration is lazy —
the entry points are strings, so no family module is imported until an env is made — and
idempotent. Env kwargs are the
family's ``Params`` fields plus the task's ``TaskParams`` fields, flat (the ``gymnasium`` family's
env takes ``env_id`` and ``max_episode_frames``, names ``gymnasium.make`` keeps for itself)::

    import gymnasium, opt_suite.families
    env = gymnasium.make("opt_suite/FourRooms-v0", layout="sutton-13x13", start=(1, 1), goal=(7, 9))

Families with a native batch also register a ``vector_entry_point``:
``gymnasium.make_vec("opt_suite/Atari-v0", num_envs=8)`` steps Atari on ale-py's C++ threads
(:class:`~opt_suite.families.atari.threads.AtariThreadVectorEnv`).

A family's ``max_episode_steps`` param is gymnasium's ``TimeLimit`` (``make_env`` passes it to
``gymnasium.make``); the registered default equals the param's default. Nothing here imports
TensorFlow.
"""

from __future__ import annotations

import gymnasium

__all__ = ["ENV_IDS", "VECTOR_ENTRY_POINTS", "register_envs"]

#: Families with a native batch: versioned id -> its ``vector_entry_point`` (gymnasium.make_vec
#: uses it instead of a SyncVectorEnv of single envs).
VECTOR_ENTRY_POINTS: dict[str, str] = {
    "opt_suite/Atari-v0": "opt_suite.families.atari.threads:make_vector_env",
}

# Versioned gymnasium id -> (entry point "module:Env class", default max_episode_steps or None).
ENV_IDS: dict[str, tuple[str, int | None]] = {
    "opt_suite/FourRooms-v0": ("opt_suite.families.tabular.fourrooms:FourRoomsEnv", 1000),
    "opt_suite/Chain-v0": ("opt_suite.families.tabular.chain:ChainEnv", 100),
    # Atari episodes are capped in emulator frames by the env itself (max_episode_frames).
    "opt_suite/Atari-v0": ("opt_suite.families.atari.family:AtariTaskEnv", None),
    # Any gymnasium env by id, capped in its own steps by the wrapper (max_episode_frames).
    "opt_suite/Gymnasium-v0": ("opt_suite.families.gymnasium.env:GymnasiumTaskEnv", None),
}


def register_envs() -> None:
    """Register the built-in envs with gymnasium (a no-op for ids already registered)."""
    for env_id, (entry_point, max_episode_steps) in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id,
                entry_point=entry_point,
                max_episode_steps=max_episode_steps,
                vector_entry_point=VECTOR_ENTRY_POINTS.get(env_id),
            )


register_envs()
