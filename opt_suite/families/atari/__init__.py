"""The Atari family (ale-py): the paper's second domain, and its C++ thread batch of envs.

Until 0.3.0 this path was a module holding the family (now :mod:`.family`); its names are still
answered here, with a DeprecationWarning (see :mod:`opt_suite.moved`).
"""

from typing import Any


def __getattr__(name: str) -> Any:
    from opt_suite.moved import moved_name

    return moved_name(__name__, name)
