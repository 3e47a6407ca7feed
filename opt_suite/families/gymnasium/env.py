"""One task of the ``gymnasium`` family: any gymnasium env with the paper's three task variations.

:class:`GymnasiumTaskEnv` wraps the env named by a gymnasium id and varies it as the Atari family
varies a game (Garcia, Nota & Thomas 2020, Sec. 4.2), one variation per part of the MDP:

- the **initial-state distribution**: every episode starts with ``start_actions`` uniformly random
  actions;
- the **reward function**: every reward is multiplied by ``reward_scale``;
- the **transition function**: each action is repeated ``frame_skip`` times, rewards summed.

Budgets count the wrapped env's own steps ("frames"), as Atari budgets count emulator frames, so
tasks with different frame skips get equal experience: every step's ``info["frames"]`` says how
many inner steps it used, a reset reports those of its random start actions, and episodes are
truncated after ``max_episode_steps`` inner steps (start actions included).

Observations are the env's own, with two adaptations so that every learner reads them alike: a
``Dict`` observation is replaced by its ``observation_key`` entry (default: ``image`` when there is
one, as in MiniGrid, else the only array or index entry), and a
boolean ``Box`` (MinAtar's channels) becomes ``uint8`` 0/255 — the networks scale ``uint8`` frames
by 1/255, so a set channel reads as 1.

FrozenLake and CliffWalking (gymnasium's toy-text envs whose step samples one outcome from their
published table ``P``) are stepped from that table, read once (:func:`step_table`): the same
uniform from the env's own generator picks the same outcome, and the env's state, its wrappers'
counters and every returned value are bit-identical to stepping it, at a seventh of the cost.
MiniGrid envs compute their egocentric view without building grids (:mod:`.minigrid_view`):
the same observation bit for bit, at about a seventh of the cost.

Length (over the 400 lines the tree aims for): the task env, its table step and the table source the
compiled SMDP loop samples from realise one contract (the family's task params on any env) and
must agree bit for bit; they are tested as one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.envs.toy_text.cliffwalking import CliffWalkingEnv
from gymnasium.envs.toy_text.frozen_lake import FrozenLakeEnv
from gymnasium.error import ResetNeeded
from gymnasium.wrappers import OrderEnforcing, TimeLimit

from opt_suite.families.env_kwargs import check_params
from opt_suite.families.gymnasium.ids import register_id
from opt_suite.families.gymnasium.minigrid_view import install_fast_view
from opt_suite.params import FrozenDict

__all__ = [
    "DEFAULT_OBSERVATION_KEY",
    "GymnasiumTaskEnv",
    "TABLE_ENVS",
    "adapted_space",
    "make_inner",
    "observation_entry",
    "step_table",
    "table_stepper",
    "TableSource",
]


def make_inner(
    env_id: str, kwargs: dict[str, Any], max_episode_steps: int, render_mode: str | None = None
) -> gymnasium.Env:
    """``gymnasium.make`` of the wrapped env, with its step cap and without gymnasium's checker.

    The cap is gymnasium's ``TimeLimit`` on the *inner* env, so it counts inner steps (frames),
    not decisions. The passive env checker is off: it warns about third-party envs' spaces (e.g.
    a bool ``Box`` with bounds 0.0 and 1.0), and this wrapper's own output is checked instead.
    """
    extra = {} if render_mode is None else {"render_mode": render_mode}
    return gymnasium.make(
        register_id(env_id),
        max_episode_steps=max_episode_steps,
        disable_env_checker=True,
        **kwargs,
        **extra,
    )


#: The envs whose whole ``step`` is one draw from ``P`` (gymnasium 1.4: ``categorical_sample``
#: over ``P[s][a]``, then ``s`` and ``lastaction`` set), so :func:`step_table` can replace it.
TABLE_ENVS: tuple[type[gymnasium.Env], ...] = (FrozenLakeEnv, CliffWalkingEnv)

#: ``P`` as its envs' step samples it: per state, per action, the outcomes in ``P``'s order, each
#: with its cumulative probability: ``(cumulative, (observation, s', reward, terminated))``.
StepTable = dict[Any, dict[Any, list[tuple[float, tuple[int, Any, float, bool]]]]]

#: A frame's ``(observation, reward, terminated, truncated, info)``, as ``env.step`` returns it.
InnerStep = Callable[[Any], tuple[Any, Any, bool, bool, Any]]


def step_table(env: gymnasium.Env) -> StepTable | None:
    """``env``'s table ``P`` in the form its step samples it, or None when it must be stepped.

    Why: a FrozenLake step is ~5 us, most of a model-free learner's step, and most of it is
    gymnasium's ``categorical_sample``, which builds a list, an array, its ``cumsum`` and an
    ``argmax`` every step (``TimeLimit`` and ``OrderEnforcing`` around it add ~0.35 us). Here the
    cumulative probabilities are computed once per (s, a), by the same ``np.cumsum`` (as Python
    floats: the same values), so :func:`table_stepper` picks the outcome the env would from the
    same uniform. ``P`` is read once: these envs never change it after construction. A test
    steps both ways side by side (gymnasium is pinned to 1.4.*; an upgrade that changed these
    steps would fail it).

    Refused (None), since the step would not be these envs' step: an env that is not exactly one
    of :data:`TABLE_ENVS` (a subclass may override ``step``), a wrapper chain other than
    :func:`make_inner`'s ``TimeLimit(OrderEnforcing(env))``, and human rendering (its step draws
    a frame). Observations need no refusal: the table gives the env's own, and the caller adapts
    them after either step alike.
    """
    inner, order = env.unwrapped, getattr(env, "env", None)
    if (
        type(inner) not in TABLE_ENVS
        or type(env) is not TimeLimit
        or type(order) is not OrderEnforcing
        or order.env is not inner
        or inner.render_mode == "human"
    ):
        return None
    table: StepTable = {}
    # np.cumsum once per distinct list of probabilities (FrozenLake 8x8 has two; one per state
    # and action took the table 0.9 ms to build, 0.4 ms so).
    sums: dict[tuple[Any, ...], list[float]] = {}
    for s, by_action in inner.P.items():  # type: ignore[attr-defined]
        table[s] = {}
        for a, transitions in by_action.items():
            probabilities = tuple(t[0] for t in transitions)
            if probabilities not in sums:
                sums[probabilities] = np.cumsum(np.asarray(probabilities)).tolist()
            outcomes = [(int(s2), s2, float(r), bool(t)) for _, s2, r, t in transitions]
            table[s][a] = list(zip(sums[probabilities], outcomes, strict=True))
    return table


def table_stepper(env: gymnasium.Env, table: StepTable) -> InnerStep:
    """``env.step`` for an env :func:`step_table` accepted, sampled from its ``table``.

    Frame for frame what ``TimeLimit(OrderEnforcing(env))`` does: the same refusal before a
    reset, one uniform from the env's own generator, the first outcome whose cumulative
    probability exceeds it (else the first, as ``argmax`` of all False; a scan, as ``argmax`` is,
    so the sums need no order), the env's ``s`` and ``lastaction`` set, ``TimeLimit``'s counter
    and cap. Its info is None: the caller reads none.
    """
    # Any: gymnasium types TimeLimit's counter as None (it is, until the first reset).
    limit: Any = env
    order, inner = limit.env, env.unwrapped

    def step(action: Any) -> tuple[int, float, bool, bool, None]:
        if not order._has_reset:
            raise ResetNeeded("Cannot call env.step() before calling env.reset()")
        choices = table[inner.s][action]  # type: ignore[attr-defined]
        # The generator itself, not the np_random property (~0.1 us of checking): a reset, checked
        # just above, has set it (the env's reset draws its start state from it).
        u = inner._np_random.random()  # type: ignore[union-attr]
        outcome = choices[0][1]
        for cumulative, candidate in choices:
            if cumulative > u:
                outcome = candidate
                break
        obs, s, reward, terminated = outcome
        inner.s, inner.lastaction = s, action  # type: ignore[attr-defined]
        limit._elapsed_steps += 1
        return obs, reward, terminated, limit._elapsed_steps >= limit._max_episode_steps, None

    return step


@dataclasses.dataclass(frozen=True, eq=False)
class TableSource:
    """A task env's whole step as arrays, for a compiled learner that steps it without calling it.

    Outcome ``j`` of (s, a) is the first whose ``cumulative`` exceeds one uniform of the env's own
    generator, as :func:`table_stepper` picks it; each row ends in one extra outcome with
    cumulative +inf that repeats outcome 0 (``table_stepper``'s choice when no sum exceeds the
    uniform), so a scan that stops at the last column picks exactly what the env would.

    Attributes:
      next_state: int [S, A, K + 1], the observation (= state index) of each outcome.
      cumulative: float [S, A, K + 1].
      reward: float [S, A, K + 1], the reward the task env returns: ``(0.0 + r) * reward_scale``.
      terminated: bool [S, A, K + 1].
      frame_cap: the episode's frames before the env truncates it (one frame per step here).
      env: the task env; its generator (:meth:`generator`) must be read after each reset.
    """

    next_state: np.ndarray
    cumulative: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    frame_cap: int
    env: GymnasiumTaskEnv

    def generator(self) -> np.random.Generator:
        """The wrapped env's own generator, which its step draws from (reset replaces it)."""
        return self.env.inner._np_random  # type: ignore[attr-defined,return-value]


