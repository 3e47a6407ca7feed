"""One typed record per stage (opt_suite/store/records.py): its store round trip, old stores.

A record's facts go into the cell's stored ``info`` exactly as runs have always written them, and
come back typed; its data goes into the cell folder and the store's rows and comes back through
``ResultsStore``. The ``info`` rows below were copied from a ``fourrooms-quick`` run written by
the code before the records existed (main at 7e491f8): they must read back to the same facts and
be written again to the same bytes.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from opt_suite.learners.base import OptionUsage
from opt_suite.stages import Stage
from opt_suite.store import ResultsStore
from opt_suite.store.files import USAGE_FILE
from opt_suite.store.records import (
    RECORD_TYPES,
    ClonedFit,
    DemonstrationsRecord,
    DiscoveryRecord,
    EvaluationRecord,
    ReferencesRecord,
    record_from_info,
)
from opt_suite.store.writer import CellRecord, StoreWriter
from opt_suite.trajectory import Trajectory

#: (kind, stored info) of cells written before the records, one per kind of fact.
BEFORE = [
    ("demonstrations", {"cpu_s": 0.18}),
    (
        "discovery",
        {
            "cpu_s": 0.01,
            "demonstration_steps": 28,
            "graph_edges": 168,
            "isolated_states": 0,
            "terminating_fraction": [0.009615384615384616, 0.009615384615384616],
        },
    ),
    (
        "discovery",
        {
            "compiled": True,
            "counted_env_frames": 0,
            "counted_env_steps": 0,
            "cpu_s": 0.561,
            "env_steps": 50000,
            "episodes": 152,
            "stopped_by_budget": True,
            "train_seconds": 0.275,
        },
    ),
    ("discovery", {"warnings": ["demonstration 2 left out: too short"]}),
    (
        "discovery",
        {"fit_accuracy": 0.75, "fit_log_likelihood": -0.5, "held_out_note": "no held-out fit"},
    ),
    ("evaluation", {"cpu_s": 0.004, "zero_shot_returns": [-90.0, -37.0, -171.0]}),
    ("evaluation", {}),  # stored before the runner measured CPU seconds
    ("references", {"cpu_s": 0.006, "expert": -11.0, "pid": 12025, "random": -422.93119502705184}),
]


@pytest.mark.parametrize(("kind", "info"), BEFORE)
def test_a_stored_info_written_before_the_records_is_written_again_byte_for_byte(kind, info):
    record = record_from_info(kind, json.loads(json.dumps(info)))
    assert record.stage == kind
    assert json.dumps(record.info(), sort_keys=True) == json.dumps(info, sort_keys=True)


def test_the_facts_read_back_typed():
    demos, eigen, critic, warned, cloned, evaluation, unmeasured, references = (
        record_from_info(kind, info) for kind, info in BEFORE
    )
    assert demos.cpu_seconds == 0.18 and unmeasured.cpu_seconds is None
    assert isinstance(eigen, DiscoveryRecord)
    assert (eigen.demonstration_steps, eigen.counted_env_frames, eigen.env_frames) == (28, None, 0)
    assert eigen.method_info["graph_edges"] == 168 and "cpu_s" not in eigen.method_info
    # nothing counted (option-critic steps the exact model): the steps the method reports
    assert isinstance(critic, DiscoveryRecord) and critic.env_frames == 50000.0
    assert isinstance(warned, DiscoveryRecord)
    assert warned.warnings == ("demonstration 2 left out: too short",) and eigen.warnings == ()
    assert isinstance(cloned, DiscoveryRecord) and eigen.cloning_fit is None
    assert cloned.cloning_fit == ClonedFit(0.75, -0.5, None, None)  # nothing held out
    assert isinstance(evaluation, EvaluationRecord)
    assert evaluation.zero_shot_returns == (-90.0, -37.0, -171.0)
    assert isinstance(unmeasured, EvaluationRecord) and unmeasured.zero_shot_returns is None
    assert evaluation.cloning_fit is None  # stored before bc_ppo's fit was recorded
    assert isinstance(references, ReferencesRecord)
    assert (references.random, references.expert, references.pid) == (
        -422.93119502705184,
        -11.0,
        12025,
    )


def test_every_stage_has_one_record_type():
    assert set(RECORD_TYPES) == set(Stage)
    assert all(RECORD_TYPES[stage].stage is stage for stage in Stage)


def _records() -> dict[str, object]:
    demo = Trajectory("t/train/0", np.array([0, 1, 2]), np.array([3, 1]), np.array([-1.0, 10.0]))
    usage = OptionUsage(("up", "o0"), 1, np.array([[2, 1]]), np.array([[2, 5]]))
    episodes = ((3, np.array([-7.0, -5.0]), np.array([7.0, 5.0]), np.array([7.0, 12.0])),)
    return {
        "d": DemonstrationsRecord(demonstrations=(demo,), cpu_seconds=0.5),
        "o": DiscoveryRecord(
            options=b"not read here",
            options_count=2,
            curves_found={"jhat": np.array([-3.0, -2.5, np.nan])},
            method_info={"rounds": 2},
            extra_files={"policy.npz": b"policy"},
            demonstration_steps=2,
            counted_env_steps=40,
            counted_env_frames=80,
            cpu_seconds=1.25,
        ),
        "e": EvaluationRecord(
            task_episodes=episodes,
            usage=usage,
            zero_shot_returns=(-1.0, -2.0),
            cloning_fit=ClonedFit(0.875, -0.25, 0.5, -1.5),
            cpu_seconds=0.1,
        ),
        "r": ReferencesRecord(random=-400.0, expert=-11.5, pid=7, cpu_seconds=0.01),
    }


def test_each_record_round_trips_through_a_store(tmp_path):
    records = _records()
    writer = StoreWriter(tmp_path)
    run = writer.begin_run(
        spec_name="s", spec_hash="h" * 64, spec_yaml="name: s\n", provenance={},
        backend="local", workers=0, seeds=[0], argv=[],
    )  # fmt: skip
    method = {"d": None, "o": "m", "e": "m", "r": None}
    rows = [(cid, r.stage.value, method[cid], 0, 0) for cid, r in records.items()]
    writer.record_plan(run, rows, [("test", 3, "t/test/3", {})])
    for cell_id, record in records.items():
        identity = {"cell_id": cell_id, "kind": record.stage.value, "method": method[cell_id]}
        writer.commit_cell(
            CellRecord(
                **identity, seed=0, inputs={}, started=0.0, finished=1.0, wall_s=1.0, host="h",
                **record.stored(),
            )
        )  # fmt: skip
    writer.close()

    with ResultsStore(tmp_path) as store:
        back = {c.cell_id: c.record for c in store.cells()}
        for cell_id, record in records.items():
            assert type(back[cell_id]) is type(record)
            assert back[cell_id].info() == record.info(), cell_id
        assert back["e"].cloning_fit == ClonedFit(0.875, -0.25, 0.5, -1.5)
        [demo] = store.demonstrations(0)
        assert np.array_equal(demo.actions, [3, 1]) and demo.task_id == "t/train/0"
        assert store.option_set_file("m", 0).read_bytes() == b"not read here"
        assert store.recorded_file("o", "policy.npz").read_bytes() == b"policy"
        curve = [row.value for row in store.curves("m", "jhat")]
        assert curve[:2] == [-3.0, -2.5] and np.isnan(curve[2])
        assert [(r.task, r.ret, r.steps, r.frames) for r in store.episodes("m")] == [
            (3, -7.0, 7, 7),
            (3, -5.0, 5, 12),
        ]
        usage = OptionUsage.load(store.recorded_file("e", USAGE_FILE))
        assert usage.names == ("up", "o0") and np.array_equal(usage.steps, [[2, 5]])
        assert store.recorded_file("d", USAGE_FILE) is None
