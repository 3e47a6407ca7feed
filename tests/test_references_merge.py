"""``merge-stores`` joins the shards' reference returns into one run's file, byte for byte."""

from __future__ import annotations

import pytest

from opt_suite.runner.references import ReferenceError, merge_references
from opt_suite.store.files import references_file
from opt_suite.store.sealed import read_sealed, write_sealed

HASH = "ab" * 32


def _payload(seeds, random, expert):
    return {
        "format": "opt-suite-references",
        "version": 2,
        "spec_hash": HASH,
        "expert": "optimal expert",
        "seeds": seeds,
        "tasks": [0, 1],
        "random": random,
        "expert_returns": expert,
    }


def _shard(root, name, payload):
    path = references_file(root / name, HASH)
    path.parent.mkdir(parents=True)
    write_sealed(path, payload)
    (path.parent / "pair.json").write_text("{}")  # a (seed, task) cache file, copied as it is
    return root / name


def test_two_shards_join_into_the_file_of_one_run(tmp_path):
    one = _shard(tmp_path, "s1", _payload([0, 2], [[0.1, 0.2], [0.5, 0.6]], [[1, 2], [5, 6]]))
    two = _shard(tmp_path, "s2", _payload([1], [[0.3, 0.4]], [[3, 4]]))
    whole = _payload([0, 1, 2], [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], [[1, 2], [3, 4], [5, 6]])
    reference = tmp_path / "whole" / "spec.json"
    reference.parent.mkdir()
    write_sealed(reference, whole)

    out = tmp_path / "out"
    path = merge_references(out, [two, one], HASH)
    assert path == references_file(out, HASH)
    assert path.read_bytes() == reference.read_bytes()  # byte for byte, seeds ascending
    assert (out / "references" / "pair.json").read_text() == "{}"
    assert merge_references(out, [one], HASH) == path  # again: nothing changes
    assert read_sealed(path, "references")["seeds"] == [0, 1, 2]


def test_other_returns_for_one_seed_are_refused(tmp_path):
    one = _shard(tmp_path, "s1", _payload([0], [[0.1, 0.2]], [[1, 2]]))
    two = _shard(tmp_path, "s2", _payload([0], [[0.1, 0.2]], [[1, 3]]))
    with pytest.raises(ReferenceError, match="seed 0's reference returns differ from those in"):
        merge_references(tmp_path / "out", [one, two], HASH)


def test_an_edited_file_and_a_failed_measurement(tmp_path):
    one = _shard(tmp_path, "s1", _payload([0], [[0.1, 0.2]], [[1, 2]]))
    failed = {"format": "opt-suite-references", "error": "reference returns not measured: boom"}
    two = _shard(tmp_path, "s2", failed)
    path = merge_references(tmp_path / "out", [one, two], HASH)
    assert read_sealed(path, "references") == failed  # the report says why it has no scores

    edited = references_file(one, HASH)
    edited.write_text(edited.read_text().replace("0.1", "0.9"))
    with pytest.raises(ReferenceError, match="rerun that shard to measure them again"):
        merge_references(tmp_path / "out2", [one], HASH)
