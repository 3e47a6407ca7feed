"""Gymnasium conventions: `import opt_suite` registers every built-in env id, cheaply."""

import subprocess
import sys

CODE = """
import sys
import opt_suite, gymnasium
heavy = [m for m in ('tensorflow', 'tf_agents', 'opt_suite.families.fourrooms') if m in sys.modules]
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
        "['opt_suite/Atari-v0', 'opt_suite/Chain-v0', 'opt_suite/FourRooms-v0'] 0 (0, 0) (39, 39)"
    )
    # kwargs select layout, start and goal; the time limit is the family's default
    assert rest.split()[-3:] == ["9)", "104", "1000"]
