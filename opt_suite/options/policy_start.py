"""No options, but a start for the learner's policy: behaviour cloning on demonstrations.

The standard jump-start control of a demonstration-based method (issue 25): the test-time agent
learns over the primitives alone, as with ``primitives``, but its policy is first trained to
imitate the demonstrations. A method cannot build the learner's network (the learner owns its
architecture), so it hands the learner what to clone instead: every demonstrated (observation,
action) pair and how long to clone for. A learner that has a policy to initialise
(``Learner.clones_policy``: the ``tf_agents`` PPO agent) clones its actor on them before its first
step; the others have none (a Q table has no policy to imitate with) and the runner refuses the
pair, as ``validate`` does before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from opt_suite.options.base import OptionSet, PathOrFile

__all__ = ["PolicyStart"]


class PolicyStart(OptionSet):
    """An empty option set carrying behaviour-cloning targets for the learner's policy.

    Args:
      observations: [N, *observation_shape], every demonstrated observation s_t (t < |h|).
      actions: int [N], the action a_t demonstrated at it.
      num_actions: A.
      steps: Adam steps of cloning.
      batch_size: pairs per Adam step.
      learning_rate: Adam's step size.
      held_out: bool [N], the pairs of the demonstrations held out of a second clone that scores
        the fit out of sample (``Learner.clones_policy``); None: no held-out fit. The policy
        itself is cloned on every pair whatever it says.
    """

    kind = "policy_start"

    def __init__(
        self,
        observations: Any,
        actions: Any,
        num_actions: int,
        steps: int,
        batch_size: int,
        learning_rate: float,
        held_out: Any = None,
    ) -> None:
        self.observations = np.asarray(observations)
        self.actions = np.asarray(actions, dtype=np.int64)
        self._num_actions = int(num_actions)
        self.steps, self.batch_size = int(steps), int(batch_size)
        self.learning_rate = float(learning_rate)
        if self.actions.ndim != 1 or len(self.actions) != len(self.observations):
            raise ValueError(
                f"PolicyStart: expected N observations and N actions, got "
                f"{self.observations.shape} and {self.actions.shape}"
            )
        if len(self.actions) == 0:
            raise ValueError("PolicyStart: no demonstrated step to clone")
        if self.actions.min() < 0 or self.actions.max() >= self._num_actions:
            raise ValueError(f"PolicyStart: an action outside [0, {self._num_actions})")
        self.held_out = None if held_out is None else np.asarray(held_out, dtype=bool)
        if self.held_out is not None and self.held_out.shape != self.actions.shape:
            raise ValueError(
                f"PolicyStart: expected a held-out mask of shape {self.actions.shape}, got "
                f"{self.held_out.shape}"
            )

    @property
    def names(self) -> tuple[str, ...]:
        """No options."""
        return ()

    @property
    def num_actions(self) -> int:
        """A."""
        return self._num_actions

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """The shape of one observation."""
        return tuple(int(d) for d in self.observations.shape[1:])

    def probabilities(self, observations: Any) -> tuple[np.ndarray, np.ndarray]:
        """No options: mu [n, 0, A], beta [n, 0]."""
        n = len(observations)
        return np.zeros((n, 0, self._num_actions)), np.zeros((n, 0))

    def non_finite(self) -> str | None:
        """The first non-finite demonstrated observation, if any."""
        if np.issubdtype(self.observations.dtype, np.floating):
            bad = ~np.isfinite(self.observations.reshape(len(self.observations), -1)).all(axis=1)
            if bad.any():
                return f"demonstrated observation {int(np.argmax(bad))}"
        return None

    def save(self, path: PathOrFile) -> None:
        """The pairs and the cloning settings in one ``.npz`` file (the mask only when set)."""
        # Without a mask the file keeps the bytes it always had.
        mask = {} if self.held_out is None else {"held_out": self.held_out}
        self._savez(
            path,
            observations=self.observations,
            actions=self.actions,
            num_actions=np.array(self._num_actions),
            settings=np.array([self.steps, self.batch_size], dtype=np.int64),
            learning_rate=np.array(self.learning_rate),
            **mask,
        )

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> PolicyStart:
        """Rebuild from the arrays of a file written by :meth:`save`."""
        steps, batch_size = (int(v) for v in arrays["settings"])
        return cls(
            arrays["observations"],
            arrays["actions"],
            int(arrays["num_actions"]),
            steps,
            batch_size,
            float(arrays["learning_rate"]),
            arrays.get("held_out"),
        )

    @classmethod
    def of(
        cls,
        demonstrations: Sequence[Any],
        num_actions: int,
        steps: int,
        batch_size: int,
        learning_rate: float,
        held_out: frozenset[int] | None = None,
    ) -> PolicyStart:
        """Every (s_t, a_t), t < |h|, of ``demonstrations`` (``Trajectory``s), in order.

        ``held_out``: indices of whole demonstrations whose pairs the mask holds out (None or
        empty: no mask).
        """
        if not demonstrations:
            raise ValueError("PolicyStart: needs at least one demonstration, got none")
        observations = np.concatenate([np.asarray(h.observations)[:-1] for h in demonstrations])
        actions = np.concatenate([np.asarray(h.actions) for h in demonstrations])
        mask = None
        if held_out:
            lengths = [len(np.asarray(h.actions)) for h in demonstrations]
            mask = np.repeat([i in held_out for i in range(len(lengths))], lengths)
        return cls(observations, actions, num_actions, steps, batch_size, learning_rate, mask)
