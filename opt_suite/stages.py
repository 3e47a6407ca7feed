"""The three stages of the protocol, as a type: demonstrations, discovery, evaluation.

Every seed of a spec runs them in this order (see :mod:`opt_suite.runner.plan`). The runner, the
report and the CLI dispatch on :class:`Stage` members, never on spelled-out strings; the store
keeps a stage's ``value`` in its ``kind`` column, and a ``Stage`` compares equal to that string.
"""

from __future__ import annotations

import enum

__all__ = ["Stage"]


class Stage(enum.StrEnum):
    """A stage of the protocol; members are listed in the order a seed runs them."""

    DEMONSTRATIONS = "demonstrations"
    DISCOVERY = "discovery"
    EVALUATION = "evaluation"

    @property
    def order(self) -> int:
        """0, 1, 2: demonstrations first (the scheduler starts long chains first)."""
        return list(Stage).index(self)
