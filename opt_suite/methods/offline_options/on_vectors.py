"""``offline_options`` on vector observations (CartPole): Algorithm 1 without a model.

The same Algorithm 1 and Ĵ as on tables (``algorithm.py``), with the paper's MLP options (two
layers of 32) reading the observation vector itself as their dense input (``features: coords``).
As on frames (``on_frames.py``), every demonstrated observation is its own state: the options and
π are evaluated on the demonstrations' vectors, and each kept option is returned as a keras
network that acts on any vector (there is no table over every state of a continuous space).

The vectors enter as the env gives them, unscaled: the first layer's Glorot weights are drawn for
inputs of order 1, which CartPole's are; an env with far larger magnitudes would want a scaling
observation wrapper of its own.
"""

from __future__ import annotations

import time

from opt_suite.methods.base import Discovery, DiscoveryContext, discrete_actions
from opt_suite.methods.offline_options.algorithm import learn_options
from opt_suite.methods.offline_options.demos import vector_demo_batch
from opt_suite.methods.offline_options.params import Params
from opt_suite.option_networks.features import StateFeatures
from opt_suite.option_networks.networks import keras_vector_option_network
from opt_suite.options.network import NetworkOptionSet

__all__ = ["discover_on_vectors", "vector_option_set"]


def discover_on_vectors(context: DiscoveryContext, params: Params, method: str) -> Discovery:
    """Algorithm 1 on ``context.demonstrations`` (vectors [T+1, d]); a network option set."""
    start = time.perf_counter()
    actions = discrete_actions(context.family, method)
    demos, vectors = vector_demo_batch(context.demonstrations, actions)
    features = StateFeatures(len(vectors), use_index=False, coords=vectors)
    learned = learn_options(demos, features, actions, params, context.seed)
    options = vector_option_set(learned.weights, actions, int(vectors.shape[1]), "option")
    return learned.discovery(
        options, len(context.demonstrations), start, demonstrated_observations=int(len(vectors))
    )


def vector_option_set(weights, num_actions: int, dim: int, prefix: str) -> NetworkOptionSet:
    """MLP option weights on vectors of width ``dim`` as keras models named ``{prefix}-{i}``."""
    names = tuple(f"{prefix}-{i}" for i in range(len(weights)))
    pairs = zip(weights, names, strict=True)
    networks = [keras_vector_option_network(w, name) for w, name in pairs]
    return NetworkOptionSet(networks, num_actions, (dim,), names)
