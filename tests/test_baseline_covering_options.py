"""Covering options: the Fiedler rule by hand, point options, graphs, budgets, cover time."""

from __future__ import annotations

import numpy as np
import pytest
from baseline_models import ModelFamily, corridor_models, tasks_of

from baselines.covering_options import CoveringOptions, CoveringOptionsParams
from baselines.covering_options.cover_time import cover_times
from baselines.covering_options.fiedler import DisconnectedGraph, covering_edges
from baselines.covering_options.method import observed_successor, point_option
from baselines.eigenoptions.graph import model_adjacency
from opt_suite.methods.base import DiscoveryContext
from opt_suite.methods.budget import BudgetExhausted
from opt_suite.testing import MethodContract
from opt_suite.testing.method import context_for, tiny_setting


class TestCoveringOptionsContract(MethodContract):
    method_class = CoveringOptions
    params = CoveringOptionsParams(count=4)


class TestCoveringOptionsRandomWalkContract(MethodContract):
    method_class = CoveringOptions
    params = CoveringOptionsParams(count=3, graph="random_walk", walk_frames=2000)


def _path(n: int) -> np.ndarray:
    weights = np.zeros((n, n))
    for i in range(n - 1):
        weights[i, i + 1] = weights[i + 1, i] = 1.0
    return weights


def test_fiedler_rule_closes_a_path_into_a_cycle():
    # Normalised Laplacian: a path of n vertices has lambda_2 = 1 - cos(pi / (n - 1)), a cycle
    # 1 - cos(2 pi / n) (Chung 1997). On P5 the Fiedler vector's extremes are the two ends, and
    # joining them makes C5: lambda_2 goes from 1 - cos(pi/4) = 0.2929 to 1 - cos(2pi/5) = 0.6910.
    edges, final = covering_edges(_path(5), 1)
    assert {edges[0].source, edges[0].target} == {0, 4}
    np.testing.assert_allclose(edges[0].connectivity, 1 - np.cos(np.pi / 4), atol=1e-12)
    np.testing.assert_allclose(final, 1 - np.cos(2 * np.pi / 5), atol=1e-12)


def test_repeated_edges_are_weighted_so_the_graph_keeps_changing():
    edges, final = covering_edges(_path(6), 3)
    connectivity = [e.connectivity for e in edges] + [final]
    assert all(b > a for a, b in zip(connectivity, connectivity[1:], strict=False))


def test_disconnected_graph_is_an_error_naming_the_components():
    weights = np.zeros((5, 5))
    weights[0, 1] = weights[1, 0] = weights[2, 3] = weights[3, 2] = 1.0
    with pytest.raises(DisconnectedGraph, match=r"3 connected components \(sizes 2, 2, 1\)"):
        covering_edges(weights, 1)


def test_point_option_by_hand_on_a_corridor():
    # Actions 0: stay, 1: right, 2: left on a 4-state corridor.
    successor = np.array([[0, 1, 0], [1, 2, 0], [2, 3, 1], [3, 3, 2]])
    mu, beta, initiation, reachable = point_option(successor, source=0, target=3)
    assert reachable
    np.testing.assert_array_equal(mu[:3], [[0, 1, 0]] * 3)  # right, the only shortest move
    np.testing.assert_array_equal(mu[3], [1 / 3] * 3)  # at the target: uniform, it stops there
    np.testing.assert_array_equal(beta, [0, 0, 0, 1])
    np.testing.assert_array_equal(initiation, [True, False, False, False])
    one_way = np.array([[0, 1, 0], [1, 1, 1], [2, 3, 1], [3, 3, 3]])  # 1 is a dead end
    _, beta, _, reachable = point_option(one_way, source=0, target=3)
    assert not reachable and beta[1] == 1.0 and beta[0] == 1.0


def test_observed_successor_takes_the_most_frequent_outcome():
    before, actions, after = np.array([0, 0, 0, 1]), np.array([1, 1, 1, 0]), np.array([1, 2, 1, 0])
    successor = observed_successor(before, actions, after, num_states=3, num_actions=2)
    np.testing.assert_array_equal(successor, [[0, 1], [0, 1], [2, 2]])  # unseen: stays put


def _context(models, seed=0, budget=0):
    return DiscoveryContext(
        ModelFamily(), tasks_of(*models), (), budget, np.random.SeedSequence(seed)
    )


def test_options_come_in_pairs_along_each_edge_and_start_only_at_their_source():
    found = CoveringOptions(CoveringOptionsParams(count=4)).discover(_context(corridor_models(7)))
    pairs = found.info["pairs"]
    assert {pairs[0][0], pairs[0][1]} == {0, 6}  # the corridor's two ends first
    assert pairs[1] == pairs[0][::-1] and pairs[3] == pairs[2][::-1]
    options = found.options
    for o, (source, target) in enumerate(found.info["pairs"]):
        assert np.flatnonzero(options.initiation_table[o]).tolist() == [source]
        assert options.beta[o, target] == 1.0 and options.beta[o, source] == 0.0


def test_random_walk_past_the_interaction_budget_is_refused_before_stepping():
    setting = tiny_setting()
    params = CoveringOptionsParams(graph="random_walk", walk_frames=5000)
    with pytest.raises(ValueError, match="walk_frames = 5000 is above evaluation.interaction"):
        CoveringOptions(params).discover(context_for(setting, 0, 4000))


