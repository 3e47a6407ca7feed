"""Minari: demonstrations exported to a dataset read back identically; bad datasets named."""

import numpy as np
import pytest

from opt_suite.cli import main
from opt_suite.demonstrations import DemonstrationError, collect_demonstrations
from opt_suite.demonstrations.base import SourceContext
from opt_suite.demonstrations.minari_io import MinariParams, MinariSource, export_demonstrations
from opt_suite.families.tabular.chain import Chain
from opt_suite.families.tabular.chain import Params as ChainParams
from opt_suite.families.tabular.fourrooms import FourRooms, Params, Variation
from opt_suite.spec.schema import DemonstrationsSpec

FAMILY = FourRooms(Params(layout="sutton-13x13"))
TRAIN, _ = FAMILY.make_tasks(Variation(), (), 3, 3, 0, seed=0)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    demos = collect_demonstrations(
        FAMILY, TRAIN, DemonstrationsSpec(trajectories_per_task=2), np.random.SeedSequence(0)
    )
    out = tmp_path_factory.mktemp("minari")
    return demos, export_demonstrations(demos, FAMILY, out, "quick/demos-seed0-v0")


def test_export_then_import_gives_the_same_trajectories(exported):
    demos, folder = exported
    assert (folder / "data").is_dir()
    spec = DemonstrationsSpec(
        source="minari", params=MinariParams(str(folder)), trajectories_per_task=2
    )
    again = collect_demonstrations(FAMILY, TRAIN, spec, np.random.SeedSequence(9), MinariSource)
    assert [t.task_id for t in again] == [t.task_id for t in demos]
    for a, b in zip(demos, again, strict=True):
        np.testing.assert_array_equal(a.observations, b.observations)
        np.testing.assert_array_equal(a.actions, b.actions)
        np.testing.assert_array_equal(a.rewards, b.rewards)


def test_a_dataset_of_other_spaces_is_refused(exported):
    _, folder = exported
    chain = Chain(ChainParams())
    train, _ = chain.make_tasks(chain.Variation(), (), 1, 1, 0, seed=0)
    source = MinariSource(MinariParams(str(folder)))
    with pytest.raises(DemonstrationError, match="observation space Discrete.* disagrees"):
        source.collect(SourceContext(chain, train, 1, 100, np.random.SeedSequence(0)))


def test_too_few_episodes_or_a_missing_dataset_are_named(exported, tmp_path):
    _, folder = exported
    source = MinariSource(MinariParams(str(folder)))
    with pytest.raises(DemonstrationError, match="2 episodes for train task .*expected .* = 3"):
        source.collect(SourceContext(FAMILY, TRAIN, 3, 1000, np.random.SeedSequence(0)))
    with pytest.raises(DemonstrationError, match="demonstrations.params.dataset 'nowhere'"):
        MinariSource(MinariParams("nowhere")).collect(SourceContext(FAMILY, TRAIN, 1, 100, None))
    with pytest.raises(DemonstrationError, match="has .* steps, more than"):
        source.collect(SourceContext(FAMILY, TRAIN, 1, 2, np.random.SeedSequence(0)))


def test_an_episode_that_does_not_reach_a_goal_is_an_error(exported, tmp_path):
    demos, _ = exported
    cut = [type(t)(t.task_id, t.observations[:-1], t.actions[:-1], t.rewards[:-1]) for t in demos]
    folder = export_demonstrations(cut, FAMILY, tmp_path, "cut/demos-v0")
    # the export marks each episode's last step as its end: rewrite one as truncated
    import h5py

    with h5py.File(folder / "data" / "main_data.hdf5", "r+") as f:
        f["episode_0"]["terminations"][-1] = False
    source = MinariSource(MinariParams(str(folder)))
    with pytest.raises(DemonstrationError, match="episode 0 for .* does not reach a goal"):
        source.collect(SourceContext(FAMILY, TRAIN, 2, 1000, np.random.SeedSequence(0)))


def test_export_demos_cli_needs_a_run(tmp_path, capsys):
    assert main(["export-demos", str(tmp_path)]) == 2
    assert "opt-suite export-demos: error:" in capsys.readouterr().err
