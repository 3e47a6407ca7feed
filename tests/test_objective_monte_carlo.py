"""The Appendix D sampler and the ``validate-objective`` command."""

from __future__ import annotations

import json

import numpy as np
import pytest

import opt_suite  # noqa: F401
from opt_suite.cli import main
from opt_suite.families.base import TabularModel
from opt_suite.objective import enumerate_terms
from opt_suite.objective.monte_carlo import (
    OptionTables,
    monte_carlo,
    random_option_tables,
    sample_episodes,
    transition_probability,
)


def three_state_chain() -> TabularModel:
    """States 0, 1, 2 (terminal); action 1 moves right w.p. 0.8 (else stays), action 0 stays."""
    next_state = np.array([[[0, 0], [1, 0]], [[1, 1], [2, 1]], [[2, 2], [2, 2]]])
    prob = np.array([[[1.0, 0.0], [0.8, 0.2]], [[1.0, 0.0], [0.8, 0.2]], [[1.0, 0.0], [1.0, 0.0]]])
    return TabularModel(
        next_state=next_state,
        prob=prob,
        reward=np.zeros_like(prob),
        terminal=np.array([False, False, True]),
        start=0,
    )


OPTIONS = OptionTables(
    pi=np.array([[0.7, 0.3], [0.4, 0.6], [0.5, 0.5]]),
    mu=np.array([[[0.2, 0.8], [0.1, 0.9], [0.5, 0.5]], [[0.6, 0.4], [0.5, 0.5], [0.5, 0.5]]]),
    beta=np.array([[0.0, 0.3, 0.9], [0.0, 0.6, 0.2]]),
)


def test_transition_probability_by_hand():
    model = three_state_chain()
    # 0 -right-> 0 (0.2), 0 -right-> 1 (0.8), 1 -stay-> 1 (1.0), 1 -right-> 2 (0.8)
    states, actions = np.array([0, 0, 1, 1, 2]), np.array([1, 1, 0, 1])
    assert transition_probability(model, states, actions) == pytest.approx(0.2 * 0.8 * 1.0 * 0.8)


def test_episodes_end_at_the_terminal_state():
    model = three_state_chain()
    episodes = sample_episodes(model, OPTIONS, 50, 20, np.random.default_rng(0))
    for states, actions in episodes:
        assert len(states) == len(actions) + 1
        assert model.terminal[states[-1]] or len(actions) == 50
        assert not model.terminal[states[:-1]].any()


def test_monte_carlo_agrees_with_enumeration():
    model = three_state_chain()
    states, actions = np.array([0, 1, 1, 2]), np.array([1, 0, 1])
    prob, filtering, posterior = enumerate_terms(*OPTIONS.tables(states, actions), len(actions))
    prob *= transition_probability(model, states, actions)
    estimate = monte_carlo(model, OPTIONS, states, actions, 40_000, np.random.default_rng(1))
    assert estimate.matches > 1000
    assert abs(estimate.prob - prob) < 4 * estimate.prob_se
    assert abs(estimate.terminations - posterior) < 4 * estimate.terminations_se
    # Theorem 1's filtering sum is a different quantity: here it is far outside the MC error.
    assert abs(estimate.terminations - filtering) > 4 * estimate.terminations_se


def test_random_option_tables_are_distributions():
    tables = random_option_tables(7, 2, 4, np.random.default_rng(2))
    np.testing.assert_allclose(tables.pi.sum(-1), 1.0)
    np.testing.assert_allclose(tables.mu.sum(-1), 1.0)
    assert ((tables.beta >= 0) & (tables.beta <= 1)).all()


def test_validate_objective_json(capsys):
    status = main(["validate-objective", "--json", "--trials", "3000", "--candidates", "20"])
    rows = json.loads(capsys.readouterr().out)
    assert status == 0
    assert len(rows) == 10
    for row in rows:
        assert {"mc_prob", "prob", "mc_terminations", "posterior_terminations"} <= row.keys()
        assert {"filtering_terminations", "mc_prob_se", "mc_terminations_se"} <= row.keys()
        assert 0.0 < row["prob"] < 1.0 and row["trials"] == 3000


def test_validate_objective_same_seed_same_table(capsys):
    args = ["validate-objective", "--json", "--trials", "500", "--candidates", "5", "--seed", "3"]
    main(args)
    first = capsys.readouterr().out
    main(args)
    assert capsys.readouterr().out == first


def test_validate_objective_bad_arguments(capsys):
    with pytest.raises(SystemExit) as exc:  # a usage error, like every out-of-range option
        main(["validate-objective", "--trials", "0"])
    assert exc.value.code == 2
    assert "--trials" in capsys.readouterr().err
    assert main(["validate-objective", "--spec", "no-such-spec.yaml"]) == 2
    assert "no-such-spec.yaml" in capsys.readouterr().err