def test_random_walk_counts_its_steps_and_the_budget_stops_more():
    setting = tiny_setting()
    context = context_for(setting, 0, 1500)
    found = CoveringOptions(
        CoveringOptionsParams(count=2, graph="random_walk", walk_frames=1500)
    ).discover(context)
    assert found.info["env_steps"] == 1500 == context.budget.steps
    env = context.make_env(setting.train_tasks[0])
    env.reset(seed=0)
    with pytest.raises(BudgetExhausted, match="budget of 1500 env steps is spent"):
        env.step(0)


def _demos_context(*paths):
    from opt_suite.trajectory import Trajectory

    setting = tiny_setting()
    demos = [
        Trajectory(f"t/{i}", np.array(path), np.full(len(path) - 1, 3), np.zeros(len(path) - 1))
        for i, path in enumerate(paths)
    ]
    return DiscoveryContext(
        setting.family, setting.train_tasks, demos, 0, np.random.SeedSequence(0)
    )


def test_one_way_demonstrations_are_an_error_not_an_option():
    context = _demos_context([0, 1, 2], [40, 41])
    with pytest.raises(ValueError, match=r"graph: observed\): no two states of the data reach"):
        CoveringOptions(CoveringOptionsParams(graph="observed")).discover(context)


def test_observed_graph_keeps_the_largest_part_walkable_both_ways_and_says_so():
    # 0 -> 1 -> 2 -> 1 -> 0 with action 3 each time: action 3 from 1 was seen to reach 2 and 0
    # once each (the lowest wins the tie: 0), so only {0, 1} reach each other; the rest is named.
    context = _demos_context([0, 1, 2, 1, 0], [40, 41, 40])
    found = CoveringOptions(CoveringOptionsParams(count=2, graph="observed")).discover(context)
    assert found.info["graph_states"] == 2
    assert "3 visited state(s) cannot be reached back" in found.info["caveats"][0]


def test_disconnected_known_graph_is_an_error():
    from baseline_models import grid

    models = [grid("..#..", start=0, goal=3), grid("..#..", start=3, goal=0)]
    with pytest.raises(ValueError, match=r"graph: known\): the state graph has 2 connected"):
        CoveringOptions(CoveringOptionsParams(count=2)).discover(_context(models))


def test_fidelity_covering_options_lower_the_cover_time_of_four_rooms():
    """Jinnai et al. (2019): fewer expected steps for a random walk to visit every state.

    Sutton's four rooms (104 states), 8 options (4 rounds, both directions), exact model.
    Measured (400 walks each, the seeds below): the expected cover time falls from 2002 +- 43 to
    1386 +- 25 steps, a ratio of 0.69; lambda_2 rises from 0.0070 to 0.0200. The paper's
    argument is the bound E[C] <= n^2 ln n / lambda_2 (Broder & Karlin 1989), whose ratio here is
    0.35: the bound falls faster than the cover time it bounds, as expected of a loose bound, and
    the measured cover time must fall too. About 3 s.
    """
    from opt_suite.families.tabular.fourrooms import FourRooms

    family = FourRooms(FourRooms.Params(layout="sutton-13x13", slip=0.1))
    variation = FourRooms.Variation(start_region="anywhere", goal_region="anywhere")
    tasks, _ = family.make_tasks(variation, (), 5, 4, 1, 0)
    context = DiscoveryContext(family, tasks, (), 0, np.random.SeedSequence(0))
    found = CoveringOptions(CoveringOptionsParams(count=8)).discover(context)
    weights = model_adjacency(context.tabular_models("test")).astype(np.float64)
    with_options = weights.copy()
    for source, target in found.info["pairs"]:
        with_options[source, target] += 1.0
        with_options[target, source] += 1.0
    before = cover_times(weights, 400, np.random.default_rng(1)).mean()
    after = cover_times(with_options, 400, np.random.default_rng(2)).mean()
    connectivity = found.curves["algebraic_connectivity"]
    assert np.all(np.diff(connectivity) > 0)  # every option raises lambda_2
    bound_ratio = connectivity[0] / connectivity[-1]
    assert after / before < 0.8, f"cover time ratio {after / before:.3f}"
    assert bound_ratio < after / before  # the bound is the looser of the two


def test_validate_refuses_a_walk_above_the_interaction_budget_at_its_key(tmp_path, capsys):
    from pathlib import Path

    from opt_suite.cli import main

    spec = Path(__file__).parents[1] / "specs" / "fourrooms-field.yaml"
    text = spec.read_text().replace("walk_frames: 20000", "walk_frames: 60000")
    (tmp_path / "fourrooms-quick.yaml").write_text(
        (spec.parent / "fourrooms-quick.yaml").read_text()
    )
    (tmp_path / "field.yaml").write_text(text)
    assert main(["validate", str(tmp_path / "field.yaml")]) == 2
    err = capsys.readouterr().err
    assert "methods[7].params.walk_frames: covering_options declares a discovery budget of " in err
    assert "60000 env steps, above evaluation.interaction_budget = 50000" in err
    assert "Traceback" not in err
