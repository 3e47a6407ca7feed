"""Gymnasium conventions: `import opt_suite` registers every built-in env id, cheaply."""

import subprocess
import sys

CODE = """
import sys
import opt_suite, gymnasium
heavy = ('tensorflow', 'tf_agents', 'opt_suite.families.tabular.fourrooms')
heavy = [m for m in heavy if m in sys.modules]
ids = sorted(i for i in gymnasium.registry if i.startswith('opt_suite/'))
env = gymnasium.make('opt_suite/FourRooms-v0')
obs, _ = env.reset(seed=0)
task = env.unwrapped.task_params
small = gymnasium.make('opt_suite/FourRooms-v0', layout='sutton-13x13', start=(1, 1), goal=(7, 9))
print(heavy, ids, obs, task.start, task.goal, small.unwrapped.task_params.goal,
      small.observation_space.n, env.spec.max_episode_steps)
"""


def test_import_opt_suite_registers_the_envs_with_a_default_task():
    out = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split(" ", 1)
    heavy, rest = out[0], out[1]
    assert heavy == "[]"  # registration imported no family module and no TensorFlow
    assert rest.startswith(
        "['opt_suite/Atari-v0', 'opt_suite/Chain-v0', 'opt_suite/FourRooms-v0', "
        "'opt_suite/Gymnasium-v0'] 0 (0, 0) (39, 39)"
    )
    # kwargs select layout, start and goal; the time limit is the family's default
    assert rest.split()[-3:] == ["9)", "104", "1000"]


def test_make_vec_of_atari_is_the_thread_batch_and_the_sync_env_step_for_step():
    """``gymnasium.make_vec`` uses the registered vector entry point; same task as the single env.

    A small frame cap makes episodes end (truncated) within the run, so autoresets are compared too.
    """
    import gymnasium
    import numpy as np

    import opt_suite.families  # noqa: F401  (registers the ids)
    from opt_suite.families.atari.family import Atari, Params, TaskParams
    from opt_suite.families.atari.threads import AtariThreadVectorEnv

    task = dict(start_actions=3, reward_scale=2.0, frame_skip=3)
    threads = gymnasium.make_vec("opt_suite/Atari-v0", num_envs=3, max_episode_frames=300, **task)
    assert isinstance(threads.unwrapped, AtariThreadVectorEnv)
    assert threads.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    family = Atari(Params(max_episode_frames=300))
    sync = family.make_vector_env(TaskParams(**task), 3)
    obs_t, info_t = threads.reset(seed=11)
    obs_s, info_s = sync.reset(seed=11)
    np.testing.assert_array_equal(obs_t, obs_s)
    np.testing.assert_array_equal(info_t["frames"], info_s["frames"])
    actions = np.random.default_rng(0).integers(threads.single_action_space.n, size=(150, 3))
    ends = 0
    for row in actions:
        step_t, step_s = threads.step(row), sync.step(row)
        for got, want in zip(step_t[:4], step_s[:4], strict=True):
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(step_t[4]["frames"], step_s[4]["frames"])
        ends += int((step_t[2] | step_t[3]).sum())
    assert ends >= 3  # every sub-env reached its frame cap and was reset at least once
    threads.close()
    sync.close()
