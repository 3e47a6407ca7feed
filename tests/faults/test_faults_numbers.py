"""Every number a command takes is finite and bounded before use: a usage error, never a traceback.

``validate-objective --max-z nan`` once made every chain "agree" (each comparison with NaN is
false), ``--candidates 1e12`` sampled without end, and a negative ``--seed`` was a traceback.
(``diagnose``'s weights are checked by its own reader of runs.)
"""

from __future__ import annotations

import pytest

from opt_suite.cli import main
from opt_suite.cli.numbers import integer, real

ABSURD = ["nan", "inf", "-inf", "1e308", "-1", "99999999999999999999999", "x", ""]


@pytest.mark.parametrize(
    ("command", "flag"),
    [
        ("validate-objective", "--max-z"),
        ("validate-objective", "--candidates"),
        ("validate-objective", "--seed"),
        ("validate-objective", "--trials"),
        ("show-options", "--task"),
        ("show-options", "--seed"),
        ("show-options", "--episodes"),
        ("export-demos", "--seed"),
        ("compare", "--permutations"),
        ("compare", "--alpha"),
    ],
)
def test_absurd_numbers_are_usage_errors_naming_the_flag(capsys, command, flag):
    positional = {"compare": ["DIR", "--baseline", "B"]}.get(command, ["DIR"])
    if command == "validate-objective":
        positional = []
    for value in ABSURD:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:
            main([command, *positional, f"{flag}={value}"])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and flag in err and "Traceback" not in err, (value, err)


def test_the_types_accept_their_bounds_and_nothing_beyond():
    assert integer(0, 5)("0") == 0 and integer(0, 5)("5") == 5 and integer(-2, 0)("-2") == -2
    assert real(0, 1, open_low=True)("1") == 1.0 and real(0, 1)("0") == 0.0
    for parse, text in [
        (integer(0, 5), "6"),
        (integer(0, 5), "1.0"),
        (real(0, 1, open_low=True), "0"),
        (real(0, 1), "1.0000001"),
    ]:
        with pytest.raises(Exception, match="expected"):
            parse(text)
