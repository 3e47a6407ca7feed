"""The parameters of offline option learning (Garcia, Nota & Thomas 2020, Sec. 3-4.1, Algorithm 1).

Spec key ``methods[].params`` of a ``method: offline_options`` entry. The paper's four-rooms
settings are ``lambda2: 100``, ``delta: 0.1`` and, "when adding KL regularization",
``lambda1: 0.001``.

Two choices the paper leaves open are measured (``benchmarks/offline_options_choices.py``):

- ``likelihood``: Eq. 2 weighs Pr(h) itself. For the 17–43-step demonstrations of the 40x40 grid
  Pr(h) starts near e^-60, so that term and its gradient are 0 in float32: Ĵ reduces to "minimise
  terminations", which an option that never terminates wins whatever it does (Ĵ_N = -0.000 in every
  round). ``log_prob_per_step`` (λ2·log Pr(h)/|h|) keeps the demonstrations in the objective; on
  related 10x15 tasks (goals in one room) its options need 966 ± 16 steps over the first 20
  test episodes against 2915 ± 634 with ``prob`` (primitives: 5041). Default: ``log_prob_per_step``.
  ``prob`` is computed in float64 (``training.py``): in float32 it turned Ĵ into NaN by epoch
  18–28 on 3 of the paper spec's 5 seeds, as the shortest demonstration takes over and every other
  one is driven to probability 0. In float64 it trains on all 5 (measured with these defaults), but
  it stays dominated by one demonstration: Ĵ_N ≈ 16.5 on 2 seeds, 0.7 on 1, ≈ 0 on 2 (an option
  that never ends, no demonstration reproduced). That is Eq. 2's optimum, not an artefact; the
  log-space variant has a different optimum, so it is a separate choice, not a stabilisation.
- ``features``: see ``opt_suite/option_networks/features.py``. Default: ``coords``.

Ablations (issue 25: what of the learned options comes from Ĵ rather than from imitation):
``keep_options: K`` keeps exactly K options (line 15's Δ test off); ``termination_term: false``
and ``kl_term: false`` drop those terms of Ĵ (both off: the likelihood alone, a DDO-like
objective). They are ``added_later`` keys: a spec that does not set them keeps its hash.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from opt_suite.option_networks.trunk import MAX_LAYERS
from opt_suite.params import param

# Options are added one at a time, each a full training run: more than this is a typo.
MAX_OPTIONS = 64

__all__ = ["Params"]


@dataclasses.dataclass(frozen=True)
class Params:
    """Offline option learning: the objective's weights, Algorithm 1's loop and the networks."""

    lambda1: float = param(
        0.0,
        doc="weight of the KL diversity regulariser g(h, O_O) in J-hat (Eq. 2); paper: 0.001 or 0",
        ge=0,
    )
    lambda2: float = param(
        100.0,
        doc="weight of the probability of generating h in J-hat (Eq. 2); paper: 100, on Pr(h)"
        " itself (likelihood: prob). With the default log_prob_per_step the term is"
        " lambda2*log Pr(h)/|h|, tens per step against a termination term of at most 1: at 100"
        " J-hat barely prefers an option that stays over one that stops (lambda2_auto balances"
        " the two)",
        ge=0,
    )
    lambda2_auto: bool = param(
        False,
        doc="choose lambda2 automatically (lambda2 is then ignored): the ratio of the gradient "
        "norms of the termination and likelihood terms at the start of round 1, so that both "
        "pull on the networks equally; kept for every round (J-hat stays one objective)",
    )
    delta: float = param(
        0.1,
        doc="Algorithm 1 line 15: stop when J_N - J_prev < delta * |J_prev| (relative); paper: 10%",
        ge=0,
    )
    epochs: int = param(
        50,
        doc="N, the minimum training epochs of each round (paper: 50); a round goes on past N "
        "while J-hat still improves (see plateau_window), up to max_epochs",
        ge=1,
        le=100_000,
    )
    max_epochs: int = param(
        200,
        doc="cap on a round's epochs; max_epochs = epochs trains exactly N epochs per round",
        ge=1,
        le=100_000,
    )
    plateau_window: int = param(
        10,
        doc="a round has converged at epoch k >= epochs when J_k - J_(k-window) <= "
        "plateau_tolerance * |J_(k-window)| (J-hat's gain over the last window epochs)",
        ge=1,
    )
    plateau_tolerance: float = param(
        0.01, doc="relative gain of J-hat over plateau_window epochs that counts as a plateau", ge=0
    )
    warm_start: bool = param(
        True,
        doc="round k+1 starts pi from round k's trained pi (the new option's column at zero "
        "weight), so the larger option set starts where the smaller one ended; false: a fresh "
        "random pi every round",
    )
    steps_per_epoch: int = param(
        10,
        doc="full-batch gradient steps per epoch (the curves record one point per epoch)",
        ge=1,
        le=100_000,
    )
    max_options: int = param(
        4, doc="stop after this many learned options (paper: 4)", ge=1, le=MAX_OPTIONS
    )
    learning_rate: float = param(0.01, doc="Adam step size (alpha in Algorithm 1)", gt=0)
    hidden_sizes: tuple[int, ...] = param(
        (32, 32),
        doc="hidden layers of every option and of pi (paper: two layers of 32)",
        ge=1,
        le=4096,
    )
    likelihood: Literal["prob", "log_prob_per_step"] = param(
        "log_prob_per_step",
        doc="first term of J-hat: lambda2*log Pr(h)/|h| (default), or lambda2*Pr(h) as Eq. 2 "
        "writes it, whose value and gradient underflow to 0 on long demonstrations",
    )
    policy_features: Literal["options", "onehot"] = param(
        "options",
        added_later=True,
        doc="input of pi, the policy over options Algorithm 1 trains to score options on the "
        "demonstrations (the learner never uses it): options, the options' own input (features); "
        "onehot, one free weight row per state (or frame). Measured on the paper spec: onehot "
        "closes the gap between pi and a pi table (J-hat -4.25 -> -2.69, table -2.62) but the "
        "options learned with it allow less J-hat (table -2.62 against -1.71), so it is opt-in",
    )
    features: Literal["onehot", "coords", "both", "frames"] = param(
        "coords",
        doc="input of the networks. coords (default) fits every family: a grid cell's (row, col), "
        "an index scaled to [-1, 1], a vector as it is, an image's pixels (conv options); "
        "onehot/both: a weight row per index (index observations); frames: convolutional "
        "options (images). Measured choice on grids: see features.py",
    )
    keep_options: int | None = param(
        None,
        added_later=True,
        doc="ablation: keep exactly this many options, each round kept whatever its J-hat (line "
        "15's delta test off); must be <= max_options; null (default): Algorithm 1's delta test",
        ge=1,
        le=MAX_OPTIONS,
    )
    termination_term: bool = param(
        True,
        added_later=True,
        doc="ablation: false drops J-hat's termination term (E[#terminations]/|h|, Eq. 2); with "
        "kl_term false too, J-hat is the likelihood alone (a DDO-like objective)",
    )
    kl_term: bool = param(
        True,
        added_later=True,
        doc="ablation: false drops J-hat's KL diversity term whatever lambda1 is",
    )

    def check(self) -> list[tuple[str, str]]:
        """Cross-field problems, each as (field, message)."""
        problems: list[tuple[str, str]] = []
        if self.max_epochs < self.epochs:
            problems.append(
                ("max_epochs", f"must be >= epochs ({self.epochs}), got {self.max_epochs}")
            )
        if not self.hidden_sizes:
            problems.append(("hidden_sizes", "needs at least one hidden layer (paper: (32, 32))"))
        if len(self.hidden_sizes) > MAX_LAYERS:
            problems.append(
                (
                    "hidden_sizes",
                    f"expected at most {MAX_LAYERS} layers, got {len(self.hidden_sizes)}",
                )
            )
        if self.keep_options is not None and self.keep_options > self.max_options:
            problems.append(
                (
                    "keep_options",
                    f"must be <= max_options ({self.max_options}), got {self.keep_options}",
                )
            )
        if self.lambda2_auto and not self.termination_term:
            problems.append(
                (
                    "lambda2_auto",
                    "balances the likelihood against the termination term, which "
                    "termination_term: false drops (expected lambda2_auto: false)",
                )
            )
        return problems
