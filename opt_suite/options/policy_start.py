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
        """The pairs and the cloning settings in one ``.npz`` file."""
        self._savez(
            path,
            observations=self.observations,
            actions=self.actions,
            num_actions=np.array(self._num_actions),
            settings=np.array([self.steps, self.batch_size], dtype=np.int64),
            learning_rate=np.array(self.learning_rate),
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
        )

    @classmethod
    def of(
        cls,
        demonstrations: Sequence[Any],
        num_actions: int,
        steps: int,
        batch_size: int,
        learning_rate: float,
    ) -> PolicyStart:
        """Every (s_t, a_t), t < |h|, of ``demonstrations`` (``Trajectory``s), in order."""
        if not demonstrations:
            raise ValueError("PolicyStart: needs at least one demonstration, got none")
        observations = np.concatenate([np.asarray(h.observations)[:-1] for h in demonstrations])
        actions = np.concatenate([np.asarray(h.actions) for h in demonstrations])
        return cls(observations, actions, num_actions, steps, batch_size, learning_rate)
