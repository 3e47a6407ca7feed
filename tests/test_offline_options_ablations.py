"""offline_options' ablations: keep exactly K options, and Ĵ's terms switched off one at a time.

Each switch must change the objective the compiled round computes (row 0 of a round's curves,
before any update, is Ĵ of the initial networks), and leave a spec that does not set it with the
hash it had before the switch existed.
"""

from __future__ import annotations

import dataclasses

import pytest
from test_offline_options import _round, discover, fixed

from opt_suite.methods.offline_options import Params
from opt_suite.spec import SpecError, parse_spec, to_plain
from opt_suite.testing import tiny_setting

ABLATIONS = {
    "full": {},
    "no_kl": {"kl_term": False},
    "no_termination": {"termination_term": False},
    "likelihood_only": {"kl_term": False, "termination_term": False},
}


@pytest.fixture(scope="module")
def initial_rows():
    """Row 0 of round 2 (one frozen option: the KL term has two options) under each ablation."""
    rows = {}
    for name, switches in ABLATIONS.items():
        params = fixed(1, lambda1=0.5, lambda2=3.0, **switches)
        _, result = _round(tiny_setting().demonstrations, 1, params)
        rows[name] = result.initial
    return rows


def test_each_switch_leaves_the_hand_computed_remainder_of_jhat(initial_rows):
    full = initial_rows["full"]
    likelihood, terminations, kl = full["likelihood"], full["terminations"], full["kl"]
    assert terminations > 0 and kl > 0  # both terms are there to be switched off
    # Ĵ = λ2·likelihood − terminations + λ1·KL with λ1 = 0.5, λ2 = 3 (Eq. 2), minus what is off.
    expected = {
        "full": 3.0 * likelihood - terminations + 0.5 * kl,
        "no_kl": 3.0 * likelihood - terminations,
        "no_termination": 3.0 * likelihood + 0.5 * kl,
        "likelihood_only": 3.0 * likelihood,
    }
    for name, row in initial_rows.items():
        # The same networks: the unweighted parts do not move, only what Ĵ adds up.
        assert row["likelihood"] == pytest.approx(likelihood, rel=1e-6), name
        assert row["terminations"] == pytest.approx(terminations, rel=1e-6), name
        assert row["jhat"] == pytest.approx(expected[name], rel=1e-5), name
    assert len({round(row["jhat"], 6) for row in initial_rows.values()}) == 4


def test_keep_options_keeps_k_options_even_when_delta_would_stop_earlier():
    # delta = 10: no second round can gain 10·|Ĵ|, so Algorithm 1 stops at one option.
    stopped = discover(fixed(2, delta=10.0, max_options=3))
    assert stopped.info["options_kept"] == 1 and stopped.info["stop_reason"] == "delta"
    forced = discover(fixed(2, delta=10.0, max_options=3, keep_options=3))
    assert forced.info["options_kept"] == 3 == len(forced.options)
    assert forced.info["stop_reason"] == "keep_options"
    assert [r["kept"] for r in forced.info["rounds"]] == [True, True, True]


def test_ablations_change_the_spec_hash_only_when_set():
    default = to_plain(Params())
    for key in ("keep_options", "termination_term", "kl_term"):
        assert key not in default  # specs written before the ablations keep their hashes
    assert to_plain(Params(keep_options=2))["keep_options"] == 2
    assert to_plain(Params(kl_term=False))["kl_term"] is False
    assert to_plain(dataclasses.replace(Params(), termination_term=False)) != default


SPEC = """\
name: ablation
family: {{name: chain, params: {{num_states: 5}}}}
tasks: {{count: 3, train: 2, test: 1}}
methods:
  - name: ours
    method: offline_options
    params: {params}
evaluation: {{learner: smdp_q_learning, episodes: 2, max_steps: 20}}
"""


@pytest.mark.parametrize(
    ("params", "key", "message"),
    [
        ("{max_options: 2, keep_options: 3}", "keep_options", "must be <= max_options (2)"),
        ("{lambda2_auto: true, termination_term: false}", "lambda2_auto", "termination term"),
    ],
)
def test_bad_ablations_are_located_errors(params, key, message):
    with pytest.raises(SpecError) as err:
        parse_spec(SPEC.format(params=params))
    text = str(err.value)
    assert f"methods[0].params.{key}" in text and message in text, text
