"""A ``KeyboardInterrupt`` of the user's Ctrl-C, told apart from one a plugin's code raised.

Python raises ``KeyboardInterrupt`` for SIGINT, and the CLI turns SIGTERM into one too
(``opt_suite.cli.run.Terminated``); a plugin can also raise it, or ``SystemExit(0)``, from any code
the suite calls. The user's signal must stop the suite; the plugin's must be that plugin's
failure, never a "Ctrl-C" and never an exit status of 0. Only the standard library is imported:
every layer may use this.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["CODE_EXITS", "raised_by_code", "signals_noted"]

#: What code may raise to end the process, which the suite catches around a plugin's code.
CODE_EXITS = (SystemExit, KeyboardInterrupt)


@contextlib.contextmanager
def signals_noted() -> Iterator[list[int]]:
    """The interrupting signals (SIGINT, SIGTERM) that arrive while the block runs.

    Their handlers run as before; a note is all that is added, so that a caller can tell a
    ``KeyboardInterrupt`` of a real Ctrl-C from one raised by code (:func:`raised_by_code`).
    Handlers are Python's to set only in the main thread, and a signal left at its default action
    (a worker's SIGTERM) kills the process without raising anything, so only Python handlers are
    wrapped.
    """
    arrived: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield arrived
        return
    previous: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(signum)
        if callable(handler):

            def noting(number: int, frame: Any, handler: Any = handler) -> None:
                arrived.append(number)
                handler(number, frame)

            previous[signum] = signal.signal(signum, noting)
    try:
        yield arrived
    finally:
        for number, restored in previous.items():
            signal.signal(number, restored)


def raised_by_code(exc: BaseException, arrived: list[int]) -> bool:
    """Whether ``exc`` is a failure of the code that ran, not the user's signal.

    ``arrived``: the note of the :func:`signals_noted` block the code ran in. Any ``Exception``
    and any ``SystemExit`` is the code's; a ``KeyboardInterrupt`` is, unless a signal arrived.
    """
    if isinstance(exc, KeyboardInterrupt):
        return not arrived
    return isinstance(exc, Exception | SystemExit)
