"""Atari 2600 games (ale-py) as task families: the paper's second domain (Sec. 4.2).

The paper varies three things per task, one per part of the MDP:

- the **initial-state distribution**: every episode starts with ``start_actions`` uniformly random
  actions, a number the task draws once, uniform in 1..20 ("let the agent act randomly for that
  number of time-steps before learning");
- the **reward function**: every reward is multiplied by ``reward_scale``, drawn uniform in (0, 10];
- the **transition function**: each action is repeated for ``frame_skip`` emulator frames, drawn
  from a set given in the spec.

Everything else is fixed and explicit, because ale-py's defaults would silently undo a variation:
sticky actions are off (``repeat_action_probability = 0``; ALE's v5 default 0.25 would make every
task stochastic in the same way) and rewards are *not* clipped (clipping to [-1, 1], the
``AtariVectorEnv`` default, would erase the reward scale).

Observations are what the paper's options see: the last two frames, 84x84 grayscale, stacked on the
last axis (``uint8 [84, 84, 2]``, channels-last as TensorFlow's convolutions expect). Each frame is
the pixel-wise maximum of the last two emulator frames of the skip (Atari games flicker sprites on
alternate frames) shrunk by area averaging; a reset's previous frame is blank. All of it is done
exactly as ale-py's C++ ``AtariVectorEnv`` does it (OpenCV's ``INTER_AREA``, in its float32 order),
so frames are bit-identical to its — a test checks it frame for frame. Budgets and episode caps
count *emulator frames*, so tasks with different frame skips are compared on equal terms: every
step's ``info["frames"]`` says how many frames it used (a reset reports those of the random start
actions), and an episode is truncated once it has used ``max_episode_frames``.

Batched acting: ``ale_py.vector_env.AtariVectorEnv`` steps its sub-envs in lockstep and only knows
random *no-op* starts (``noop_max``), so it cannot give one sub-env its random start actions while
the others wait. Acting with options (some sub-envs step while others wait) therefore uses
:meth:`Atari.make_env_batch`: one single-env ``AtariVectorEnv`` per sub-env, each on its own C++
thread, with the start actions played from Python (:mod:`opt_suite.families.atari.threads`). The
experts' lockstep batches use :func:`make_vector_env`, gymnasium's ``SyncVectorEnv`` of this env.

The family's params (``Params``, ``Variation``, ``TaskParams``) live in
:mod:`opt_suite.families.atari.params`, which the thread batch reads too; they are re-exported
here, their documented home.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, TypeAlias

import gymnasium
import numpy as np

from opt_suite.families.atari.params import Params, TaskParams, Variation, installed_games
from opt_suite.families.base import Task, TaskFamily
from opt_suite.families.env_kwargs import check_params
from opt_suite.families.paper_variations import draw

__all__ = [
    "Atari",
    "AtariTaskEnv",
    "Params",
    "Variation",
    "TaskParams",
    "installed_games",
    "make_vector_env",
]

FRAME_SIZE = 84  # the paper's (and DQN's) 84x84 frames
STACK = 2  # "the previous two frames as input"


@functools.cache
def _minimal_actions(game: str) -> int:
    """How many actions the game's minimal action set has (its ROM is loaded, not emulated)."""
    import ale_py
    from ale_py import roms

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)  # no banner in `validate`
    ale = ale_py.ALEInterface()
    rom = roms.get_rom_path(game)
    if rom is None:
        raise ValueError(f"ale-py ships no ROM named {game!r}")
    ale.loadROM(rom)
    return len(ale.getMinimalActionSet())


