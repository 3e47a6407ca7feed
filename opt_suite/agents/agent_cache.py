"""One PPO agent per graph per worker process: the update is traced once, every run starts fresh.

Why: ``tf.function`` traces tf-agents' whole PPO update (every epoch unrolled, forward and
backward) the first time an agent trains — 1.9 CPU-s for CartPole's 64x64 MLP, against 6 ms per
later update (``benchmarks/bench_tf_agents_run.py``). A fresh agent per run pays that trace in
every run. Here a worker process keeps one agent per *graph key* — everything the traced update
depends on: the time-step and action specs (observation shape, dtype and bounds; the number of
choices) and the PPO settings (network, learning rate, clipping, epochs, ...) — and a later run
with the same key gets that agent back, its compiled update kept on it, its state reset.

The reset makes the agent's state exactly that of :func:`~opt_suite.agents.ppo.build_agent` with
the new seed, so a run's numbers do not depend on what ran before it in the process:

- the networks' weights are copied from networks built afresh by
  :func:`~opt_suite.agents.ppo.build_networks` with the run's seed — the layers in a fresh
  build's order, the global seed and its op seeds set as ``tf.random.set_seed`` sets them, each
  draw a fresh random kernel's (:func:`_first_draws`: without clearing TensorFlow's caches, which
  would drop the compiled update too) — so the initial weights are bit for bit a fresh agent's;
  building them eagerly traces nothing;
- every other variable — Adam's moments and step count, the train-step counter, the reward
  normaliser's running moments — gets back the value it had when the agent was built, which is
  the same for every seed (zeros and constants; a test compares the whole state with a fresh
  build's).

The traced update draws no random numbers (its graph holds no random op), so reusing it replays no
random stream.

An agent with an action mask (options with initiation sets, ``opt_suite.learners.initiation_mask``)
is cached the same way when its mask is data to the graph (a :class:`SharedMask`: a variable table,
or a NumPy function looked up when the op runs): the mask's ``kind`` (its table's shape, or the
observation shape and width) is part of the graph key, and a later run's mask is *loaded* into the
mask the cached agent's graph calls (the first run's, which the cache then owns). A mask of
another kind gets its own agent; a plain function (no ``kind``) is part of the graph it is traced
into, so such an agent is built afresh every time and not kept.

The agents of a process are shared: a caller keeps the agent only until its next
:func:`fresh_agent` call, and copies out what must outlive that (``detached_actor``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, Protocol, runtime_checkable

import numpy as np

from opt_suite._tf import tensorflow
from opt_suite.agents import ppo
from opt_suite.agents.params import PPOParams

tf = tensorflow()

from tensorflow.python.eager import context  # noqa: E402
from tensorflow.python.ops import gen_random_ops, gen_stateless_random_ops_v2  # noqa: E402
from tf_agents.specs import tensor_spec  # noqa: E402

__all__ = [
    "MAX_AGENTS",
    "SharedMask",
    "agents",
    "clear",
    "detached_actor",
    "fresh_agent",
    "graph_key",
    "state",
]

#: Agents kept per process (least recently used dropped first): a worker meets one or two
#: graphs per study (one per observation kind and option count), and a conv agent with Adam's
#: moments holds tens of MB.
MAX_AGENTS = 4


@runtime_checkable
class SharedMask(Protocol):
    """An action mask whose values a compiled graph reads when it runs, not when it is traced.

    ``opt_suite.learners.initiation_mask.ActionMask`` is one. Called on observations (a tensor) it
    gives bool [..., actions]; ``kind`` is everything a graph calling it depends on; ``load``
    makes it another mask of the same kind in place.
    """

    @property
    def kind(self) -> tuple[Any, ...]: ...  # noqa: D102

    def load(self, other: Any) -> None: ...  # noqa: D102

    def __call__(self, observations: Any) -> Any: ...  # noqa: D102


@dataclasses.dataclass(frozen=True)
class GraphKey:
    """Everything the traced PPO update depends on, besides the variables' values.

    ``mask``: the action mask's ``kind`` (:class:`SharedMask`), None without a mask.
    """

    specs: tuple[tuple[Any, ...], ...]
    params: PPOParams
    mask: tuple[Any, ...] | None = None


@dataclasses.dataclass(frozen=True)
class _Cached:
    """A built agent, which of its variables are the networks', and the others' initial values."""

    agent: Any
    network_variables: tuple[Any, ...]
    other_variables: tuple[Any, ...]
    other_initial: tuple[np.ndarray, ...]
    mask: SharedMask | None = None


_AGENTS: OrderedDict[GraphKey, _Cached] = OrderedDict()


def graph_key(
    time_step_spec: Any, action_spec: Any, params: PPOParams, mask: SharedMask | None = None
) -> GraphKey:
    """The key of the agent :func:`~opt_suite.agents.ppo.build_agent` makes from these."""
    specs = tf.nest.flatten(
        (tensor_spec.from_spec(time_step_spec), tensor_spec.from_spec(action_spec))
    )
    kind = None if mask is None else tuple(mask.kind)
    return GraphKey(tuple(_spec_key(s) for s in specs), params, kind)


def _spec_key(spec: Any) -> tuple[Any, ...]:
    """A spec as plain values: type, name, shape, dtype and (bounded specs) its bounds' bytes."""
    bounds: tuple[Any, ...] = ()
    if hasattr(spec, "minimum"):
        low, high = np.asarray(spec.minimum), np.asarray(spec.maximum)
        bounds = (low.shape, low.tobytes(), high.shape, high.tobytes())
    return (type(spec).__name__, spec.name, tuple(spec.shape.as_list()), spec.dtype.name, *bounds)


