"""Options tabulated over every state index: acting is a table look-up, not a network call."""

from __future__ import annotations

from typing import Any

import numpy as np

from opt_suite.options.base import OptionSet, PathOrFile

__all__ = ["TabularOptionSet"]


class TabularOptionSet(OptionSet):
    """m options as tables over S state indices (tabular families' observations).

    Attributes:
      mu: float [m, S, A], mu[o, s, a] = probability that option o takes action a in state s.
      beta: float [m, S], beta[o, s] = probability that option o terminates on reaching s.
      names: m readable names (default ``option-0``, ...).
    """

    kind = "tabular"

    def __init__(self, mu: np.ndarray, beta: np.ndarray, names: tuple[str, ...] = ()) -> None:
        mu, beta = np.asarray(mu), np.asarray(beta)
        if mu.ndim != 3 or beta.ndim != 2 or mu.shape[:2] != beta.shape:
            raise ValueError(
                f"TabularOptionSet: expected mu [m, S, A] and beta [m, S], "
                f"got {mu.shape} and {beta.shape}"
            )
        names = tuple(names) or tuple(f"option-{i}" for i in range(mu.shape[0]))
        if len(names) != mu.shape[0]:
            raise ValueError(f"TabularOptionSet: {mu.shape[0]} options but {len(names)} names")
        self._mu, self._beta, self._names = mu, beta, names

    @property
    def mu(self) -> np.ndarray:
        """The action tables, float [m, S, A]."""
        return self._mu

    @property
    def beta(self) -> np.ndarray:
        """The termination tables, float [m, S]."""
        return self._beta

    @property
    def names(self) -> tuple[str, ...]:
        """The m readable names."""
        return self._names

    @property
    def num_actions(self) -> int:
        """A."""
        return int(self._mu.shape[2])

    @property
    def num_states(self) -> int:
        """S, the number of state indices the tables cover."""
        return int(self._mu.shape[1])

    @classmethod
    def empty(cls, num_states: int, num_actions: int) -> TabularOptionSet:
        """No options at all: the learner uses primitives alone."""
        return cls(np.zeros((0, num_states, num_actions)), np.zeros((0, num_states)), ())

    def probabilities(self, observations: Any) -> tuple[np.ndarray, np.ndarray]:
        """Table rows mu [n, m, A] and beta [n, m] at int state indices [n]."""
        states = np.asarray(observations, dtype=np.int64).reshape(-1)
        if states.size and (states.min() < 0 or states.max() >= self.num_states):
            raise ValueError(
                f"TabularOptionSet: observations must be state indices in [0, {self.num_states})"
            )
        return self._mu[:, states].transpose(1, 0, 2), self._beta[:, states].T

    def non_finite(self) -> str | None:
        """``mu`` or ``beta`` when it holds a NaN/inf."""
        for name, table in (("mu", self._mu), ("beta", self._beta)):
            if not np.all(np.isfinite(table)):
                return name
        return None

    def save(self, path: PathOrFile) -> None:
        """Write mu, beta and names to an ``.npz`` file."""
        self._savez(path, mu=self._mu, beta=self._beta, names=np.array(self._names, dtype=str))

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> TabularOptionSet:
        """The set of a file's arrays (``mu``, ``beta``, ``names``)."""
        return cls(arrays["mu"], arrays["beta"], tuple(str(n) for n in arrays["names"]))

    def __repr__(self) -> str:
        return f"TabularOptionSet(m={len(self)}, S={self.num_states}, A={self.num_actions})"
