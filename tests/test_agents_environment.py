"""The gymnasium -> tf-agents adapter: tf-agents' own checks, episode ends, seeds, frame counts."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from opt_suite.agents.environment import GymnasiumPyEnvironment, space_spec
from opt_suite.families.atari.family import Atari, Params, TaskParams
from opt_suite.families.tabular.chain import Chain
from opt_suite.families.tabular.chain import Params as ChainParams
from opt_suite.families.tabular.chain import TaskParams as ChainTask

from tf_agents.environments import tf_py_environment, utils  # isort: skip
from tf_agents.specs import array_spec  # isort: skip
from tf_agents.trajectories import time_step as ts  # isort: skip

SHORT_ATARI = Atari(Params(max_episode_frames=200))  # episodes end by the cap: quick checks
TASK = TaskParams(start_actions=3, reward_scale=2.0, frame_skip=4)
CERTAIN = ChainTask((1.0,) * 6, (1.0,) * 6, start=5)  # action 1 ends the chain at once


def test_specs_come_from_the_spaces():
    obs = space_spec(gymnasium.spaces.Box(0, 255, (84, 84, 2), np.uint8), "observation")
    assert obs == array_spec.BoundedArraySpec((84, 84, 2), np.uint8, 0, 255, name="observation")
    action = space_spec(gymnasium.spaces.Discrete(4, start=1), "action")
    assert action == array_spec.BoundedArraySpec((), np.int64, 1, 4, name="action")
    with pytest.raises(TypeError, match="no tf-agents spec for a MultiBinary"):
        space_spec(gymnasium.spaces.MultiBinary(3), "action")


@pytest.mark.parametrize("batched", [False, True])
def test_tf_agents_validate_py_environment_atari(batched):
    env = SHORT_ATARI.make_vector_env(TASK, 2) if batched else SHORT_ATARI.make_env(TASK)
    py_env = GymnasiumPyEnvironment(env, seed=0)
    assert py_env.batched == batched and py_env.batch_size == (2 if batched else None)
    utils.validate_py_environment(py_env, episodes=3)
    tf_env = tf_py_environment.TFPyEnvironment(py_env)  # tf-agents' TF wrapper accepts it
    assert tf_env.batch_size == (2 if batched else 1)
    step = tf_env.reset()
    assert step.observation.shape == (tf_env.batch_size, 84, 84, 2)
    tf_env.close()  # an unbatched env runs in tf-agents' thread pool: join it


def test_tf_agents_validate_py_environment_tabular():
    family = Chain()
    env = gymnasium.vector.SyncVectorEnv(
        [
            lambda: family.make_env(
                family.sample_tasks(family.Variation(), 1, np.random.default_rng(0))[0]
            )
        ]
        * 3,
        autoreset_mode=gymnasium.vector.AutoresetMode.NEXT_STEP,
    )
    py_env = GymnasiumPyEnvironment(env, seed=0)
    assert py_env.observation_spec() == array_spec.BoundedArraySpec(
        (), np.int64, 0, 6, name="observation"
    )
    utils.validate_py_environment(py_env, episodes=10)


def test_terminated_truncated_and_the_restart():
    chain = Chain(ChainParams(max_episode_steps=2))
    py_env = GymnasiumPyEnvironment(
        gymnasium.vector.SyncVectorEnv(
            [lambda: chain.make_env(CERTAIN)] * 2,
            autoreset_mode=gymnasium.vector.AutoresetMode.NEXT_STEP,
        ),
        seed=0,
    )
    first = py_env.reset()
    assert list(first.step_type) == [ts.StepType.FIRST] * 2
    # Env 0 moves right into the end (terminated); env 1 moves left twice (truncated at 2).
    mid = py_env.step(np.array([1, 0]))
    assert list(mid.step_type) == [ts.StepType.LAST, ts.StepType.MID]
    assert mid.discount[0] == 0.0 and mid.reward[0] == 10.0
    cut = py_env.step(np.array([0, 0]))
    assert list(cut.step_type) == [ts.StepType.FIRST, ts.StepType.LAST]
    assert cut.reward[0] == 0.0 and cut.discount[0] == 1.0 and cut.observation[0] == 5
    assert cut.discount[1] == 1.0  # a truncation is not an end: agents may bootstrap
    again = py_env.step(np.array([0, 1]))
    assert list(again.step_type) == [ts.StepType.MID, ts.StepType.FIRST]
    assert py_env.frames == 4  # chain envs report no frames: 4 env steps, resets excluded


def test_seeded_and_frames_are_the_emulators():
    def run(seed):
        py_env = GymnasiumPyEnvironment(SHORT_ATARI.make_vector_env(TASK, 2), seed=seed)
        steps, frames = [py_env.reset()], 2 * 3 * 4  # the start actions of both sub-envs
        rng = np.random.default_rng(0)
        for _ in range(60):
            steps.append(py_env.step(rng.integers(4, size=2)))
            frames += int(np.asarray(py_env.get_info()["frames"]).sum())
        assert py_env.frames == frames
        return [tuple(np.asarray(x).tobytes() for x in step) for step in steps]

    assert run(3) == run(3)
    assert run(3) != run(4)
