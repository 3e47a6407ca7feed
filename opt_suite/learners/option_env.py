"""An option-augmented env: a batched tf-agents ``PyEnvironment`` over primitives + options.

The test-time agent picks among the A primitive actions followed by the m options. Picking option o
runs it — its policy μ_o chooses the primitive actions — until it terminates, and the agent sees
the whole run as one semi-Markov step (Sutton, Precup & Singh 1999):

- reward: the option's rewards discounted within it, R = Σ_{j<k} γ^j r_{j+1};
- discount: γ^k after k primitive steps (0 when the episode terminated), so an agent that computes
  its targets as ``R + discount · V(s')`` — tf-agents' agents do, with their own discount factor
  set to 1 — bootstraps with γ^k, as SMDP Q-learning and SMDP actor-critic do;
- termination: after each of its steps the option stops with probability min(1, β_o(s) + bump·j)
  where j is the number of steps it has run: the paper's appendix adds 0.05 per step, so an option
  lands in states its demonstrations never showed cannot run for ever (at most 20 steps);
- an episode end (terminated or truncated) ends the option too. A primitive is an option that acts
  once and terminates.

Batched over n envs of one task: each sub-env runs its own semi-Markov step. A sub-env's next
primitive step is sent to the :class:`~opt_suite.families.env_batch.EnvBatch` as soon as its last
one is received — Atari's batch runs every sent sub-env at once on its own C++ thread, any other
family's steps it on the spot — and sub-envs are received in the order they were sent, so a run does
not depend on thread timing. The options are evaluated one row at a time, as each sub-env needs its
next action (on Atari through TensorFlow Lite interpreters, about 0.04 ms a frame:
:mod:`opt_suite.learners.lite_options`), and only for options somebody is running. Sub-envs whose
step has ended wait for the others. Episode ends follow tf-agents' batched convention (as
``opt_suite.agents``' adapter): ``LAST`` then, on the next step, ``FIRST`` with reward 0 and
discount 1 for a sub-env reset in place of acting.

Initiation sets (:meth:`~opt_suite.options.OptionSet.initiation`) are not checked here: the
``tf_agents`` learner masks them in its agent's policy over options (:mod:`.initiation_mask`), so
an option is never chosen where it may not start.

Randomness (the options' action and termination draws) comes from one generator per sub-env,
seeded by the caller; budgets count emulator frames (``info["frames"]`` of the env, resets
included; one per step for envs that report none). An episode's ``frames`` are those every sub-env
had used when its last step was received.
"""

from __future__ import annotations

import bisect
import collections
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from opt_suite._tf import tensorflow
from opt_suite.families.env_batch import EnvBatch, SequentialBatch
from opt_suite.options.termination import terminates

tensorflow()  # tf-agents imports TensorFlow; do it quietly first

from tf_agents.environments import py_environment  # noqa: E402
from tf_agents.specs import array_spec  # noqa: E402
from tf_agents.trajectories import time_step as ts  # noqa: E402

__all__ = ["EpisodeRecord", "OptionAugmentedEnv", "OptionProbabilities"]

