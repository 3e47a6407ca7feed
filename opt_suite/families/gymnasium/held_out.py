"""Choices of a drawn kwarg held out for the test tasks (``tasks.vary.held_out_kwargs``).

A kwarg that ``family.params.kwargs`` lists choices for is drawn per task; holding some of its
choices out sends those to the test tasks only and the rest to the train tasks, as four rooms'
``held_out_room`` does with goals (issue 35: the sub-goal MiniGrid family holds sub-goal
sequences out, so the test tasks need the train tasks' skills in a new combination).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["held_out_problems", "split_choices"]


def held_out_problems(
    choices: Mapping[str, tuple], held_out: Mapping[str, object]
) -> list[tuple[str, str]]:
    """Each held-out key has choices, and its held-out ones are some of them, not all.

    Args:
      choices: each drawn kwarg's choices (``family.params.kwargs``' lists).
      held_out: ``tasks.vary.held_out_kwargs``.
    """
    key_name = "held_out_kwargs"
    for key, value in held_out.items():
        if key not in choices:
            return [
                (
                    key_name,
                    f"held_out_kwargs.{key}: expected a kwarg family.params.kwargs lists "
                    f"choices for ({sorted(choices)})",
                )
            ]
        if not isinstance(value, tuple) or not value:
            return [(key_name, f"held_out_kwargs.{key}: expected a non-empty list")]
        unknown = [v for v in value if v not in choices[key]]
        if unknown:
            return [
                (
                    key_name,
                    f"held_out_kwargs.{key}: {unknown[0]!r} is not one of family.params."
                    f"kwargs.{key}'s choices {list(choices[key])}",
                )
            ]
        if set(choices[key]) <= set(value):
            return [
                (
                    key_name,
                    f"held_out_kwargs.{key}: holds out every choice (expected at least one "
                    "left for the train tasks)",
                )
            ]
    return []


def split_choices(
    choices: Mapping[str, tuple], held_out: Mapping[str, object], test: bool
) -> dict[str, tuple]:
    """The choices a test (``test``) or train task draws from: held-out ones or the others."""
    split = dict(choices)
    for key, held in held_out.items():
        kept = held if isinstance(held, tuple) else (held,)
        split[key] = tuple(c for c in choices[key] if (c in kept) == test)
    return split
