"""Env keyword arguments are checked one way for every family, with validate's bounds.

``gymnasium.make`` of a suite env has not been through the spec validator: the tabular families,
Atari and the ``gymnasium`` wrapper each check their keywords with
:func:`opt_suite.families.env_kwargs.check_params` (Atari's own check once skipped the upper
bounds). A gymnasium env's own kwargs may size its memory without any bound the suite can know:
``validate`` builds it under a cap (MiniGrid ``size: 20000`` once took 3.2 GB to validate).
"""

from __future__ import annotations

import gymnasium
import pytest

import opt_suite  # noqa: F401  (registers the suite's envs)
from opt_suite.cli import main

BIG = 10**11  # above opt_suite.params.MAX_INT, the implicit upper bound of every integer


@pytest.mark.parametrize(
    ("env_id", "kwargs", "message"),
    [
        ("opt_suite/Atari-v0", {"frame_skip": BIG}, "TaskParams.frame_skip: expected a value <="),
        ("opt_suite/Atari-v0", {"max_episode_frames": BIG}, "Params.max_episode_frames"),
        ("opt_suite/Atari-v0", {"action_set": "all"}, "expected one of ['minimal', 'full']"),
        ("opt_suite/Atari-v0", {"reward_scale": float("nan")}, "expected a finite number"),
        ("opt_suite/Gymnasium-v0", {"start_actions": BIG}, "TaskParams.start_actions"),
        ("opt_suite/Gymnasium-v0", {"frame_skip": 0}, "expected a value >= 1, got 0"),
        ("opt_suite/Gymnasium-v0", {"max_episode_frames": BIG}, "Params.max_episode_steps"),
        ("opt_suite/FourRooms-v0", {"slip": float("nan")}, "Params.slip: expected a finite"),
    ],
)
def test_gym_make_applies_the_bounds_validate_applies(env_id, kwargs, message):
    with pytest.raises(ValueError) as caught:
        gymnasium.make(env_id, disable_env_checker=True, **kwargs)
    assert message in str(caught.value), str(caught.value)


SPEC = """\
name: kwargs
family:
  name: gymnasium
  params: {{id: MiniGrid-Empty-5x5-v0, kwargs: {{size: {size}}}, observation_key: image}}
tasks: {{count: 2, train: 1, test: 1}}
methods: [{{name: primitives, method: primitives}}]
evaluation: {{learner: tf_agents, frames: 1000}}
"""


def test_an_env_that_needs_gigabytes_to_build_is_a_located_error(tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(size=20000))
    capsys.readouterr()
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:4:" in err and "family.params.kwargs" in err, err
    assert "needs more than 1024 MiB to be built" in err and "Traceback" not in err


def test_the_work_estimate_counts_the_env_as_built(tmp_path):
    from opt_suite.families.gymnasium.family import Gymnasium, Params
    from opt_suite.params import FrozenDict

    small = Gymnasium(Params("MiniGrid-Empty-5x5-v0", FrozenDict(size=8), "image"))
    large = Gymnasium(Params("MiniGrid-Empty-5x5-v0", FrozenDict(size=600), "image"))
    assert small.params.check() == [] and large.params.check() == []
    (small_bytes, what), (large_bytes, _) = small.env_memory(), large.env_memory()
    assert "MiniGrid-Empty-5x5-v0 env as built" in what
    assert large_bytes >= 600 * 600 * 8 > 100 * small_bytes  # a pointer per cell of 600x600


def test_a_literal_list_kwarg_is_written_as_the_only_choice_and_a_wrong_shape_is_located(
    tmp_path, capsys
):
    """``agent_start_pos: [1, 1]`` means "1 or 1": MiniGrid takes it at reset, so validate
    resets the env and says how to write the list itself; ``[[2, 3]]`` passes it."""
    text = SPEC.replace("size: {size}", "agent_start_pos: {value}").replace("5x5", "8x8")
    spec = tmp_path / "spec.yaml"
    spec.write_text(text.format(value="[1, 1]"))
    capsys.readouterr()
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:4:" in err and "rejects kwargs {agent_start_pos: 1}" in err, err
    assert "write it as the only choice: agent_start_pos: [[1, 1]]" in err
    spec.write_text(text.format(value="[[2, 3]]"))
    assert main(["validate", str(spec)]) == 0, capsys.readouterr().err