#: (observations [k, ...], option indices [k]) -> (μ [k, A], β [k]): on each row, the option that
#: row's sub-env is running (only that one: acting evaluates one option per running sub-env, not m).
OptionProbabilities = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def _no_options(observations: np.ndarray, options: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The option probabilities of an env without options: never called (no option is chosen)."""
    raise RuntimeError(f"OptionAugmentedEnv has no options, yet options {options} were chosen")


@dataclasses.dataclass(frozen=True)
class EpisodeRecord:
    """A finished episode of one sub-env.

    Attributes:
      env: the sub-env's index.
      ret: its undiscounted return (the task's rewards, as the env gave them).
      steps: primitive steps it took.
      frames: emulator frames *all* sub-envs had used when it ended (the run's x-axis).
    """

    env: int
    ret: float
    steps: int
    frames: int


def _draw(probabilities: np.ndarray, uniform: float, count: int) -> int:
    """Inverse-CDF draw of an action: the first a whose cumulative probability exceeds u·total.

    ``searchsorted(cumsum(p), u * sum, side="right")`` in plain floats (sequential float64 sums,
    as ``np.cumsum``'s): the same action, without two NumPy calls per row and tick.
    """
    cumulative, total = [], 0.0
    for p in probabilities.tolist():
        total += p
        cumulative.append(total)
    return min(bisect.bisect_right(cumulative, uniform * total), count - 1)


def _observation_spec(space: Any) -> array_spec.BoundedArraySpec:
    """A ``Box`` (frames) or ``Discrete`` (state indices) observation space as a tf-agents spec."""
    if hasattr(space, "n"):
        start = int(getattr(space, "start", 0))
        return array_spec.BoundedArraySpec(
            (), np.int64, start, start + int(space.n) - 1, name="observation"
        )
    low, high = np.min(space.low), np.max(space.high)
    return array_spec.BoundedArraySpec(space.shape, space.dtype, low, high, name="observation")


class OptionAugmentedEnv(py_environment.PyEnvironment):
    """Primitives + options over ``envs``; see the module docstring.

    Args:
      envs: n envs of one task (discrete actions): an :class:`EnvBatch`, or gymnasium envs
        (stepped one by one, as a :class:`SequentialBatch`).
      option_probabilities: the options acting on rows of observations, each row by the option
        its sub-env runs (see :data:`OptionProbabilities`; not called when m = 0).
      num_options: m.
      gamma: the discount per primitive step.
      termination_bump: added to β per step the option has run (paper: 0.05); 0 disables.
      seeds: one seed per sub-env: its first reset's seed and its option draws' generator.
    """

    def __init__(
        self,
        envs: EnvBatch | Sequence[Any],
        option_probabilities: OptionProbabilities | None,
        num_options: int,
        gamma: float,
        termination_bump: float,
        seeds: Sequence[np.random.SeedSequence],
    ) -> None:
        super().__init__(handle_auto_reset=False)
        batch: EnvBatch = envs if isinstance(envs, EnvBatch) else SequentialBatch(list(envs))
        if len(seeds) != batch.num_envs:
            raise ValueError(f"OptionAugmentedEnv: {batch.num_envs} envs and {len(seeds)} seeds")
        if num_options > 0 and option_probabilities is None:
            raise ValueError("OptionAugmentedEnv: options without option_probabilities")
        self._batch = batch
        self._n = batch.num_envs
        space = batch.single_action_space
        self.num_actions = int(getattr(space, "n", 0))
        self.num_options = int(num_options)
        self._probabilities = option_probabilities or _no_options
        self._gamma = float(gamma)
        self._bump = float(termination_bump)
        self._reset_seeds: list[int | None] = [int(s.generate_state(1)[0]) for s in seeds]
        self._rngs = [np.random.default_rng(s) for s in seeds]
        obs_space = batch.single_observation_space
        self._observation_spec = _observation_spec(obs_space)
        self._action_spec = array_spec.BoundedArraySpec(
            (), np.int64, 0, self.num_actions + self.num_options - 1, name="action"
        )
        spec = self._observation_spec
        self._obs = np.zeros((self._n, *spec.shape), spec.dtype)
        self._done = np.zeros(self._n, bool)
        self._episode_return = np.zeros(self._n)
        self._episode_steps = np.zeros(self._n, np.int64)
        self.frames = 0
        self.primitive_steps = 0
        self.option_calls = 0
        self.episodes: list[EpisodeRecord] = []
        # Option usage, counted per sub-env over its running episode (A + m choices, primitives
        # first): decisions that chose each, primitive steps taken while each ran and the frames
        # those steps used. A finished episode's counts go to `usage`, one (calls, steps, frames)
        # triple per entry of `episodes`.
        choices = self.num_actions + self.num_options
        self._calls = np.zeros((self._n, choices), np.int64)
        self._choice_steps = np.zeros((self._n, choices), np.int64)
        self._choice_frames = np.zeros((self._n, choices), np.int64)
        self.usage: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    # tf-agents API ---------------------------------------------------------------------------

    @property
    def batched(self) -> bool:
        """Always batched (n sub-envs)."""
        return True

    @property
    def batch_size(self) -> int:
        """The number of sub-envs."""
        return self._n

    def observation_spec(self) -> array_spec.BoundedArraySpec:
        """The sub-envs' observation space."""
        return self._observation_spec

    def action_spec(self) -> array_spec.BoundedArraySpec:
        """int64 in [0, A + m): primitives first, then the options."""
        return self._action_spec

    def close(self) -> None:
        """Close the sub-envs."""
        self._batch.close()

    def _reset(self) -> ts.TimeStep:
        for i in range(self._n):
            self._reset_env(i)
        zeros = np.zeros(self._n, np.float32)
        return ts.TimeStep(
            np.full(self._n, ts.StepType.FIRST, np.int32), zeros, zeros + 1.0, self._obs.copy()
        )

    def _step(self, action: Any) -> ts.TimeStep:
        actions = np.asarray(action, np.int64).reshape(self._n)
        if np.any(actions < 0) or np.any(actions >= self.num_actions + self.num_options):
            top = self.num_actions + self.num_options
            raise ValueError(
                f"OptionAugmentedEnv: actions must lie in [0, {top}), got {actions.tolist()}"
            )
        restarted = self._done.copy()
        for i in np.flatnonzero(restarted):
            self._reset_env(i)
        option = np.where(actions >= self.num_actions, actions - self.num_actions, -1)
        acting = np.flatnonzero(~restarted)
        self._calls[acting, actions[acting]] += 1  # one decision per acting sub-env
        reward = np.zeros(self._n)
        discount: np.ndarray = np.ones(self._n)
        ran = np.zeros(self._n, np.int64)
        terminated = np.zeros(self._n, bool)
        ended = np.zeros(self._n, bool)

        def decide(i: int) -> int | None:
            """Sub-env i's next primitive action in this SMDP step, or None: its step is over."""
            if option[i] < 0:
                return int(actions[i]) if ran[i] == 0 else None  # a primitive acts once
            mu, beta = self._probabilities(self._obs[i : i + 1], option[i : i + 1])
            self.option_calls += 1
            rng = self._rngs[i]
            if ran[i] > 0 and terminates(rng.random(), beta[0], self._bump, ran[i]):
                return None  # the option terminates in this state
            return _draw(mu[0], rng.random(), self.num_actions)

        # Each sub-env's next step is sent as soon as its last one is received (the batch runs
        # every sent sub-env at once); receiving in the order sent keeps the run deterministic.
        in_flight: collections.deque[int] = collections.deque()
        for i in np.flatnonzero(~restarted).tolist():
            first = decide(i)
            assert first is not None  # an SMDP step takes at least one primitive step
            self._batch.send_at(i, first)
            in_flight.append(i)
        while in_flight:
            i = in_flight.popleft()
            obs, r, term, trunc, frames = self._batch.recv_at(i)
            self._obs[i] = obs
            self.frames += frames
            self.primitive_steps += 1
            self._choice_steps[i, actions[i]] += 1
            self._choice_frames[i, actions[i]] += frames
            reward[i] += discount[i] * r
            discount[i] *= self._gamma
            ran[i] += 1
            self._episode_return[i] += r
            self._episode_steps[i] += 1
            if term or trunc:
                terminated[i], ended[i] = term, True
                self._end_episode(i)
                continue
            following = decide(i)
            if following is not None:
                self._batch.send_at(i, following)
                in_flight.append(i)
        self._done = ended
        step_type = np.where(
            restarted, ts.StepType.FIRST, np.where(ended, ts.StepType.LAST, ts.StepType.MID)
        ).astype(np.int32)
        discount = np.where(terminated, 0.0, discount)
        return ts.TimeStep(
            step_type,
            np.where(restarted, 0.0, reward).astype(np.float32),
            np.where(restarted, 1.0, discount).astype(np.float32),
            self._obs.copy(),
        )

    # Internals -------------------------------------------------------------------------------

    def _reset_env(self, i: int) -> None:
        seed = self._reset_seeds[i]
        self._reset_seeds[i] = None  # later resets continue the seeded stream
        obs, frames = self._batch.reset_at(i, seed)
        self._obs[i] = obs
        self.frames += frames
        self._episode_return[i] = 0.0
        self._episode_steps[i] = 0
        self._calls[i] = 0
        self._choice_steps[i] = 0
        self._choice_frames[i] = 0

    def _end_episode(self, i: int) -> None:
        counts = (self._calls[i], self._choice_steps[i], self._choice_frames[i])
        self.usage.append(tuple(c.copy() for c in counts))  # type: ignore[arg-type]
        self.episodes.append(
            EpisodeRecord(
                i, float(self._episode_return[i]), int(self._episode_steps[i]), self.frames
            )  # fmt: skip
        )
