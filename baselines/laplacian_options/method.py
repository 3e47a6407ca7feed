"""Laplacian options: eigenoptions without a model, from a random walk (deep Laplacian methods).

Read top to bottom, as the pipeline:

1. a uniform random walk of ``walk_frames`` env steps on the train tasks (``baselines.random_walk``,
   counted against the discovery's budget);
2. the first ``count + 1`` eigenfunctions of the walk's Laplacian, learned by a network with the
   augmented Lagrangian objective of Gomez, Bowling & Machado (2024) (``allo.py``; why ALLO and
   not Wu et al.'s graph drawing: ALLO gives each eigenfunction, graph drawing only their span);
3. for each eigenfunction after the constant first one, its eigenpurpose r = u(s') - u(s) and the
   eigenoption that climbs it, by fitted Q-iteration on the same transitions (``fqi.py``),
   terminating where no action has positive value (Machado et al. 2017).

On a tabular family the options are tables: greedy over Q in every state the walk visited,
terminating at once in states it never saw (no knowledge there). On any other family they are
keras networks (``NetworkOptionSet``) built on the Q networks: near-greedy softmax, sigmoid
termination on max_a Q.

Errors, never a NaN option: a non-finite eigenfunction, an eigenfunction that collapsed to a
constant (spread below ``min_spread``), an eigenpurpose with no reward variation.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, ClassVar

import numpy as np

from baselines.laplacian_options.params import LaplacianOptionsParams
from opt_suite.families.capabilities import DISCRETE_ACTIONS
from opt_suite.methods.base import (
    Discovery,
    DiscoveryContext,
    Method,
    discrete_actions,
    observation_shape,
)
from opt_suite.methods.budget import DiscoveryBudget, DiscoverySteps

__all__ = ["LaplacianOptions", "TEMPERATURE"]

#: Softmax temperature of a network option's mu and slope of its beta, in units of the
#: eigenpurpose reward's standard deviation (rewards are normalised to it, ``fqi.py``).
TEMPERATURE = 0.05


def _child(seed: np.random.SeedSequence, purpose: int) -> np.random.SeedSequence:
    """A fixed child stream of ``seed`` per purpose (``spawn`` would depend on call order)."""
    return np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, purpose))


@dataclasses.dataclass(frozen=True, eq=False)
class Eigenfunctions:
    """Stage 2's result: the network, the walk it learned from, its values on the walk.

    Attributes:
      network: keras model observations -> u [n, count + 1] (u_0 the constant one).
      walk: the random walk (``baselines.random_walk.Walk``).
      u_t, u_tp1: float [N, count + 1], u at the walk's s_t and s_t+1.
      loss: float [steps], the objective per step.
      eigenvalues: float [count + 1], each eigenfunction's estimated eigenvalue.
      spread: float [count + 1], each eigenfunction's standard deviation over the walk's states.
    """

    network: Any
    walk: Any
    u_t: np.ndarray
    u_tp1: np.ndarray
    loss: np.ndarray
    eigenvalues: np.ndarray
    spread: np.ndarray


def learn_eigenfunctions(context: DiscoveryContext, p: Any, method: str) -> Eigenfunctions:
    """Stages 1 and 2: the random walk, and the first ``p.count + 1`` eigenfunctions by ALLO.

    Raises:
      FloatingPointError: non-finite eigenfunctions.
      ValueError: an eigenfunction after the first whose spread is below ``p.min_spread``.
    """
    from baselines.laplacian_options.allo import train_allo
    from baselines.laplacian_options.fqi import values
    from baselines.laplacian_options.networks import state_network
    from baselines.random_walk import uniform_random_walk

    walk = uniform_random_walk(context, method, p.walk_frames, p.episode_steps)
    seed = int(_child(context.seed, 1).generate_state(1)[0])
    network = state_network(
        context.family.observation_space, p.count + 1, p.hidden_sizes, seed, "laplacian"
    )
    rng = np.random.default_rng(_child(context.seed, 2))
    loss, eigenvalues = train_allo(network, walk.observations, walk.next_observations, p, rng)
    u_t, u_tp1 = values(network, walk.observations), values(network, walk.next_observations)
    if not (np.all(np.isfinite(u_t)) and np.all(np.isfinite(u_tp1))):
        raise FloatingPointError(
            f"{method}: the learned eigenfunctions are not finite (NaN/inf) after {p.steps} "
            "steps; lower learning_rate"
        )
    spread = u_t.std(axis=0)
    collapsed = [i for i in range(1, p.count + 1) if spread[i] < p.min_spread]
    if collapsed:
        raise ValueError(
            f"{method}: eigenfunction(s) {collapsed} collapsed to a constant (spread "
            f"{', '.join(f'{spread[i]:.3g}' for i in collapsed)} over the walk's states, below "
            f"min_spread = {p.min_spread}); more steps, a longer walk, or fewer options"
        )
    return Eigenfunctions(network, walk, u_t, u_tp1, loss, eigenvalues, spread)


def eigenoption_values(
    learned: Eigenfunctions,
    p: Any,
    space: Any,
    num_actions: int,
    seed: np.random.SeedSequence,
    method: str,
) -> tuple[Any, np.ndarray]:
    """Stage 3: one Q network with a head per eigenfunction 1..count, by fitted Q-iteration.

    Returns:
      (the network, observations -> Q [n, count * A]; its fit's error per sweep).

    Raises:
      ValueError: an eigenfunction constant along every observed step (no reward to climb).
    """
    from baselines.laplacian_options.fqi import fitted_q_iteration
    from baselines.laplacian_options.networks import state_network

    walk = learned.walk
    reward = learned.u_tp1[:, 1 : p.count + 1] - learned.u_t[:, 1 : p.count + 1]
    scale = reward.std(axis=0)
    flat = [i + 1 for i in np.flatnonzero(~(scale > 0.0))]
    if flat:
        raise ValueError(
            f"{method}: eigenfunction(s) {flat} constant along every observed step (no "
            "eigenpurpose reward)"
        )
    word = int(_child(seed, 3).generate_state(1)[0])
    q_network = state_network(space, p.count * num_actions, p.hidden_sizes, word, "q")
    losses = fitted_q_iteration(
        q_network, walk.observations, walk.actions, walk.next_observations,
        (reward / scale).astype(np.float32), p, np.random.default_rng(_child(seed, 4)),
    )  # fmt: skip
    return q_network, losses


def tabular_options(
    q_network: Any, heads: int, walk: Any, num_states: int, termination_tol: float
) -> tuple[Any, int]:
    """(Tabular options, how many states the walk never saw) from the Q network's heads.

    Greedy over Q (uniform over ties) where the walk went, terminating where no action has value
    above ``termination_tol``; in states the walk never saw the option terminates at once (nothing
    was learned there).
    """
    from baselines.laplacian_options.fqi import values
    from opt_suite.options import TabularOptionSet

    seen = np.zeros(num_states, dtype=bool)
    seen[np.asarray(walk.observations, dtype=np.int64)] = True
    seen[np.asarray(walk.next_observations, dtype=np.int64)] = True
    q_all = values(q_network, np.arange(num_states)).astype(np.float64)
    q_all = q_all.reshape(num_states, heads, -1)
    mus, betas = [], []
    for head in range(heads):
        q = q_all[:, head]
        best = q.max(axis=1)
        ties = q >= best[:, None] - 1e-6
        mus.append(ties / ties.sum(axis=1, keepdims=True))
        betas.append(((best <= termination_tol) | ~seen).astype(np.float64))
    names = tuple(f"laplace-{i}" for i in range(1, heads + 1))
    return TabularOptionSet(np.stack(mus), np.stack(betas), names), int((~seen).sum())


class LaplacianOptions(Method):
    """Eigenoptions of learned Laplacian eigenfunctions (ALLO + fitted Q-iteration)."""

    name: ClassVar[str] = "laplacian_options"
    description: ClassVar[str] = (
        "Laplacian options: eigenfunctions learned from a random walk (Gomez et al. 2024), "
        "one eigenoption each by fitted Q-iteration"
    )
    Params: ClassVar[type] = LaplacianOptionsParams
    requires: ClassVar[frozenset[str]] = frozenset({DISCRETE_ACTIONS})

    @classmethod
    def option_count(cls, params: Any) -> int:
        """``count`` options."""
        return int(params.count)

    @classmethod
    def discovery_budget(cls, params: Any) -> DiscoveryBudget:
        """``walk_frames`` env steps, no demonstrations."""
        return DiscoveryBudget(False, int(params.walk_frames), "walk_frames")

    @classmethod
    def discovery_steps(cls, params: Any) -> DiscoverySteps:
        """ALLO's ``steps`` plus fitted Q-iteration's ``fqi_iterations`` x ``fqi_steps``."""
        fqi = int(params.fqi_iterations) * int(params.fqi_steps)
        return DiscoverySteps(int(params.steps) + fqi, "steps")

    @classmethod
    def check_family(cls, params: Any, family: Any) -> list[tuple[str, str]]:
        """Observations must have a shape, and the networks must stay within the size bound."""
        from opt_suite.option_networks.trunk import MAX_PARAMETERS, frame_layers, network_parameters

        space = family.observation_space
        if space.shape is None:
            return [("", f"needs observations of a fixed shape; {family.name} has {space}")]
        n = getattr(space, "n", None)
        if n is not None and space.shape == ():
            size = int(n) * int(params.hidden_sizes[0]) + network_parameters(
                (int(params.hidden_sizes[0]),), (), params.hidden_sizes[1:], params.count + 1
            )
        else:
            shape = tuple(space.shape)
            layers = frame_layers(shape if len(shape) != 2 else (*shape, 1))
            size = network_parameters(shape, layers, params.hidden_sizes, params.count + 1)
        if size > MAX_PARAMETERS:
            return [
                ("hidden_sizes", f"the eigenfunction network would have {size} parameters on "
                 f"{family.name}; at most {MAX_PARAMETERS}"),
            ]  # fmt: skip
        return []

    def discover(self, context: DiscoveryContext) -> Discovery:
        """Walk, learn the eigenfunctions, one eigenoption each (deterministic given the seed)."""
        p = self.params
        family = context.family
        num_actions = discrete_actions(family, self.name)
        for key, message in self.check_family(p, family):
            raise ValueError(f"{self.name}: params.{key}: {message}")
        started = time.perf_counter()
        learned = learn_eigenfunctions(context, p, self.name)
        q_network, fqi_losses = eigenoption_values(
            learned, p, family.observation_space, num_actions, context.seed, self.name
        )
        walk = learned.walk
        names = tuple(f"laplace-{i}" for i in range(1, p.count + 1))
        info: dict[str, Any] = {
            "env_steps": len(walk),
            "env_frames": walk.frames,
            "walk_episodes": walk.episodes,
            "eigenvalues": [float(v) for v in learned.eigenvalues],
            "spread": [float(s) for s in learned.spread],
        }
        space = family.observation_space
        num_states = getattr(space, "n", None)
        if num_states is not None and space.shape == ():
            options, info["unvisited_states"] = tabular_options(
                q_network, p.count, walk, int(num_states), p.termination_tol
            )
        else:
            shape = observation_shape(family, self.name)
            options = self._networks(q_network, num_actions, shape, names)
        info["discovery_seconds"] = round(time.perf_counter() - started, 3)
        return Discovery(
            options,
            curves={
                "allo_loss": learned.loss,
                "eigenvalue": learned.eigenvalues,
                "fqi_loss": fqi_losses,
            },
            info=info,
        )

    def _networks(
        self, q_network: Any, num_actions: int, shape: tuple[int, ...], names: tuple[str, ...]
    ) -> Any:
        from baselines.laplacian_options.networks import option_model
        from opt_suite.options.network import NetworkOptionSet

        models = [
            option_model(
                q_network,
                head,
                len(names),
                num_actions,
                TEMPERATURE,
                self.params.termination_tol,
                name,
            )  # fmt: skip
            for head, name in enumerate(names)
        ]
        return NetworkOptionSet(models, num_actions, shape, names)