def fresh_agent(
    time_step_spec: Any,
    action_spec: Any,
    params: PPOParams,
    seed: int,
    action_mask: Callable[[Any], Any] | None = None,
) -> Any:
    """An agent in exactly the state ``ppo.build_agent`` with these arguments gives.

    This process's agent for the same :func:`graph_key` (and its compiled update) when there is
    one, reset for ``seed`` and given ``action_mask`` (see the module docstring); else a new one,
    kept for the next run. A :class:`SharedMask` is owned by the cache from then on (a later
    run's mask is loaded into it); with any other ``action_mask`` always a new agent, not kept.
    """
    if action_mask is not None and not isinstance(action_mask, SharedMask):
        return ppo.build_agent(time_step_spec, action_spec, params, seed, action_mask)
    key = graph_key(time_step_spec, action_spec, params, action_mask)
    cached = _AGENTS.get(key)
    if cached is None:
        agent = ppo.build_agent(time_step_spec, action_spec, params, seed, action_mask)
        _AGENTS[key] = _remember(agent, action_mask)
        while len(_AGENTS) > MAX_AGENTS:
            _AGENTS.popitem(last=False)
        return agent
    _AGENTS.move_to_end(key)
    _reset(cached, params, seed)
    if cached.mask is not None and action_mask is not None:
        cached.mask.load(action_mask)  # the graph calls the first run's mask: make it this run's
    return cached.agent


def _networks(agent: Any) -> tuple[Any, Any]:
    return agent.actor_net, agent._value_net


def _network_variables(actor: Any, value: Any) -> tuple[Any, ...]:
    """Both networks' variables in a fixed order, once each (a shared trunk is in both)."""
    unique = {id(v): v for v in [*actor.variables, *value.variables]}
    return tuple(unique.values())


def _remember(agent: Any, mask: SharedMask | None = None) -> _Cached:
    """The cache entry of a just-built, never-trained agent (``mask``: the one its graph calls)."""
    networks = _network_variables(*_networks(agent))
    ids = {id(v) for v in networks}
    found = {id(v): v for v in [*agent.variables, *agent._optimizer.variables]}
    others = tuple(v for i, v in found.items() if i not in ids)
    return _Cached(agent, networks, others, tuple(v.numpy() for v in others), mask)


def _reset(cached: _Cached, params: PPOParams, seed: int) -> None:
    """Give ``cached.agent`` the state a fresh build with ``seed`` has (module docstring)."""
    agent = cached.agent
    tf.config.experimental.enable_op_determinism()  # as build_agent (already on: it built this)
    spec, action = agent.time_step_spec.observation, agent.action_spec
    try:
        with _first_draws(seed):
            actor, value = ppo.build_networks(spec, action, params.network, seed, set_seed=False)
    except _UnexpectedRandomOp:  # exact, at the price of the update's instantiation
        actor, value = ppo.build_networks(spec, action, params.network, seed)
    fresh = _network_variables(actor, value)
    if [v.shape for v in fresh] != [v.shape for v in cached.network_variables]:
        raise RuntimeError("agent cache: rebuilt networks do not match the cached agent's")
    for target, source in zip(cached.network_variables, fresh, strict=True):
        target.assign(source)
    for target, initial in zip(cached.other_variables, cached.other_initial, strict=True):
        target.assign(initial)


class _UnexpectedRandomOp(RuntimeError):
    """A random op :func:`_first_draws` cannot give a fresh kernel's draw of."""


