"""The PPO expert's cut demonstrations: every cap named, dropped while a minimum remains."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from opt_suite.agents.expert import checkpoint_key
from opt_suite.agents.params import ExpertParams
from opt_suite.demonstrations.agent_sampling import AgentDemonstrations, cut_message, task_caps
from opt_suite.demonstrations.base import DemonstrationError, SourceContext
from opt_suite.demonstrations.ppo_expert import PPOExpert, keep_complete
from opt_suite.families.base import Task
from opt_suite.families.gymnasium.family import Gymnasium, Params
from opt_suite.trajectory import Trajectory

MINIGRID = Gymnasium(Params(id="MiniGrid-FourRooms-v0", max_episode_steps=1000))
TASKS = [Task(f"{MINIGRID.instance_name}/train/{i}", "train", i, MINIGRID.default_task())
         for i in range(2)]  # fmt: skip


def _trajectory(task, steps):
    return Trajectory(task.task_id, np.zeros(steps + 1, np.int64), np.zeros(steps, np.int64),
                      np.zeros(steps))  # fmt: skip


def _result(cut_pattern):
    """Two tasks x len(cut_pattern) trajectories, cut where the pattern says."""
    trajectories, was_cut, messages = [], [], []
    for task in TASKS:
        for cut in cut_pattern:
            trajectories.append(_trajectory(task, 100 if cut else 20))
            was_cut.append(cut)
            if cut:
                messages.append(
                    cut_message(task.task_id, 100, 500, False, task_caps(MINIGRID, task, 500))
                )
    return AgentDemonstrations(trajectories, [], sum(was_cut), was_cut, messages)


def test_the_cut_message_names_the_steps_reached_and_every_cap_minigrids_own_included():
    message = cut_message(TASKS[0].task_id, 100, 500, False, task_caps(MINIGRID, TASKS[0], 500))
    assert "was cut after 100 steps before the episode ended" in message
    assert "demonstrations.max_steps = 500" in message
    assert "family.params.max_episode_steps = 1000" in message
    assert "the env's own max_steps = 100 (family.params.kwargs: {max_steps: N})" in message


def test_cut_demonstrations_are_dropped_loudly_while_the_minimum_remains(capsys):
    kept = keep_complete(_result([False, True, False]), TASKS, 3, minimum=2)
    assert len(kept) == 4 and all(len(t) == 20 for t in kept)
    err = capsys.readouterr().err
    assert err.count("warning: demonstrations: dropped: demonstration on") == 2
    with pytest.raises(DemonstrationError, match=r"1 of 3 demonstrations on .*/train/0 are "
                       r"complete, fewer than demonstrations.params.min_complete = 2; the first "
                       r"cut: demonstration on .* was cut after 100 steps"):  # fmt: skip
        keep_complete(_result([False, True, True]), TASKS, 3, minimum=2)


def test_min_complete_changes_neither_the_spec_hash_nor_the_experts_checkpoint():
    from opt_suite.spec.canonical import to_plain

    default, set_ = ExpertParams(), dataclasses.replace(ExpertParams(), min_complete=2)
    assert "min_complete" not in to_plain(default)
    assert checkpoint_key(MINIGRID, TASKS[0], default, 1) == checkpoint_key(
        MINIGRID, TASKS[0], set_, 1
    )
    with pytest.raises(DemonstrationError, match="min_complete = 5 is more than"):
        PPOExpert(dataclasses.replace(ExpertParams(), min_complete=5)).collect(
            SourceContext(MINIGRID, TASKS, 4, 100, np.random.SeedSequence(0))
        )


class _AlwaysRight:
    """An expert that goes right (FrozenLake action 2), seeing observations in a batch of one."""

    def action_probabilities(self, batch):
        assert np.asarray(batch).shape[0] == 1
        return np.array([[0.0, 0.0, 1.0, 0.0]])


def test_an_expert_samples_index_observations_as_a_batch_of_one():
    # FrozenLake's observations are ints: `obs[None]` was "'int' object is not subscriptable".
    from opt_suite.demonstrations.agent_sampling import sample_demonstration

    family = Gymnasium(Params(id="FrozenLake-v1", kwargs={"is_slippery": False}))
    task = Task("lake/train/0", "train", 0, family.default_task())
    rng = np.random.default_rng(0)
    trajectory, cut = sample_demonstration(family, task, _AlwaysRight(), rng, 10)
    # Right along the top row of the 4x4 map, stopped by its east wall: cut at 10 steps.
    assert cut and trajectory.observations.tolist() == [0, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3]
