"""The stages of the protocol, as a type: demonstrations, discovery, evaluation, references.

Every seed of a spec runs the first three in this order (see :mod:`opt_suite.runner.plan`); the
reference returns of its test tasks (the normalised scores' 0 and 1) depend on no other cell.
The runner, the report and the CLI dispatch on :class:`Stage` members, never on spelled-out
strings; the store keeps a stage's ``value`` in its ``kind`` column, and a ``Stage`` compares
equal to that string.
"""

from __future__ import annotations

import enum

__all__ = ["CPU_SECONDS_INFO", "ZERO_SHOT_INFO", "Stage"]

#: The key of a done cell's stored info holding the CPU seconds its job took in the process that
#: ran it (``time.process_time()``: every thread of that process), whatever its stage: the stored
#: form of ``StageRecord.cpu_seconds`` (:mod:`opt_suite.store.records`, which alone writes and
#: reads it). Cells stored before it lack it.
CPU_SECONDS_INFO = "cpu_s"

#: The key of an evaluation cell's stored info holding the returns of ``Learner.zero_shot``: the
#: stored form of ``EvaluationRecord.zero_shot_returns`` (also ``learners.base.ZERO_SHOT_INFO``).
ZERO_SHOT_INFO = "zero_shot_returns"


class Stage(enum.StrEnum):
    """A stage of the protocol; members are listed in the order a seed runs them."""

    DEMONSTRATIONS = "demonstrations"
    DISCOVERY = "discovery"
    EVALUATION = "evaluation"
    #: Last, so that the three before keep their order (and the store its kinds); with no
    #: dependencies, reference cells fill the workers while the others wait on theirs.
    REFERENCES = "references"

    @property
    def order(self) -> int:
        """0, 1, 2, 3: demonstrations first (the scheduler starts long chains first)."""
        return list(Stage).index(self)