class Atari(TaskFamily):
    """An ALE game with the paper's three task variations; see the module docstring."""

    name = "atari"
    description = "Atari 2600 (ale-py): random start actions, reward scale, frame skip per task"
    env_id = "opt_suite/Atari-v0"
    frame_unit = "emulator frames"  # each action repeats for frame_skip frames, all counted
    Params: TypeAlias = Params
    Variation: TypeAlias = Variation
    TaskParams: TypeAlias = TaskParams

    def __init__(self, params: Params | None = None) -> None:
        super().__init__(Params() if params is None else params)

    @property
    def observation_space(self) -> gymnasium.spaces.Box:
        """The last two 84x84 grayscale frames, uint8 [84, 84, 2]."""
        return gymnasium.spaces.Box(0, 255, (FRAME_SIZE, FRAME_SIZE, STACK), dtype=np.uint8)

    @property
    def action_space(self) -> gymnasium.spaces.Discrete:
        """``Discrete(18)`` for the full action set, else the game's minimal action set."""
        if self.params.action_set == "full":
            return gymnasium.spaces.Discrete(18)
        return gymnasium.spaces.Discrete(_minimal_actions(self.params.game))

    @property
    def instance_name(self) -> str:
        """``atari-<game>``, e.g. ``atari-breakout``."""
        return f"{self.name}-{self.params.game}"

    def sample_tasks(self, variation: Variation, count: int, rng: np.random.Generator) -> list[Any]:
        """Start actions ~ U{lo..hi}, reward scale ~ U(lo, hi], frame skip ~ U(set)."""
        problems = variation.check()
        if problems:
            raise ValueError("; ".join(f"tasks.vary.{key}: {msg}" for key, msg in problems))
        tasks = []
        for _ in range(count):
            start_actions, reward_scale, frame_skip = draw(variation, rng)
            tasks.append(TaskParams(start_actions, reward_scale, frame_skip))
        return tasks

    def make_env(self, task: Task | TaskParams, **kwargs: Any) -> gymnasium.Env:
        """``gymnasium.make("opt_suite/Atari-v0", **Params, **TaskParams, **kwargs)``."""
        task_params = task.params if isinstance(task, Task) else task
        flat = dataclasses.asdict(self.params) | dataclasses.asdict(task_params)
        return gymnasium.make(self.env_id, **flat, **kwargs)

    def make_env_batch(self, task: Task | TaskParams, num_envs: int, max_steps: int) -> Any:
        """``num_envs`` copies of ``task`` stepped on C++ threads, any subset at a time.

        The option-augmented env's batch (:mod:`opt_suite.families.env_batch`): an
        :class:`~opt_suite.families.atari.threads.AtariThreadBatch`, the same task frame for frame.
        """
        from opt_suite.families.atari.threads import thread_batch

        task_params = task.params if isinstance(task, Task) else task
        return thread_batch(self, task_params, num_envs, max_steps)

    def make_vector_env(self, task: Task | TaskParams, num_envs: int) -> gymnasium.vector.VectorEnv:
        """``num_envs`` copies of ``task``'s env, batched (see :func:`make_vector_env`)."""
        return make_vector_env(self, task, num_envs)


def make_vector_env(
    family: Atari, task: Task | TaskParams, num_envs: int
) -> gymnasium.vector.VectorEnv:
    """A ``SyncVectorEnv`` of ``num_envs`` copies of one task (gymnasium's next-step autoreset).

    Seed it with ``reset(seed=s)``: sub-env i gets seed ``s + i``.
    """
    return gymnasium.vector.SyncVectorEnv(
        [functools.partial(family.make_env, task) for _ in range(num_envs)],
        autoreset_mode=gymnasium.vector.AutoresetMode.NEXT_STEP,
    )


def _area_taps(source: int, target: int) -> tuple[np.ndarray, np.ndarray]:
    """OpenCV's ``INTER_AREA`` shrink of a length-``source`` axis to ``target``: (indices, weights).

    ale-py's ``AtariVectorEnv`` resizes with ``cv::resize(..., INTER_AREA)``; this table is the one
    OpenCV builds (``computeResizeAreaTab``), so that our frames are *bit-identical* to it (a test
    checks thousands of frames) and the two back ends of one task are one task. Bin j covers source
    coordinates [j s, j s + s) with s = 1 / (target / source) (OpenCV's double arithmetic); its
    taps, in OpenCV's order, are the partly covered pixel on the left (if it is covered by more
    than 1e-3), the fully covered ones, and the partly covered one on the right, each weighted by
    its overlap over the bin's width, rounded to float32. Returned as K slots: ``out[j] = sum_k
    weights[k, j] * x[indices[k, j]]`` summed in slot order; unused slots have weight 0 (adding
    ``x * 0`` leaves a float sum unchanged), so each bin adds its taps in OpenCV's order.
    """
    scale = 1.0 / (target / source)
    taps: list[list[tuple[int, float]]] = []
    for j in range(target):
        start = j * scale
        end = start + scale
        width = min(scale, source - start)
        first, last = math.ceil(start), math.floor(end)
        last = min(last, source - 1)
        first = min(first, last)
        bin_taps = []
        if first - start > 1e-3:
            bin_taps.append((first - 1, (first - start) / width))
        bin_taps += [(i, 1.0 / width) for i in range(first, last)]
        if end - last > 1e-3:
            bin_taps.append((last, min(min(end - last, 1.0), width) / width))
        taps.append(bin_taps)
    slots = max(len(t) for t in taps)
    indices = np.zeros((slots, target), dtype=np.intp)
    weights = np.zeros((slots, target), dtype=np.float32)
    for j, bin_taps in enumerate(taps):
        for k, (i, w) in enumerate(bin_taps):
            indices[k, j], weights[k, j] = i, np.float32(w)
    return indices, weights


