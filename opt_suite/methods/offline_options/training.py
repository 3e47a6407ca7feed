"""Lines 9–14 of Algorithm 1: gradient ascent on Ĵ w.r.t. π and the new option only, to a plateau.

The objective itself (Theorems 1–2, Eq. 2) lives in ``opt_suite.objective``; this module turns
network weights into the tables it takes and runs the optimiser:

- π and the new option o' are evaluated on the U distinct demonstrated states, then gathered into
  the objective's [B, L, n] layout (n = A primitives, then the learned options in order of
  introduction, o' last);
- earlier options are *frozen*: their tables over the demonstrated states are constants computed
  once, so no gradient can reach them (Algorithm 1 updates only θ, φ and ψ);
- primitives are options with β ≡ 1 and a one-hot μ (Sec. 3.1): μ_a(s_t, a_t) = 1[a = a_t].

π's input (``Params.policy_features``): by default the options' own, as the paper's single network
design suggests. π only scores the options on the demonstrated states and the learner never uses
it, so it could instead have a free row per state (``onehot``). Measured on the paper spec (mean
of 5 seeds, λ2 = 100; ``opt-suite diagnose``): π on coordinates ends rounds far below a π table on
the same options (Ĵ −4.25 against −1.71; seed 3: −8.41 against −2.04); a per-state π closes that
gap (−2.69 against −2.62) but the options trained with it allow less Ĵ (−2.62 against −1.71) and
explain fewer demonstrated steps (6% against 34%): π fits the demonstrations with primitives
before the new option is any use, so the option gets little gradient. The weak π is what makes
the options worth having to Ĵ, so the default stays.

The optimiser is Adam (Kingma & Ba 2015), :func:`opt_suite.objective.adam.adam_ascent` applied to
each weight (the paper's pseudocode shows plain gradient ascent with step size α; Adam with α as
its step size is the usual stand-in).

How long a round trains: the paper runs N = 50 epochs per option and says each option's curves
"reach a plateau after 30 or 40 training epochs" (Sec. 4.1). Here N is the minimum; the round goes
on while Ĵ still gains at least ``plateau_tolerance`` (1%) of |Ĵ| over ``plateau_window`` (10)
epochs, up to ``max_epochs`` (200), so Algorithm 1's line 15 compares converged rounds, not
rounds cut short (the issue measured a 2-option round ending at Ĵ = −19.9 after a 1-option round at
−14.3, though the larger set contains the smaller).

No silent failure: a NaN or infinite Ĵ or gradient stops the round at the first bad step (that
step is not applied) and raises :class:`NonFiniteObjective`, which fails the discovery cell with
the epoch and step in its message — it never turns into "the option did not improve Ĵ".

Speed: a whole round (N epochs of ``steps_per_epoch`` full-batch steps) is one call of one
``tf.function`` whose inputs are all tensors (weights and λs included) with shape-free signatures,
so it is traced once per process and structure (likelihood form, feature kind, depth): batch size,
lengths, the number of options and of states never retrace it.
Each epoch's curves are Ĵ's parts evaluated *after* its updates, so the last point, Ĵ_N, is the
objective of exactly the option that Algorithm 1 keeps or rejects.

Length (over the 400 lines the tree aims for): one compiled round of Algorithm 1 (tables from
networks, Ĵ, the ascent, the plateau rule) is one tf.function; its helpers exist only for it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping

import numpy as np
import tensorflow as tf

from opt_suite.methods.offline_options.demos import DemoBatch
from opt_suite.methods.offline_options.params import Params
from opt_suite.objective import JhatConfig, JhatParts, jhat, weighted_total
from opt_suite.objective.adam import adam_ascent_all, zero_moments
from opt_suite.option_networks.networks import Weights, option_outputs, policy_probs

__all__ = [
    "CURVE_NAMES",
    "FrozenOptions",
    "NonFiniteObjective",
    "LAMBDA2_AUTO_RANGE",
    "RoundResult",
    "balanced_lambda2",
    "objective_parts",
    "term_weights",
    "train_round",
]

#: Per-epoch curves recorded for every round (the data of the paper's Figure 1a and more): Ĵ; its
#: likelihood term as Ĵ weighs it, before λ2 (mean Pr(h), or mean log Pr(h)/|h|); the mean over
#: demonstrations of Pr(h), of log Pr(h), of E[#terminations] / |h| (Theorem 1, normalised as in
#: Eq. 2) and of the KL regulariser g(h, O_O) (unweighted).
CURVE_NAMES = ("jhat", "likelihood", "prob", "log_prob", "terminations", "kl")


@dataclasses.dataclass(frozen=True, eq=False)
class FrozenOptions:
    """Tables of the options kept by earlier rounds, over the demonstrated states.

    Attributes:
      log_mu: float32 [m, U, A], log μ_o(s, a).
      beta: float32 [m, U], β_o(s).
    """

    log_mu: np.ndarray
    beta: np.ndarray

    @classmethod
    def none(cls, num_demo_states: int, num_actions: int) -> FrozenOptions:
        """No learned options yet (the first round: O = primitives)."""
        return cls(
            np.zeros((0, num_demo_states, num_actions), np.float32),
            np.zeros((0, num_demo_states), np.float32),
        )

    def append(self, log_mu: np.ndarray, beta: np.ndarray) -> FrozenOptions:
        """These options plus one more (Algorithm 1 line 18, O = O')."""
        return FrozenOptions(
            np.concatenate([self.log_mu, np.asarray(log_mu, np.float32)[None]]),
            np.concatenate([self.beta, np.asarray(beta, np.float32)[None]]),
        )


#: The automatic λ2 is clipped to this range (a likelihood term with no gradient at all, e.g. the
#: Pr(h) form underflowing, would otherwise ask for an infinite weight).
LAMBDA2_AUTO_RANGE = (1e-3, 1e6)


class NonFiniteObjective(ArithmeticError):
    """Ĵ or its gradient became NaN or infinite while training: the round cannot be trusted."""


@dataclasses.dataclass(frozen=True, eq=False)
class RoundResult:
    """The trained weights of one round and its curves.

    Attributes:
      option: the new option's weights after the round's last epoch.
      policy: π's weights after the round's last epoch.
      curves: one float64 value per epoch for each of :data:`CURVE_NAMES`, after that epoch.
      initial: the same quantities before the first update.
      converged: whether the round stopped on the plateau rule (False: it hit ``max_epochs``).
    """

    option: dict[str, np.ndarray]
    policy: dict[str, np.ndarray]
    curves: dict[str, np.ndarray]
    initial: dict[str, float]
    converged: bool

    @property
    def epochs(self) -> int:
        """Epochs trained this round."""
        return len(self.curves["jhat"])

    @property
    def final_jhat(self) -> float:
        """Ĵ_N, the objective after the round's last epoch (Algorithm 1 line 15)."""
        return float(self.curves["jhat"][-1])


def objective_parts(
    batch: Mapping[str, tf.Tensor],
    pi_table: tf.Tensor,
    log_mu_table: tf.Tensor,
    beta_table: tf.Tensor,
    config: JhatConfig,
) -> JhatParts:
    """Ĵ (Eq. 2) of the primitives + learned options on the demonstrations.

    Args:
      batch: ``positions`` int32 [B, L] (where s_t is among the demonstrated states, L = T+1),
        ``actions`` int32 [B, L] (a_t; the last column is padding), ``lengths`` int32 [B].
      pi_table: [U, A + m], π(s, ·) on the demonstrated states.
      log_mu_table: [m, U, A], log μ_o(s, ·) of the m learned options.
      beta_table: [m, U], β_o(s) of the learned options.
      config: λ1, λ2 and the likelihood form.
    """
    positions, actions = batch["positions"], batch["actions"]
    num_actions = tf.shape(log_mu_table)[-1]
    pi = tf.gather(pi_table, positions)  # [B, L, A + m]
    mu_primitive = tf.one_hot(actions, num_actions, dtype=pi.dtype)  # μ_a(s_t, a_t) = 1[a = a_t]
    beta_primitive = tf.ones_like(mu_primitive)  # β_a ≡ 1
    option_probs = tf.gather(tf.exp(tf.transpose(log_mu_table, [1, 0, 2])), positions)  # [B,L,m,A]
    mu_learned = tf.reduce_sum(option_probs * mu_primitive[:, :, None, :], axis=-1)
    beta_learned = tf.gather(tf.transpose(beta_table), positions)
    return jhat(
        pi,
        tf.concat([mu_primitive, mu_learned], axis=-1),
        tf.concat([beta_primitive, beta_learned], axis=-1),
        batch["lengths"],
        option_action_probs=option_probs,
        lambda1=config.lambda1,
        lambda2=config.lambda2,
        likelihood=config.likelihood,
        chunk=config.chunk,
        jit_compile=config.jit_compile,
    )


def _parts(option, policy, frozen_log_mu, frozen_beta, batch, states, coords, config) -> JhatParts:
    """Ĵ's parts with the new option o' appended to the frozen ones (Algorithm 1 line 7, O').

    With ``likelihood="prob"`` the tables and the recursion are float64 (activated from the float32
    logits): Eq. 2's Pr(h) form pushes every demonstration but the shortest towards probability 0,
    and in float32 the softmaxes then return exact zeros whose gradients are 0·∞ = NaN (measured on
    the paper setting: NaN by epoch 18–28 on 3 of 5 seeds). Parts come back as float32.
    """
    dtype = tf.float64 if config.likelihood == "prob" else tf.float32
    log_mu, beta = option_outputs(option, states, coords, dtype)
    parts = objective_parts(
        batch,
        policy_probs(policy, states, coords, dtype),
        tf.concat([tf.cast(frozen_log_mu, dtype), log_mu[None]], axis=0),
        tf.concat([tf.cast(frozen_beta, dtype), beta[None]], axis=0),
        config,
    )
    return JhatParts(*(tf.cast(x, tf.float32) for x in parts))


def _train(option, policy, frozen_log_mu, frozen_beta, batch, states, coords, hyper, likelihood):
    """Epochs of ``steps_per_epoch`` Adam steps until Ĵ plateaus, the cap, or a non-finite value.

    Returns (option, policy, curves [E + 1, len(CURVE_NAMES)], status, steps): row 0 of the curves
    is before any update, row k after epoch k; ``status`` is 0 (trained), 1 (a non-finite Ĵ or
    gradient at step ``steps + 1``: that step is not applied) or 2 (Ĵ non-finite after an epoch).
    """
    # Ĵ's parts come unweighted from the objective; weighting them here keeps λ1, λ2 tensors, so
    # one trace serves every value (JhatParts.total = λ2·prob − terminations + λ1·kl).
    # The whole round is one graph already; an XLA cluster for the recursion alone cannot be
    # differentiated from inside it (its loop state would cross the XLA boundary).
    config = JhatConfig(lambda1=0.0, lambda2=1.0, likelihood=likelihood, jit_compile=False)

    def total_of(parts: JhatParts) -> tf.Tensor:
        return weighted_total(
            parts.prob_term,
            hyper["termination_weight"] * parts.termination_term,
            parts.kl_term,
            hyper["lambda1"],
            hyper["lambda2"],
        )

    # One flat namespace of trainable weights for Adam: "option/w1", "policy/pi_w", ...
    flat = {f"option/{k}": w for k, w in option.items()}
    flat.update({f"policy/{k}": w for k, w in policy.items()})
    moments = zero_moments(flat)

    def parts_of(weights) -> JhatParts:
        nets: dict[str, dict[str, tf.Variable]] = {"option": {}, "policy": {}}
        for key, w in weights.items():
            net, name = key.split("/", 1)
            nets[net][name] = w
        return _parts(
            nets["option"], nets["policy"], frozen_log_mu, frozen_beta, batch, states, coords,
            config,
        )  # fmt: skip

    def row(parts: JhatParts) -> tf.Tensor:
        return tf.stack(
            [
                total_of(parts),
                parts.prob_term,  # the likelihood term as Ĵ weighs it (before λ2)
                tf.reduce_mean(tf.exp(parts.log_prob)),  # mean Pr(h), whatever the likelihood
                tf.reduce_mean(parts.log_prob),
                parts.termination_term,
                parts.kl_term,
            ]
        )

    def all_finite(total, grads) -> tf.Tensor:
        checks = [tf.reduce_all(tf.math.is_finite(tf.convert_to_tensor(g))) for g in grads.values()]
        return tf.reduce_all(tf.stack([tf.math.is_finite(total), *checks]))

    # Row 0: before any update (the jump of the paper's Figure 1a when o' and π are new).
    curves = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    curves = curves.write(0, row(parts_of(flat)))
    step = tf.constant(0)
    status = tf.constant(0)
    done = tf.constant(0)
    for epoch in tf.range(hyper["max_epochs"]):
        for _ in tf.range(hyper["steps_per_epoch"]):
            with tf.GradientTape() as tape:
                tape.watch(flat)
                total = total_of(parts_of(flat))
            grads = tape.gradient(total, flat)
            if not all_finite(total, grads):
                status = tf.constant(1)
                break
            step += 1
            flat, moments = adam_ascent_all(flat, grads, moments, step, hyper["learning_rate"])
        if status != 0:
            break
        latest = row(parts_of(flat))
        curves = curves.write(epoch + 1, latest)
        done = epoch + 1
        if not tf.math.is_finite(latest[0]):
            status = tf.constant(2)
            break
        if done >= hyper["min_epochs"]:
            # The plateau rule (Params.plateau_window): Ĵ's gain over the last window epochs.
            past = curves.read(tf.maximum(done - hyper["window"], 0))[0]
            if latest[0] - past <= hyper["tolerance"] * tf.abs(past):
                break
    option_out = {k.split("/", 1)[1]: w for k, w in flat.items() if k.startswith("option/")}
    policy_out = {k.split("/", 1)[1]: w for k, w in flat.items() if k.startswith("policy/")}
    return option_out, policy_out, curves.stack(), status, step


def _spec(x: np.ndarray | tf.Tensor) -> tf.TensorSpec:
    """A signature entry with every dimension unknown (rank and dtype kept)."""
    return tf.TensorSpec([None] * len(x.shape), tf.as_dtype(x.dtype))


_COMPILED: dict[tuple, object] = {}


def _compiled_train(args: tuple, likelihood: str):
    """``_train`` compiled with shape-free signatures: traced once per structure and process.

    The structure is the likelihood form and the weight names (the feature kind and depth); batch
    size, lengths, the number of options and the state count never cause a retrace.
    """
    key = (likelihood, *(tuple(sorted(a)) for a in args if isinstance(a, dict)))
    if key not in _COMPILED:
        signature = tf.nest.map_structure(_spec, list(args))
        _COMPILED[key] = tf.function(
            functools.partial(_train, likelihood=likelihood), input_signature=signature
        )
    return _COMPILED[key]


def term_weights(params: Params) -> tuple[float, float]:
    """(λ1, weight of the termination term) of Ĵ as the ablation switches leave them.

    ``Params.kl_term: false`` zeroes λ1 and ``termination_term: false`` the termination term's
    weight (1 in Eq. 2), so that Ĵ = λ2·likelihood − w·terminations + λ1·KL keeps one form (and
    one trace) for every ablation; with both off it is the likelihood alone, DDO's objective
    (Fox et al. 2017) in Ĵ's parametrisation.
    """
    return (params.lambda1 if params.kl_term else 0.0), (1.0 if params.termination_term else 0.0)


def batch_tensors(demos: DemoBatch) -> dict[str, tf.Tensor]:
    """The demonstrations in the objective's layout: every [B, T+1] (actions padded by one)."""
    return {
        "positions": tf.constant(demos.positions),
        "actions": tf.constant(np.pad(demos.actions, [(0, 0), (0, 1)])),
        "lengths": tf.constant(demos.lengths),
    }


def _network_input(coords: np.ndarray | None, num_states: int) -> tf.Tensor:
    """The states' dense input: float32 [U, d]; frames (conv options) stay uint8 [U, H, W, C].

    Without dense features the first layer has no coord_w; an empty [U, 0] keeps one layout.
    Frames are cast inside the network: a float32 copy of them would be 4x their size.
    """
    if coords is None:
        return tf.constant(np.zeros((num_states, 0)), tf.float32)
    if coords.dtype == np.uint8:
        return tf.constant(coords)
    return tf.constant(coords, tf.float32)


def train_round(
    demos: DemoBatch,
    coords: np.ndarray | None,
    frozen: FrozenOptions,
    option: Weights,
    policy: Weights,
    params: Params,
) -> RoundResult:
    """Algorithm 1 lines 9–14: ascent on Ĵ w.r.t. θ (π) and φ, ψ (the new option) until it plateaus.

    At least ``params.epochs`` (the paper's N) epochs, then on until Ĵ's gain over the last
    ``plateau_window`` epochs is below ``plateau_tolerance`` · |Ĵ| (a plateau), at most
    ``max_epochs``.

    Args:
      demos: the padded demonstrations.
      coords: float32 [U, d] dense features of ``demos.states``, or None (one-hot input only).
      frozen: the tables of the options kept so far.
      option: the new option's initial weights (line 6).
      policy: π's initial weights (line 8), with A + m + 1 outputs.
      params: the method's parameters.

    Raises:
      NonFiniteObjective: Ĵ or its gradient became NaN or infinite (the message says when).
    """
    lambda1, termination_weight = term_weights(params)
    hyper = {
        "min_epochs": tf.constant(params.epochs, tf.int32),
        "max_epochs": tf.constant(params.max_epochs, tf.int32),
        "window": tf.constant(params.plateau_window, tf.int32),
        "tolerance": tf.constant(params.plateau_tolerance, tf.float32),
        "steps_per_epoch": tf.constant(params.steps_per_epoch, tf.int32),
        "learning_rate": tf.constant(params.learning_rate, tf.float32),
        "lambda1": tf.constant(lambda1, tf.float32),
        "lambda2": tf.constant(params.lambda2, tf.float32),
        "termination_weight": tf.constant(termination_weight, tf.float32),
    }
    args = (
        {k: tf.constant(v, tf.float32) for k, v in option.items()},
        {k: tf.constant(v, tf.float32) for k, v in policy.items()},
        tf.constant(frozen.log_mu, tf.float32),
        tf.constant(frozen.beta, tf.float32),
        batch_tensors(demos),
        tf.constant(demos.states, tf.int32),
        _network_input(coords, len(demos.states)),
        hyper,
    )
    option_w, policy_w, curves, status, steps = _compiled_train(args, params.likelihood)(*args)
    values = curves.numpy().astype(np.float64)
    status, steps = int(status), int(steps)
    if status:
        epoch = len(values) if status == 1 else len(values) - 1
        what = "a non-finite gradient of J-hat" if status == 1 else "J-hat = nan"
        raise NonFiniteObjective(
            f"{what} at epoch {epoch} (Adam step {steps + (status == 1)}; likelihood "
            f"{params.likelihood!r}, last finite J-hat {_last_finite(values[:, 0])}): training "
            "diverged, so this option set cannot be scored"
        )
    epochs = len(values) - 1
    return RoundResult(
        option={k: v.numpy() for k, v in option_w.items()},
        policy={k: v.numpy() for k, v in policy_w.items()},
        curves=dict(zip(CURVE_NAMES, values[1:].T, strict=True)),
        initial=dict(zip(CURVE_NAMES, values[0].tolist(), strict=True)),
        converged=epochs < params.max_epochs or _plateaued(values[:, 0], params),
    )


def balanced_lambda2(
    demos: DemoBatch,
    coords: np.ndarray | None,
    frozen: FrozenOptions,
    option: Weights,
    policy: Weights,
    params: Params,
) -> float:
    """The automatic λ2 (``Params.lambda2_auto``): the weight that balances Ĵ's two terms.

    The paper leaves λ2 to tuning and names "finding the right balance between hyperparameters
    automatically" as future work (Sec. 5). Defined here as a gradient balance at the start of
    Algorithm 1, over every weight a round trains (π and the new option)::

        λ2 = ‖∇ E[#terminations]/|h|‖ / ‖∇ likelihood term‖      (clipped to LAMBDA2_AUTO_RANGE)

    so that at initialisation the likelihood term, weighted by λ2, pulls on the networks exactly as
    hard as the termination term: neither "reproduce the demonstrations" nor "decide less" wins by
    the choice of a unit. It is computed once, in round 1, and kept for every round, so that Ĵ is
    one objective across rounds and line 15's comparison stays meaningful.

    Raises:
      NonFiniteObjective: a gradient norm is not finite.
    """
    config = JhatConfig(lambda1=0.0, lambda2=1.0, likelihood=params.likelihood, jit_compile=False)
    nets = {
        "option": {k: tf.constant(v, tf.float32) for k, v in option.items()},
        "policy": {k: tf.constant(v, tf.float32) for k, v in policy.items()},
    }
    weights = [*nets["option"].values(), *nets["policy"].values()]
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(weights)
        parts = _parts(
            nets["option"],
            nets["policy"],
            tf.constant(frozen.log_mu, tf.float32),
            tf.constant(frozen.beta, tf.float32),
            batch_tensors(demos),
            tf.constant(demos.states, tf.int32),
            _network_input(coords, len(demos.states)),
            config,
        )

    def norm(target: tf.Tensor) -> float:
        grads = tape.gradient(target, weights)
        return float(
            np.sqrt(sum(np.sum(np.square(tf.convert_to_tensor(g).numpy(), dtype=np.float64))
                        for g in grads if g is not None))
        )  # fmt: skip

    termination, likelihood = norm(parts.termination_term), norm(parts.prob_term)
    if not (np.isfinite(termination) and np.isfinite(likelihood)):
        raise NonFiniteObjective(
            f"automatic lambda2: gradient norms {termination} (terminations) and {likelihood} "
            "(likelihood) are not finite"
        )
    low, high = LAMBDA2_AUTO_RANGE
    return float(np.clip(termination / max(likelihood, 1e-300), low, high))


def _plateaued(jhat: np.ndarray, params: Params) -> bool:
    """The plateau rule of ``_train`` at the last row of ``jhat`` (row 0 = before training)."""
    past = jhat[max(len(jhat) - 1 - params.plateau_window, 0)]
    return bool(jhat[-1] - past <= params.plateau_tolerance * abs(past))


def _last_finite(values: np.ndarray) -> str:
    finite = values[np.isfinite(values)]
    return f"{finite[-1]:.6g}" if len(finite) else "none"
