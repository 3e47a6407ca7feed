"""Atari end to end through the runner's cells: conv options discovered from frames, stored as an
option-set file, and the tf_agents learner acting with them, its curve in emulator frames."""

from __future__ import annotations

import numpy as np

from opt_suite.agents.params import NetworkParams, PPOParams
from opt_suite.families.atari.family import Atari, Variation
from opt_suite.learners.agent_learner import TFAgentsLearner
from opt_suite.methods.offline_options import OfflineOptions
from opt_suite.methods.offline_options.params import Params
from opt_suite.options import from_bytes
from opt_suite.runner.cells import DiscoveryJob, EvaluationJob, execute
from opt_suite.trajectory import Trajectory

PARAMS = Atari.Params(game="breakout", max_episode_frames=2000)


def _demonstration(family, task, seed, steps=15):
    env = family.make_env(task)
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    observations, actions, rewards = [obs], [], []
    for _ in range(steps):
        action = int(rng.integers(env.action_space.n))
        obs, reward, terminated, truncated, info = env.step(action)
        observations.append(obs)
        actions.append(action)
        rewards.append(reward)
        if terminated or truncated:
            break
    env.close()
    return Trajectory(task.task_id, np.stack(observations), np.array(actions), np.array(rewards))


def test_discovery_then_evaluation_cells_on_breakout():
    family = Atari(PARAMS)
    train, test = family.make_tasks(Variation(frame_skip=(2, 4)), [], 3, 2, 1, 0)
    demos = [_demonstration(family, task, seed) for seed, task in enumerate(train)]
    discovery = execute(
        DiscoveryJob(
            "d", "offline-options discovery", Atari, PARAMS, train,
            np.random.SeedSequence(0), OfflineOptions,
            Params(features="frames", lambda2=5000.0, lambda1=0.1, epochs=2, max_epochs=2,
                   steps_per_epoch=1, max_options=2, learning_rate=1e-3),
            demonstrations=demos,
        )
    )  # fmt: skip
    assert discovery.error is None, discovery.details
    found = discovery.record
    options = from_bytes(found.options)
    assert len(options) == found.options_count >= 1
    assert found.method_info["demonstrated_frames"] == sum(len(h) + 1 for h in demos)

    ppo = PPOParams(num_envs=2, steps_per_iteration=4, network=NetworkParams(fc_units=(16,)))
    evaluation = execute(
        EvaluationJob(
            "e", "offline-options evaluation", Atari, PARAMS, test[0],
            np.random.SeedSequence(1), TFAgentsLearner, TFAgentsLearner.Params(ppo=ppo),
            options=found.options, episodes=2, max_steps=40,
        )
    )  # fmt: skip
    assert evaluation.error is None, evaluation.details
    (task, returns, steps, frames) = evaluation.record.task_episodes[0]
    skip = test[0].params.frame_skip
    assert returns.shape == steps.shape == frames.shape == (2,)
    assert np.all(steps <= 40)
    # every step of this run's episodes used `skip` frames (plus the random start actions)
    assert frames[0] >= steps[0] * skip and np.all(np.diff(frames) > 0)
