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
      initiation: bool [m, S] or None: initiation[o, s] = whether option o may start in state s
        (None: everywhere, and nothing is written to the file, so such files stay as they were).

    Raises:
      ValueError: shapes that disagree, or an option whose initiation set is empty (it could never
        be chosen: a set built wrong, not a choice).
    """

    kind = "tabular"

    def __init__(
        self,
        mu: np.ndarray,
        beta: np.ndarray,
        names: tuple[str, ...] = (),
        initiation: np.ndarray | None = None,
    ) -> None:
        mu, beta = np.asarray(mu), np.asarray(beta)
        if mu.ndim != 3 or beta.ndim != 2 or mu.shape[:2] != beta.shape:
            raise ValueError(
                f"TabularOptionSet: expected mu [m, S, A] and beta [m, S], "
                f"got {mu.shape} and {beta.shape}"
            )
        names = tuple(names) or tuple(f"option-{i}" for i in range(mu.shape[0]))
        if len(names) != mu.shape[0]:
            raise ValueError(f"TabularOptionSet: {mu.shape[0]} options but {len(names)} names")
        if initiation is not None:
            initiation = np.asarray(initiation)
            if initiation.shape != beta.shape or initiation.dtype != bool:
                raise ValueError(
                    f"TabularOptionSet: expected a bool initiation [m, S] = {beta.shape}, "
                    f"got {initiation.dtype} {initiation.shape}"
                )
            empty = [names[o] for o in np.flatnonzero(~initiation.any(axis=1))]
            if empty:
                raise ValueError(
                    f"TabularOptionSet: option(s) {', '.join(empty)} may start in no state (empty "
                    "initiation set)"
                )
        self._mu, self._beta, self._names = mu, beta, names
        self._initiation = initiation

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
    def initiation_table(self) -> np.ndarray | None:
        """The initiation sets, bool [m, S], or None (every option may start everywhere)."""
        return self._initiation

    @property
    def has_initiation(self) -> bool:
        """Whether an initiation table was given."""
        return self._initiation is not None

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
        states = self._states(observations)
        return self._mu[:, states].transpose(1, 0, 2), self._beta[:, states].T

    def initiation(self, observations: Any) -> np.ndarray:
        """Table rows bool [n, m] at int state indices [n] (all True without a table)."""
        states = self._states(observations)
        if self._initiation is None:
            return np.ones((states.size, len(self)), dtype=bool)
        return self._initiation[:, states].T

    def uncovered(self, states: Any) -> tuple[str, ...]:
        """The options that may start in none of ``states`` (e.g. every state of a demonstration).

        A method that builds initiation sets from demonstrations calls this and raises on a
        non-empty answer: such an option could never be used where the demonstrations went.
        """
        if self._initiation is None:
            return ()
        rows = self._initiation[:, self._states(states)]
        return tuple(self._names[o] for o in np.flatnonzero(~rows.any(axis=1)))

    def _states(self, observations: Any) -> np.ndarray:
        states = np.asarray(observations, dtype=np.int64).reshape(-1)
        if states.size and (states.min() < 0 or states.max() >= self.num_states):
            raise ValueError(
                f"TabularOptionSet: observations must be state indices in [0, {self.num_states})"
            )
        return states

    def non_finite(self) -> str | None:
        """``mu`` or ``beta`` when it holds a NaN/inf."""
        for name, table in (("mu", self._mu), ("beta", self._beta)):
            if not np.all(np.isfinite(table)):
                return name
        return None

    def save(self, path: PathOrFile) -> None:
        """Write mu, beta, names (and the initiation table, when there is one) to an ``.npz``."""
        extra = {} if self._initiation is None else {"initiation": self._initiation}
        names = np.array(self._names, dtype=str)
        self._savez(path, mu=self._mu, beta=self._beta, names=names, **extra)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> TabularOptionSet:
        """The set of a file's arrays (``mu``, ``beta``, ``names``, optional ``initiation``)."""
        names = tuple(str(n) for n in arrays["names"])
        return cls(arrays["mu"], arrays["beta"], names, arrays.get("initiation"))

    def __repr__(self) -> str:
        return f"TabularOptionSet(m={len(self)}, S={self.num_states}, A={self.num_actions})"