#: The entry of a ``Dict`` observation used when the spec names none: MiniGrid's egocentric view.
DEFAULT_OBSERVATION_KEY = "image"


def observation_entry(space: spaces.Space, observation_key: str | None) -> str | None:
    """The ``Dict`` entry the agents see: ``observation_key``, or the default when it is None.

    The default is the ``image`` entry when there is one (MiniGrid), else the only entry that is
    an array (``Box``) or an index (``Discrete``). None for a space that is not a ``Dict``.

    Raises:
      ValueError: no key given and no default applies, a key the space lacks, a key whose entry is
        neither an array nor an index (e.g. MiniGrid's ``mission`` text), or a key given for a
        space that is not a ``Dict``.
    """
    if not isinstance(space, spaces.Dict):
        if observation_key is not None:
            raise ValueError(
                f"observation_key {observation_key!r} given, but {space} is not a Dict"
            )
        return None
    keys = list(space.spaces)
    usable = [k for k, v in space.spaces.items() if isinstance(v, spaces.Box | spaces.Discrete)]
    if observation_key is None:
        if DEFAULT_OBSERVATION_KEY in usable:
            return DEFAULT_OBSERVATION_KEY
        if len(usable) == 1:
            return usable[0]
        raise ValueError(
            f"the observation space is a Dict (keys: {', '.join(keys)}) with "
            f"{len(usable)} array or index entries and none named {DEFAULT_OBSERVATION_KEY!r}: "
            "set observation_key to the entry the agents should see"
        )
    if observation_key not in space.spaces:
        raise ValueError(
            f"observation_key {observation_key!r} is not a key of the Dict observation "
            f"space (keys: {', '.join(keys)})"
        )
    if observation_key not in usable:
        raise ValueError(
            f"observation_key {observation_key!r} holds {space.spaces[observation_key]}, not an "
            f"array (Box) or an index (Discrete); usable keys: {', '.join(usable) or 'none'}"
        )
    return observation_key


