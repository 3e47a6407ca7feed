"""Expert checkpoints are trusted only as written: a swapped, damaged or unverifiable checkpoint
is retrained (to the same weights: training is seeded), never loaded; demonstrations do not change.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil

import numpy as np
import pytest
from test_agents_expert import FAMILY, TINY, TRAIN

from opt_suite.agents.expert import train_expert, weights_digest
from opt_suite.demonstrations.agent_sampling import collect_agent_demonstrations

SEED = 3


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    path = tmp_path_factory.mktemp("original") / "expert.npz"
    return train_expert(FAMILY, TRAIN[0], TINY, seed=SEED, checkpoint=path), path


@pytest.fixture
def trained(original, tmp_path):
    """The original expert, and a copy of its checkpoint and sidecar for this test to damage."""
    expert, source = original
    path = tmp_path / source.name
    for name in (source.name, source.name + ".sha256.json"):
        shutil.copyfile(source.with_name(name), tmp_path / name)
    return expert, path


def _weights(expert):
    return weights_digest(expert.actor.get_weights())


def _swap(path, zero=False):
    """Rewrite the checkpoint as a valid file of the same key holding other weights."""
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    arrays["weight_0"] = arrays["weight_0"] * 0.0 if zero else arrays["weight_0"] + 1.0
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    path.write_bytes(buffer.getvalue())


def test_a_verified_checkpoint_is_reused(trained):
    expert, path = trained
    sidecar = json.loads(path.with_name(path.name + ".sha256.json").read_text())
    assert sidecar["key"] == expert.key and sidecar["weights"] == _weights(expert)
    again = train_expert(FAMILY, TRAIN[0], TINY, seed=SEED, checkpoint=path)
    assert again.reused and again.rejected is None and _weights(again) == _weights(expert)


@pytest.mark.parametrize(
    "fault, reason",
    [
        ("swap", "differ from the SHA-256 recorded"),
        ("truncate", "differ from the SHA-256 recorded"),
        pytest.param("no sidecar", "has no readable digest", marks=pytest.mark.slow),
        pytest.param("garbage sidecar", "has no readable digest", marks=pytest.mark.slow),
        ("forged", "its weights differ from the digest recorded"),
        ("dev zero", "is a device, expected a regular file"),
        pytest.param("fifo sidecar", "has no readable digest", marks=pytest.mark.slow),
    ],
)
def test_a_swapped_or_damaged_checkpoint_is_retrained_not_used(trained, fault, reason, capfd):
    expert, path = trained
    sidecar = path.with_name(path.name + ".sha256.json")
    if fault == "swap":
        _swap(path)
    elif fault == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif fault == "no sidecar":
        sidecar.unlink()
    elif fault == "forged":  # zeroed weights under a recomputed file digest
        _swap(path, zero=True)
        recorded = json.loads(sidecar.read_text())
        recorded["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        sidecar.write_text(json.dumps(recorded))
    elif fault == "dev zero":  # read to the end, it would exhaust memory
        path.unlink()
        path.symlink_to("/dev/zero")
    elif fault == "fifo sidecar":  # opened for reading, it would wait forever
        sidecar.unlink()
        os.mkfifo(sidecar)
    else:
        sidecar.write_text("{not json")
    retrained = train_expert(FAMILY, TRAIN[0], TINY, seed=SEED, checkpoint=path)
    assert not retrained.reused
    assert retrained.rejected is not None and reason in retrained.rejected
    assert f"expert checkpoint {path} not used" in capfd.readouterr().err
    # Seeded training gives back the expert the checkpoint held before the fault ...
    assert _weights(retrained) == _weights(expert)
    # ... and its checkpoint is whole again: the next run loads it.
    again = train_expert(FAMILY, TRAIN[0], TINY, seed=SEED, checkpoint=path)
    assert again.reused and _weights(again) == _weights(expert)


@pytest.mark.slow
def test_demonstrations_after_a_swap_are_those_of_the_original_expert(tmp_path):
    seed = np.random.SeedSequence(11)
    first = collect_agent_demonstrations(FAMILY, TRAIN[:1], TINY, 2, 5000, seed, tmp_path)
    (checkpoint,) = tmp_path.glob("expert-*.npz")
    _swap(checkpoint)
    again = collect_agent_demonstrations(FAMILY, TRAIN[:1], TINY, 2, 5000, seed, tmp_path)
    assert again.experts[0].rejected is not None and not again.experts[0].reused
    for a, b in zip(first.trajectories, again.trajectories, strict=True):
        np.testing.assert_array_equal(a.actions, b.actions)
        np.testing.assert_array_equal(a.observations, b.observations)
