"""Contracts as plain functions: run a component's checks and get back a list of problems.

Gymnasium's ``check_env`` is the model: callable from a script, a notebook or
``opt-suite validate --deep``, no pytest needed. The shipped pytest classes
(:class:`~opt_suite.testing.MethodContract` and the others) are thin wrappers: each of their
``test_contract_*`` calls one ``check_*`` method of the same :class:`Checks` subclass.

    from opt_suite.testing import check_method

    for problem in check_method(MyMethod, MyMethod.Params()):
        print(problem)

Each problem is one line, ``check name: what failed`` (the failed assertion's message, else its
source line, or the exception a check raised, ``SystemExit`` and a ``KeyboardInterrupt`` that no
signal caused included: a component's ``sys.exit(0)`` is a failed check, never a pass or an exit
of the caller). The checks are assertions: under ``python -O``
they cannot run, and say so instead of passing.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from opt_suite.interrupts import CODE_EXITS, raised_by_code, signals_noted

__all__ = ["Checks", "raises"]


class Checks:
    """A component's checks: every ``check_*`` method, run in definition order by :meth:`problems`.

    A check raises ``AssertionError`` (or anything else) when it fails; values several checks
    share (a discovery, a batch of logs) are ``functools.cached_property`` so that they are
    computed once, and a failure to compute them is reported by every check that needs them.
    """

    def check_names(self) -> list[str]:
        """The ``check_*`` methods of this class and its bases, in definition order."""
        names: list[str] = []
        for klass in reversed(type(self).__mro__):
            names += [n for n in vars(klass) if n.startswith("check_") and n not in names]
        return [n for n in names if callable(getattr(self, n))]

    def problems(self) -> list[str]:
        """One line per failed check, ``name: why``; empty when every check passes."""
        if not __debug__:
            return ["the checks are assertions, which python -O removes: run without -O"]
        problems = []
        for name in self.check_names():
            with signals_noted() as arrived:
                try:
                    getattr(self, name)()
                except Exception as exc:  # noqa: BLE001 - every failure is a problem to report
                    problems.append(f"{name.removeprefix('check_').replace('_', ' ')}: {_why(exc)}")
                except CODE_EXITS as exc:
                    # sys.exit(0) or a KeyboardInterrupt in the component's code is its failure;
                    # only the user's own Ctrl-C (a signal arrived) stops the checks.
                    if not raised_by_code(exc, arrived):
                        raise
                    problems.append(f"{name.removeprefix('check_').replace('_', ' ')}: {_why(exc)}")
        return problems


def _why(exc: BaseException) -> str:
    """The failed assertion's message, else its source line; an exception's type and text."""
    if isinstance(exc, AssertionError):
        text = str(exc).strip()
        if text:
            return text.splitlines()[0] if len(text) < 300 else text[:300] + "..."
        frames = traceback.extract_tb(exc.__traceback__)
        return f"failed: {frames[-1].line}" if frames and frames[-1].line else "failed"
    if isinstance(exc, CODE_EXITS):
        return f"raised {type(exc).__name__}({exc}) (the component's code, not a signal)"
    return f"raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip()


def raises(kind: type[BaseException], function: Callable[[], Any], what: str) -> BaseException:
    """Call ``function``; it must raise ``kind`` (``pytest.raises`` without pytest).

    Raises:
      AssertionError: naming ``what`` when it raised nothing (or something else, re-raised).
    """
    try:
        function()
    except kind as exc:
        return exc
    raise AssertionError(f"{what}: expected {kind.__name__}, nothing was raised")
