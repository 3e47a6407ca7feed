"""Entries that name another entry (issue 35's controls): a located error (exit 2), no traceback.

``bc_option``'s ``initial_weights_of`` and ``random_options``' ``count_of`` name another method
entry (``opt_suite/spec/entry_links.py``); their numeric siblings have bounds.
"""

from __future__ import annotations

import pytest

from opt_suite.cli import main

HEAD = (
    "name: linked\n"
    "family: {name: fourrooms, params: {layout: sutton-13x13}}\n"
    "tasks: {count: 4, train: 2, test: 2, seed: 0}\n"
    "methods:\n"
)
TAIL = "evaluation: {episodes: 10, seeds: 1}\n"


def validate(tmp_path, capsys, *entries: str) -> tuple[int, str, str]:
    path = tmp_path / "spec.yaml"
    path.write_text(HEAD + "".join(f"  - {e}\n" for e in entries) + TAIL)
    capsys.readouterr()
    code = main(["validate", str(path)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, str(path), err


@pytest.mark.parametrize(
    ("first", "expected"),
    [
        ("{name: ours, method: primitives}", "entry 'ours' is primitives, expected an entry of "),
        ("{name: other, method: primitives}", "no method entry named 'ours' (expected one of"),
    ],
)
def test_initial_weights_of_names_an_offline_options_entry(tmp_path, capsys, first, expected):
    bc = "{name: bc, method: bc_option, params: {initial_weights_of: ours}}"
    code, path, err = validate(tmp_path, capsys, first, bc)
    assert code == 2 and f"{path}:6:" in err
    assert f"methods[1].params.initial_weights_of: {expected}" in err


def test_initial_weights_of_needs_the_entrys_network(tmp_path, capsys):
    ours = "{name: ours, method: offline_options, params: {hidden_sizes: [8]}}"
    bc = "{name: bc, method: bc_option, params: {initial_weights_of: ours}}"
    code, path, err = validate(tmp_path, capsys, ours, bc)
    assert code == 2 and f"{path}:6:" in err
    assert (
        "methods[1].params.offline_options.hidden_sizes: initial_weights_of 'ours' needs the same "
        "network (expected hidden_sizes (8,) as that entry, got (32, 32))" in err
    )
    matched = bc.replace("ours}}", "ours, offline_options: {hidden_sizes: [8]}}}")
    assert validate(tmp_path, capsys, ours, matched)[0] == 0


def test_count_of_names_an_earlier_entry(tmp_path, capsys):
    ours = "{name: ours, method: offline_options}"
    untrained = "{name: untrained, method: random_options, params: {count_of: ours}}"
    assert validate(tmp_path, capsys, ours, untrained)[0] == 0
    code, path, err = validate(tmp_path, capsys, untrained, ours)
    assert code == 2 and f"{path}:5:" in err
    assert (
        "methods[0].params.count_of: expected the name of an earlier method entry (its discovery "
        "is counted first; one of []), got 'ours' (a later one)" in err
    )


@pytest.mark.parametrize(
    ("params", "key"),
    [
        ("{termination_probability: 1.5}", "termination_probability"),
        ("{held_out: 1.0}", "held_out"),
        ("{cloned_pairs: 0}", "cloned_pairs"),
        ("{batch_size: 0}", "batch_size"),
    ],
)
def test_the_controls_numbers_are_bounded(tmp_path, capsys, params, key):
    code, path, err = validate(
        tmp_path, capsys, f"{{name: bc, method: bc_option, params: {params}}}"
    )
    assert code == 2 and f"{path}:5:" in err and f"methods[0].params.{key}:" in err