def _resize(frame: np.ndarray, rows: tuple, cols: tuple) -> np.ndarray:
    """``frame`` uint8 [H, W] shrunk to uint8 [84, 84] exactly as OpenCV's ``INTER_AREA``.

    In OpenCV's float32 arithmetic and order (``resizeArea_``): each source row is first summed
    horizontally into its bins, ``buf = ((0 + x0 w0) + x1 w1) + ...``; each output row is then
    ``((b0 buf0) + b1 buf1) + ...`` over its source rows; the result is rounded half to even
    (``cvRound``) and saturated to 0..255. No matrix product: BLAS threads on a shared machine
    made one 100x slower than the emulator.
    """
    (row_idx, row_w), (col_idx, col_w) = rows, cols
    pixels = frame.astype(np.float32)
    wide = np.zeros((pixels.shape[0], col_idx.shape[1]), dtype=np.float32)
    for i, w in zip(col_idx, col_w, strict=True):
        wide += pixels[:, i] * w
    out = row_w[0][:, None] * wide[row_idx[0]]
    for i, w in zip(row_idx[1:], row_w[1:], strict=True):
        out += w[:, None] * wide[i]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


class AtariTaskEnv(gymnasium.Env):
    """One Atari task as a gymnasium env; see the module docstring for what varies and why.

    Built on ale-py's gymnasium ``AtariEnv`` (which loads the ROM, seeds the emulator and knows the
    action sets) with ``frameskip=1``; the frame skip, max-pooling, resizing and frame stack happen
    here, fetching only the two screens each step needs.

    ## Action space
    ``Discrete(n)``: the game's minimal action set (Breakout: 4, Amidar: 10) or all 18.

    ## Observation space
    ``Box(0, 255, (84, 84, 2), uint8)``: the previous and the current frame.

    ## Rewards
    The game's score change over the skipped frames times ``reward_scale``; never clipped.

    ## Episode end
    Terminated when the game is over; truncated after ``max_episode_frames`` emulator frames
    (counting the random start actions).

    ## Info
    ``frames`` (emulator frames this step or reset used), ``episode_frames``, ``lives``.
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 15}

    def __init__(
        self,
        game: str = "breakout",
        action_set: str = "minimal",
        max_episode_frames: int = 108_000,
        start_actions: int = 1,
        reward_scale: float = 1.0,
        frame_skip: int = 4,
        render_mode: str | None = None,
    ) -> None:
        from ale_py.env import AtariEnv

        params = Params(game, action_set, max_episode_frames)  # type: ignore[arg-type]
        task = TaskParams(start_actions, reward_scale, frame_skip)
        check_params(params, task)  # as validate checks them: made outside the spec loader
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        self.params, self.task_params, self.render_mode = params, task, render_mode
        self._atari = AtariEnv(
            game=game,
            obs_type="grayscale",
            frameskip=1,
            repeat_action_probability=0.0,  # sticky actions off: pinned, not ale-py's 0.25
            full_action_space=action_set == "full",
            render_mode="rgb_array" if render_mode == "rgb_array" else None,
        )
        self.ale = self._atari.ale
        self._actions = self._atari._action_set
        self.action_space = gymnasium.spaces.Discrete(len(self._actions))
        self.observation_space = gymnasium.spaces.Box(
            0, 255, (FRAME_SIZE, FRAME_SIZE, STACK), dtype=np.uint8
        )
        height, width = self.ale.getScreenDims()
        self._rows, self._cols = _area_taps(height, FRAME_SIZE), _area_taps(width, FRAME_SIZE)
        self._screens = np.zeros((2, height, width), dtype=np.uint8)
        self._stack = np.zeros((FRAME_SIZE, FRAME_SIZE, STACK), dtype=np.uint8)
        self._episode_frames = 0

    @property
    def action_meanings(self) -> list[str]:
        """Names of the actions, e.g. ``['NOOP', 'FIRE', 'RIGHT', 'LEFT']``."""
        return self._atari.get_action_meanings()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """A new game, then ``start_actions`` uniformly random actions (from ``np_random``)."""
        super().reset(seed=seed)
        if seed is not None:
            # Emulator seed from our generator, so one seed fixes both (ALE is deterministic
            # without sticky actions; the seed matters only to games that read ALE's RNG).
            self._atari.seed_game(int(self.np_random.integers(2**31 - 1)))
            self._atari.load_game()
        self.ale.reset_game()
        self._episode_frames = 0
        frames = 0
        # As AtariVectorEnv: no previous frame yet, so the stack starts from zeros, and the pool's
        # second screen is blank (max with zeros: the first frame as it is).
        self._grab(0)
        self._screens[1] = 0
        self._stack[...] = 0
        self._push_frame()
        for _ in range(self.task_params.start_actions):
            _, step_frames = self._act(int(self.np_random.integers(len(self._actions))))
            frames += step_frames
            if self.ale.game_over() or self._episode_frames >= self.params.max_episode_frames:
                break  # the starts ended the episode: starting again could loop; the step says so
        return self._stack.copy(), self._info(frames)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Repeat ``action`` for ``frame_skip`` frames; the scaled, unclipped score change."""
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} not in {self.action_space}")
        raw, frames = self._act(int(action))
        terminated = bool(self.ale.game_over())
        truncated = not terminated and self._episode_frames >= self.params.max_episode_frames
        reward = float(raw * self.task_params.reward_scale)
        return self._stack.copy(), reward, terminated, truncated, self._info(frames)

    def render(self) -> np.ndarray | None:
        """The current RGB screen (210x160x3) in ``rgb_array`` mode."""
        if self.render_mode == "rgb_array":
            return self.ale.getScreenRGB()
        return None

    def close(self) -> None:
        """Release the emulator."""
        self._atari.close()

    # Internals ------------------------------------------------------------------------------

    def _act(self, action: int) -> tuple[float, int]:
        """Repeat one action; returns the raw score change and the frames used.

        Frame for frame what ``AtariVectorEnv`` does (ale-py's ``PreprocessedEnv::step``), so that
        both back ends give the same observations: the last two screens of the skip are pooled;
        a skip cut short by the game's end or the frame cap stops *before* grabbing, so the pool
        then holds the previous step's screens (a terminal observation, never bootstrapped from).
        """
        ale_action, skip, reward, frames = self._actions[action], self.task_params.frame_skip, 0, 0
        for skip_id in range(skip, 0, -1):
            reward += self.ale.act(ale_action)
            frames += 1
            self._episode_frames += 1
            if self.ale.game_over() or self._episode_frames >= self.params.max_episode_frames:
                break
            if skip_id <= 2:
                self._grab(skip_id - 1)  # screen 1: second to last of the skip; screen 0: last
        self._push_frame()
        return float(reward), frames

    def _grab(self, slot: int) -> None:
        self.ale.getScreenGrayscale(self._screens[slot])

    def _push_frame(self) -> None:
        # In place, as the C++: screen 0 keeps the pooled frame until it is grabbed again.
        np.maximum(self._screens[0], self._screens[1], out=self._screens[0])
        self._stack[..., 0] = self._stack[..., 1]
        self._stack[..., 1] = _resize(self._screens[0], self._rows, self._cols)

    def _info(self, frames: int) -> dict[str, Any]:
        return {
            "frames": frames,
            "episode_frames": self._episode_frames,
            "lives": int(self.ale.lives()),
        }
