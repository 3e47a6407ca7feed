"""Algorithm 1 of Garcia, Nota & Thomas (2020): learn options one at a time until Ĵ stops improving.

Line numbers in the comments are the paper's pseudocode's::

     1  Collect set of trajectories H
     2  Initialize option set O with primitive options
     3  done = false
     4  Ĵ_prev = −∞
     5  while done == false
     6      Initialize new option o' = (μ'_φ, β'_ψ)
     7      O' = O ∪ o'
     8      Initialize parameters θ of policy π_θ
     9–14   for k = 1..N: Ĵ_k = Ĵ(π_θ, O', H); θ, φ, ψ += α ∂Ĵ_k/∂(θ, φ, ψ)
    15      if Ĵ_N − Ĵ_prev < Δ
    16          done = true
    17      else
    18          O = O'
    19          Ĵ_prev = Ĵ_N
    22  return O                                (20, 21: end if, end while)

Δ is relative here, as the paper sets it for four rooms ("10% of Ĵ at the previous iteration"):
Δ = delta · |Ĵ_prev|. The loop also stops once ``max_options`` options are kept (the paper's run
introduces 4). Options rejected on line 15 are not returned, but their epochs stay in the curves.
Lines 9–14 train until Ĵ plateaus (at least N epochs, see ``training.py``); line 8 starts π from
the previous round's π when ``warm_start`` is set (see :func:`_initial_policy`).

Seeds: the r-th introduced option and the r-th policy over options draw their initial weights from
fixed children of the run's seed (``option_seed``, ``policy_seed`` in
:mod:`opt_suite.option_networks.initial`), so ``random_options`` reproduces the untrained options
exactly.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np

from opt_suite.methods.base import Discovery
from opt_suite.methods.offline_options.demos import DemoBatch
from opt_suite.methods.offline_options.params import Params
from opt_suite.methods.offline_options.training import (
    CURVE_NAMES,
    FrozenOptions,
    NonFiniteObjective,
    balanced_lambda2,
    train_round,
)
from opt_suite.option_networks.features import StateFeatures
from opt_suite.option_networks.initial import new_option, policy_seed, tabulate
from opt_suite.option_networks.networks import init_policy
from opt_suite.options import OptionSet

__all__ = [
    "LearnedOptions",
    "learn_options",
    "improved_enough",
]


def policy_features(features: StateFeatures, params: Params) -> StateFeatures:
    """What π sees (``Params.policy_features``): the options' input, or a row per state.

    π only scores options on the demonstrated states, so it needs no generalisation; with a row
    per state it can fit each of them, which the options' two coordinates cannot (see
    ``training.py`` for what that does to the options). On frames every demonstrated frame is its
    own state, so a row per frame.
    """
    if params.policy_features == "options":
        return features
    return StateFeatures(features.num_states, use_index=True, coords=None)


def _initial_policy(features, num_actions, params, seed, index, previous):
    """Line 8: π's weights for round ``index`` (A primitives + ``index`` kept options + o').

    The paper initialises π afresh in every round ("a new policy, π, is initialized arbitrarily",
    Sec. 4.1) and does not say how. With ``warm_start`` round k+1 starts from round k's trained π,
    with a zero-weight, zero-bias output for o': the larger option set then starts close to where
    the smaller one ended, so its converged Ĵ does not fall below it for lack of training.
    """
    if previous is None or not params.warm_start:
        num_options = num_actions + index + 1
        return init_policy(features, params.hidden_sizes, num_options, policy_seed(seed, index))
    warm = {k: np.array(v, np.float32) for k, v in previous.items()}
    warm["pi_w"] = np.concatenate([warm["pi_w"], np.zeros_like(warm["pi_w"][:, :1])], axis=1)
    warm["pi_b"] = np.concatenate([warm["pi_b"], np.zeros(1, np.float32)])
    return warm


def improved_enough(jhat_new: float, jhat_prev: float, delta: float) -> bool:
    """Line 15, negated: Ĵ_N − Ĵ_prev ≥ Δ, Δ = delta · |Ĵ_prev| (always true for Ĵ_prev = −∞)."""
    if not math.isfinite(jhat_new):
        return False
    if jhat_prev == -math.inf:
        return True
    return jhat_new - jhat_prev >= delta * abs(jhat_prev)


@dataclasses.dataclass(frozen=True, eq=False)
class LearnedOptions:
    """What Algorithm 1 returns, tabulated, plus its training record.

    Attributes:
      mu: float64 [m, S, A] of the kept options over every state.
      beta: float64 [m, S].
      curves: per-epoch curves over all rounds (:data:`CURVE_NAMES` and ``option_round``, the
        0-based round each epoch belongs to).
      rounds: one dict per round: ``jhat_initial`` (Ĵ before training), ``jhat`` (Ĵ_N),
        ``threshold`` (Ĵ_prev + Δ, None in the first round), ``kept``, ``epochs`` (trained) and
        ``converged`` (stopped on the plateau rule rather than at ``max_epochs``) and ``lambda2``
        (the weight used: ``Params.lambda2``, or the automatic one with ``lambda2_auto``).
      stop_reason: ``"delta"`` (line 15), ``"max_options"`` or ``"keep_options"`` (the
        ablation that keeps exactly K options). A round whose Ĵ or gradient turns
        non-finite raises :class:`NonFiniteObjective` instead: a diverged round says nothing
        about whether the option helps.
      weights: the kept options' network weights, in order (networks on frames are acted with
        by calling them: their tables cover only the demonstrated frames).
      policy: the weights of π as trained in the last kept round (A primitives + the kept options
        as outputs), None when no option was kept: the π under which Ĵ_N was reached.
    """

    mu: np.ndarray
    beta: np.ndarray
    curves: dict[str, np.ndarray]
    rounds: list[dict[str, Any]]
    stop_reason: str
    weights: list[dict[str, np.ndarray]] = dataclasses.field(default_factory=list)
    policy: dict[str, np.ndarray] | None = None

    def discovery(
        self, options: OptionSet, demonstrations: int, start: float, **measures: int
    ) -> Discovery:
        """The method's result: ``options`` made of these, the curves, and the run's info.

        Args:
          options: the kept options as an option set (tabular or networks).
          demonstrations: how many demonstrations they were learned from.
          start: ``time.perf_counter()`` when discovery began.
          **measures: what the caller adds about its inputs (e.g. ``demonstrated_states``).
        """
        info = {
            "options_kept": len(options),
            "rounds_tried": len(self.rounds),
            "stop_reason": self.stop_reason,
            "rounds": self.rounds,
            "demonstrations": demonstrations,
            **measures,
            "wall_time_s": round(time.perf_counter() - start, 3),
        }
        return Discovery(options=options, curves=self.curves, info=info)


def learn_options(
    demos: DemoBatch,
    features: StateFeatures,
    num_actions: int,
    params: Params,
    seed: np.random.SeedSequence,
) -> LearnedOptions:
    """Algorithm 1 on the demonstrations ``demos`` (line 1 happened before: H is given)."""
    all_states = np.arange(features.num_states, dtype=np.int32)
    frozen = FrozenOptions.none(len(demos.states), num_actions)  # line 2: O = primitives
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    kept_weights: list[dict[str, np.ndarray]] = []
    jhat_prev = -math.inf  # line 4
    curves: dict[str, list[np.ndarray]] = {name: [] for name in (*CURVE_NAMES, "option_round")}
    rounds: list[dict[str, Any]] = []
    stop_reason = "max_options" if params.keep_options is None else "keep_options"
    demo_coords = None if features.coords is None else features.coords[demos.states]
    previous_policy = None
    policy_input = policy_features(features, params)
    # ``keep_options`` (an ablation): exactly K rounds, each kept whatever its Ĵ (line 15 off).
    forced = params.keep_options
    while len(kept) < (forced or params.max_options):  # line 5 (capped at max_options)
        index = len(rounds)
        option = new_option(features, num_actions, params.hidden_sizes, seed, index)  # line 6
        # Line 7: O' = O ∪ o' — the frozen tables of O plus the trainable o' (see training.py).
        policy = _initial_policy(policy_input, num_actions, params, seed, index, previous_policy)
        if params.lambda2_auto and index == 0:  # once, so Ĵ is one objective for every round
            lambda2 = balanced_lambda2(demos, demo_coords, frozen, option, policy, params)
            params = dataclasses.replace(params, lambda2=lambda2)
        try:
            result = train_round(demos, demo_coords, frozen, option, policy, params)  # 9–14
        except NonFiniteObjective as exc:
            raise NonFiniteObjective(
                f"Algorithm 1, round {index + 1} (training option {index + 1} with "
                f"{len(kept)} kept): {exc}"
            ) from None
        for name in CURVE_NAMES:
            curves[name].append(result.curves[name])
        curves["option_round"].append(np.full(result.epochs, index, dtype=np.float64))
        jhat_n = result.final_jhat
        keep = forced is not None or improved_enough(jhat_n, jhat_prev, params.delta)
        threshold = jhat_prev + params.delta * abs(jhat_prev) if math.isfinite(jhat_prev) else None
        rounds.append(
            {
                "jhat_initial": result.initial["jhat"],
                "jhat": jhat_n,
                "threshold": threshold,
                "kept": keep,
                "epochs": result.epochs,
                "converged": result.converged,
                "lambda2": params.lambda2,
            }
        )
        if not keep:  # lines 15–16
            stop_reason = "delta"
            break
        previous_policy = result.policy
        # Lines 17–19: O = O', Ĵ_prev = Ĵ_N. The option's weights never change again: we keep its
        # tables over the demonstrated states (for later rounds) and over every state (the result).
        mu_demo, beta_demo = tabulate(result.option, features, demos.states)
        # A saturated float32 softmax gives exact zeros after long training (seen on the 40x40
        # paper setting with epochs=150): log 0 = -inf is the right log-probability, not an error.
        with np.errstate(divide="ignore"):
            frozen = frozen.append(np.log(mu_demo), beta_demo)
        kept.append(tabulate(result.option, features, all_states))
        kept_weights.append(result.option)
        jhat_prev = jhat_n
    mu = np.stack([m for m, _ in kept]) if kept else np.zeros((0, len(all_states), num_actions))
    beta = np.stack([b for _, b in kept]) if kept else np.zeros((0, len(all_states)))
    return LearnedOptions(
        mu=mu,
        beta=beta,
        curves={name: np.concatenate(parts) for name, parts in curves.items()},
        rounds=rounds,
        stop_reason=stop_reason,
        weights=kept_weights,
        policy=previous_policy,
    )