def adapted_space(space: spaces.Space, observation_key: str | None) -> spaces.Space:
    """The observation space the wrapper gives for the env's ``space`` (see the module docstring).

    Raises:
      ValueError: see :func:`observation_entry`.
    """
    key = observation_entry(space, observation_key)
    if key is not None:
        assert isinstance(space, spaces.Dict)  # observation_entry returns a key for Dicts only
        return adapted_space(space[key], None)
    if isinstance(space, spaces.Box) and space.dtype == np.bool_:
        return spaces.Box(0, 255, space.shape, dtype=np.uint8)
    return space


class GymnasiumTaskEnv(gymnasium.Env):
    """One task: a gymnasium env with random start actions, a reward scale and a frame skip.

    ## Action space
    The wrapped env's (random start actions need it ``Discrete``).

    ## Observation space
    The wrapped env's, its ``observation_key`` entry for a ``Dict``, ``uint8`` 0/255 for booleans.

    ## Rewards
    The sum of the wrapped env's rewards over the skipped steps, times ``reward_scale``.

    ## Episode end
    The wrapped env's; truncated after ``max_episode_frames`` inner steps (start actions
    included). If the start actions already end the episode, the first step says so (0 reward,
    0 frames).

    ## Info
    ``frames`` (inner steps this step or reset used) and ``episode_frames``.

    Args:
      env_id: the gymnasium id (``id`` in the spec; ``gymnasium.make`` takes ``id`` itself).
      kwargs: the wrapped env's keyword arguments, already drawn (no lists to choose from).
      observation_key, start_actions, reward_scale, frame_skip: see the family's ``Params``
        and ``TaskParams``.
      max_episode_frames: the family's ``max_episode_steps`` (inner steps per episode); named
        apart because ``gymnasium.make`` would take ``max_episode_steps`` as its own
        ``TimeLimit``, which counts this wrapper's steps, not frames.
      render_mode: ``rgb_array`` when the wrapped env offers it, or None.
    """

    # The most any instance offers (gymnasium.make checks a render_mode against the class); each
    # instance narrows it to what its wrapped env offers.
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 15}

    def __init__(
        self,
        env_id: str = "CartPole-v1",
        kwargs: dict[str, Any] | None = None,
        observation_key: str | None = None,
        max_episode_frames: int = 10_000,
        start_actions: int = 0,
        reward_scale: float = 1.0,
        frame_skip: int = 1,
        render_mode: str | None = None,
    ) -> None:
        from opt_suite.families.gymnasium.family import Params, TaskParams

        # As validate checks them (made outside the spec loader). Params.check() is left out:
        # it builds the very env this constructor is about to build.
        check_params(
            Params(env_id, FrozenDict(kwargs or {}), observation_key, max_episode_frames),
            TaskParams(start_actions, reward_scale, frame_skip),
            rules=False,
        )
        self._env = make_inner(env_id, dict(kwargs or {}), max_episode_frames, render_mode)
        # MiniGrid's observations from the same objects without building grids (~7x cheaper,
        # bit-identical; minigrid_view): only where the env's gen_obs is MiniGrid's own.
        install_fast_view(self._env)
        # One frame of the wrapped env: its own step, or the same step sampled from its table
        # (FrozenLake, CliffWalking: ~0.7 us a frame instead of ~5.5, bit-identical; step_table).
        table = step_table(self._env)
        self._table = table
        self._inner_step: InnerStep = (
            self._env.step if table is None else table_stepper(self._env, table)
        )
        inner_modes = self._env.metadata.get("render_modes", [])
        self.metadata = {
            "render_modes": [m for m in ("rgb_array",) if m in inner_modes],
            "render_fps": self._env.metadata.get("render_fps") or 15,
        }
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        self.render_mode = render_mode
        self._key = observation_entry(self._env.observation_space, observation_key)
        self.observation_space = adapted_space(self._env.observation_space, observation_key)
        self.action_space = self._env.action_space
        self._to_uint8 = (
            isinstance(self.observation_space, spaces.Box)
            and self.observation_space.dtype == np.uint8
            and getattr(self._space_of_inner(), "dtype", None) == np.bool_
        )
        # Observations passed through as the env gives them (no Dict entry, no bool -> uint8).
        self._plain = self._key is None and not self._to_uint8
        if start_actions and not isinstance(self.action_space, spaces.Discrete):
            raise ValueError(
                f"random start actions need a Discrete action space, not {self.action_space}"
            )
        self.start_actions, self.reward_scale = start_actions, reward_scale
        # A step's frame numbers, made once (a range per step cost ~0.1 us of ~1.1).
        self._frame_numbers = range(1, frame_skip + 1)
        self._episode_frames = 0
        self._pending_end: tuple[bool, bool] | None = None
        self._last_obs: Any = None

    @property
    def frame_skip(self) -> int:
        """Inner steps per step (fewer when the episode ends); fixed for the task."""
        return len(self._frame_numbers)

    @property
    def inner(self) -> gymnasium.Env:
        """The env the id names, unwrapped (its own state: what a scripted planner reads)."""
        return self._env.unwrapped

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """A new episode, then ``start_actions`` uniformly random actions (from ``np_random``)."""
        super().reset(seed=seed)
        # One seed fixes both: the wrapped env's seed is drawn from our generator.
        inner_seed = None if seed is None else int(self.np_random.integers(2**31 - 1))
        obs, _ = self._env.reset(seed=inner_seed, options=options)
        self._episode_frames, self._pending_end = 0, None
        for _ in range(self.start_actions):
            action = int(self.np_random.integers(int(self.action_space.n)))  # type: ignore[attr-defined]
            obs, _, terminated, truncated, _ = self._env.step(action)
            self._episode_frames += 1
            if terminated or truncated:
                # Resetting again could loop forever; the first step reports the end instead.
                self._pending_end = (bool(terminated), bool(truncated and not terminated))
                break
        self._last_obs = self._observation(obs)
        return self._last_obs, self._info(self._episode_frames)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Repeat ``action`` ``frame_skip`` times (fewer if the episode ends); scaled reward sum."""
        if self._pending_end is not None:
            terminated, truncated = self._pending_end
            return np.copy(self._last_obs), 0.0, terminated, truncated, self._info(0)
        total = 0.0
        # At least one frame (frame_skip >= 1); after the loop, frames is the number run.
        for frames in self._frame_numbers:  # noqa: B007
            obs, reward, terminated, truncated, _ = self._inner_step(action)
            total += float(reward)
            if terminated or truncated:
                break
        self._episode_frames += frames
        self._last_obs = obs if self._plain else self._observation(obs)
        truncated = bool(truncated) and not terminated
        reward = float(total * self.reward_scale)
        return self._last_obs, reward, bool(terminated), truncated, self._info(frames)

    def table_source(self) -> TableSource | None:
        """This env's step as arrays (:class:`TableSource`), or None where it must be called.

        Only where one step is exactly one draw from the table: a :func:`step_table` env, one
        frame per step, no start actions (a reset is the wrapped env's alone: the caller calls
        :meth:`reset`), observations passed through (``Discrete``) and no rendering.
        """
        if (
            self._table is None
            or self.frame_skip != 1
            or self.start_actions
            or not self._plain
            or self.render_mode is not None
            or not isinstance(self.observation_space, spaces.Discrete)
        ):
            return None
        states, actions = int(self.observation_space.n), int(self.action_space.n)  # type: ignore[attr-defined]
        width = 1 + max(len(c) for by_action in self._table.values() for c in by_action.values())
        next_state = np.zeros((states, actions, width), dtype=np.int64)
        cumulative = np.full((states, actions, width), np.inf)
        reward = np.zeros((states, actions, width))
        terminated = np.zeros((states, actions, width), dtype=bool)
        for s, by_action in self._table.items():
            for a, choices in by_action.items():
                # Padding and the sentinel repeat outcome 0 (cumulative +inf): see TableSource.
                padded = [*choices, *[(np.inf, choices[0][1])] * (width - len(choices))]
                for j, (c, (obs, _, r, t)) in enumerate(padded):
                    cumulative[s, a, j] = np.inf if j >= len(choices) else c
                    next_state[s, a, j], reward[s, a, j], terminated[s, a, j] = obs, r, t
        # The task env's reward: a sum of one frame's reward from 0.0, times the scale.
        scaled = (0.0 + reward) * self.reward_scale
        frame_cap = self._env._max_episode_steps  # type: ignore[attr-defined]
        return TableSource(next_state, cumulative, scaled, terminated, int(frame_cap), self)

    def render(self) -> np.ndarray | None:
        """The wrapped env's RGB picture as ``uint8`` (floats in [0, 1] are scaled by 255)."""
        if self.render_mode != "rgb_array":
            return None
        picture = np.asarray(self._env.render())
        if picture.dtype != np.uint8:
            picture = np.clip(np.rint(picture * 255.0), 0, 255).astype(np.uint8)
        return picture

    def close(self) -> None:
        """Close the wrapped env."""
        self._env.close()

    def _space_of_inner(self) -> spaces.Space:
        space = self._env.observation_space
        if isinstance(space, spaces.Dict) and self._key is not None:
            return space.spaces[self._key]
        return space

    def _observation(self, obs: Any) -> Any:
        if self._key is not None:
            obs = obs[self._key]
        if self._to_uint8:
            return np.asarray(obs, dtype=np.uint8) * np.uint8(255)
        return obs

    def _info(self, frames: int) -> dict[str, Any]:
        return {"frames": frames, "episode_frames": self._episode_frames}