@contextlib.contextmanager
def _first_draws(seed: int) -> Iterator[None]:
    """TensorFlow's global seed set to ``seed`` as ``tf.random.set_seed`` does, keeping its caches.

    Why: ``tf.random.set_seed`` also clears the eager kernel cache — so that a stateful random op
    run again with the same seeds starts its stream afresh instead of continuing it — and with it
    every compiled function's instantiation: the cached agent's next update would pay ~0.7 CPU-s
    of graph optimisation again (``benchmarks/bench_tf_agents_run.py``). Here the global seed and
    its stream of op seeds are set as ``set_seed`` sets them (``context._seed``, ``_rng``), and
    the stateful draws a build makes (the initialisers' ``RandomUniform``, ``TruncatedNormal``,
    ``RandomStandardNormal``; ``RandomUniformInt`` for the sample frame ``create_variables``
    feeds the networks) are made by their stateless Philox twins with the key and counter a
    fresh kernel of those seeds starts from (key = seed, counter = (0, seed2)): the same numbers,
    bit for bit (a test compares a reset agent with a fresh build), whatever ran before. Any other
    stateful random op raises :class:`_UnexpectedRandomOp` (the caller then pays for the exact
    ``set_seed``).
    """
    ctx = context.context()
    ctx._seed, ctx._rng = seed, random.Random(seed)

    def twin(stateless: Any) -> Callable[..., Any]:
        def draw(shape: Any, dtype: Any, seed: int = 0, seed2: int = 0, name: Any = None) -> Any:
            if seed == 0 and seed2 == 0:  # the stateful op would draw its seeds at random
                raise _UnexpectedRandomOp("unseeded random op")
            key = tf.constant([seed], tf.uint64)
            counter = tf.constant([0, seed2], tf.uint64)
            return stateless(shape, key=key, counter=counter, alg=_PHILOX, dtype=dtype, name=name)

        return draw

    def integers(shape: Any, minval: Any, maxval: Any, seed: int = 0, seed2: int = 0, name=None):
        if seed == 0 and seed2 == 0:
            raise _UnexpectedRandomOp("unseeded random op")
        key = tf.constant([seed], tf.uint64)
        counter = tf.constant([0, seed2], tf.uint64)
        return gen_stateless_random_ops_v2.stateless_random_uniform_int_v2(
            shape, key=key, counter=counter, alg=_PHILOX, minval=minval, maxval=maxval, name=name
        )

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise _UnexpectedRandomOp("a random op other than uniform, normal or truncated normal")

    replaced = {
        "random_uniform": twin(gen_stateless_random_ops_v2.stateless_random_uniform_v2),
        "truncated_normal": twin(gen_stateless_random_ops_v2.stateless_truncated_normal_v2),
        "random_standard_normal": twin(gen_stateless_random_ops_v2.stateless_random_normal_v2),
        "random_uniform_int": integers,  # create_variables' sample input (uint8 frames)
        **{name: refuse for name in _OTHER_STATEFUL},
    }
    saved = {name: getattr(gen_random_ops, name) for name in replaced}
    for name, function in replaced.items():
        setattr(gen_random_ops, name, function)
    try:
        yield
    finally:
        for name, function in saved.items():
            setattr(gen_random_ops, name, function)


#: ``tf.random.Algorithm.PHILOX``: the generator of TensorFlow's stateful random ops.
_PHILOX = 1
#: Stateful random ops besides the three the initialisers use (refused by ``_first_draws``).
_OTHER_STATEFUL = (
    "random_gamma",
    "random_poisson_v2",
    "random_shuffle",
    "multinomial",
    "parameterized_truncated_normal",
)


def detached_actor(agent: Any, params: PPOParams, seed: int) -> Any:
    """A copy of ``agent``'s actor network with its current weights, owned by the caller.

    For what outlives the run (an expert's policy): the cached agent's own actor is reset by the
    next run in the process. Built by ``ppo.build_networks`` (``params`` and ``seed``: the
    agent's), so a shared trunk is copied too, not shared with the cached agent.
    """
    spec, action = agent.time_step_spec.observation, agent.action_spec
    # its initial draws are overwritten: no need to set the seed (and clear TF's caches)
    actor, _ = ppo.build_networks(spec, action, params.network, seed, set_seed=False)
    actor.set_weights(agent.actor_net.get_weights())
    return actor


def state(agent: Any) -> dict[str, np.ndarray]:
    """The values of all of ``agent``'s variables (networks, optimiser, counters), by role.

    Keyed by position, not name: ``agent/i`` is the i-th of ``agent.variables`` (an order fixed
    by the agent's structure), ``optimizer/m/i`` Adam's slot of that variable, other optimiser
    variables by name. Keras numbers its layers per process (``dense_7``), so names differ
    between two agents of one graph built at different points of a process; positions do not.
    """
    variables = list(agent.variables)
    position = {v.name: i for i, v in enumerate(variables)}
    found = {f"agent/{i}": v.numpy() for i, v in enumerate(variables)}
    for v in agent._optimizer.variables:
        parts = v.name.split("/", 2)  # a slot is named "Adam/m/<its variable's name>"
        if len(parts) == 3 and parts[2] in position:
            found[f"optimizer/{parts[1]}/{position[parts[2]]}"] = v.numpy()
        else:
            found[f"optimizer/{v.name}"] = v.numpy()
    return found


def agents() -> list[Any]:
    """The agents this process keeps, the most recently handed out last (tests, diagnostics)."""
    return [cached.agent for cached in _AGENTS.values()]


def clear() -> None:
    """Forget this process's agents (the next :func:`fresh_agent` builds and traces again)."""
    _AGENTS.clear()
