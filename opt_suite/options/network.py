"""Options as keras networks: acting calls them on a batch of observations, one call per option.

Each option is one keras model from an observation batch [n, *observation_shape] to two heads, as
in the paper (Sec. 4.1: "a softmax output layer over the possible actions representing mu, and a
separate sigmoid layer representing beta"): ``mu`` [n, A] (softmax) and ``beta`` [n, 1] or [n]
(sigmoid). Any trunk works — dense for coordinates, convolutional for frames:
:func:`option_network` attaches the two heads to a trunk you give it.

The file holds, per option, the model's architecture (``model.to_json()``) and its weights, so a set
is rebuilt without the code that trained it (standard keras layers only; a custom layer needs its
class registered with ``tf.keras.utils.register_keras_serializable``). TensorFlow is imported when
a set is built or loaded, never when this module is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from opt_suite.options.base import OptionSet, PathOrFile

__all__ = ["NetworkOptionSet", "option_network", "MU_HEAD", "BETA_HEAD"]

MU_HEAD = "mu"
BETA_HEAD = "beta"


def _tf() -> Any:
    from opt_suite._tf import tensorflow

    return tensorflow()


class NetworkOptionSet(OptionSet):
    """m options, each a keras model observation -> (mu softmax [A], beta sigmoid).

    Args:
      networks: m keras models; each maps a float batch [n, *observation_shape] to ``[mu, beta]``
        with mu [n, A] and beta [n, 1] or [n].
      num_actions: A.
      observation_shape: the shape of one observation (the networks' input without the batch).
      names: m readable names (default ``option-0``, ...).
    """

    kind = "network"

    def __init__(
        self,
        networks: Sequence[Any],
        num_actions: int,
        observation_shape: Sequence[int],
        names: Sequence[str] = (),
    ) -> None:
        self._networks = tuple(networks)
        self._num_actions = int(num_actions)
        self._observation_shape = tuple(int(d) for d in observation_shape)
        names = tuple(names) or tuple(f"option-{i}" for i in range(len(self._networks)))
        if len(names) != len(self._networks):
            raise ValueError(
                f"NetworkOptionSet: {len(self._networks)} networks but {len(names)} names"
            )
        self._names = names

    @property
    def names(self) -> tuple[str, ...]:
        """The m readable names."""
        return self._names

    @property
    def num_actions(self) -> int:
        """A."""
        return self._num_actions

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """The shape of one observation."""
        return self._observation_shape

    @property
    def networks(self) -> tuple[Any, ...]:
        """The m keras models."""
        return self._networks

    @classmethod
    def empty(cls, num_actions: int, observation_shape: Sequence[int]) -> NetworkOptionSet:
        """No options (primitives only) for a family whose observations are arrays."""
        return cls((), num_actions, observation_shape)

    def probabilities(self, observations: Any) -> tuple[np.ndarray, np.ndarray]:
        """Probabilities mu [n, m, A], beta [n, m]: each network called once on the batch."""
        obs = np.asarray(observations)
        if obs.shape[1:] != self._observation_shape:
            raise ValueError(
                f"NetworkOptionSet: expected observations [n, *{self._observation_shape}], "
                f"got {obs.shape}"
            )
        n, m, A = obs.shape[0], len(self), self._num_actions
        mu = np.zeros((n, m, A), np.float32)
        beta = np.zeros((n, m), np.float32)
        if m == 0 or n == 0:
            return mu, beta
        batch = _tf().convert_to_tensor(obs.astype(np.float32))
        for o, network in enumerate(self._networks):
            out_mu, out_beta = network(batch, training=False)
            mu[:, o] = np.asarray(out_mu).reshape(n, A)
            beta[:, o] = np.asarray(out_beta).reshape(n)
        return mu, beta

    def non_finite(self) -> str | None:
        """The first option whose weights hold a NaN/inf."""
        for name, network in zip(self._names, self._networks, strict=True):
            if not all(np.all(np.isfinite(w)) for w in network.get_weights()):
                return f"weights of {name}"
        return None

    def save(self, path: PathOrFile) -> None:
        """Write each network's architecture (JSON) and weights to one ``.npz`` file."""
        arrays: dict[str, Any] = {
            "names": np.array(self._names, dtype=str),
            "num_actions": np.array(self._num_actions),
            "observation_shape": np.array(self._observation_shape, dtype=np.int64),
        }
        for o, network in enumerate(self._networks):
            arrays[f"config_{o}"] = np.array(network.to_json())
            for j, weight in enumerate(network.get_weights()):
                arrays[f"weights_{o}_{j}"] = weight
        self._savez(path, **arrays)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> NetworkOptionSet:
        """Rebuild every network from its JSON architecture and set its weights."""
        names = tuple(str(n) for n in arrays["names"])
        networks = []
        if names:
            keras = _tf().keras
            for o in range(len(names)):
                network = keras.models.model_from_json(str(arrays[f"config_{o}"]))
                count = sum(1 for key in arrays if key.startswith(f"weights_{o}_"))
                network.set_weights([arrays[f"weights_{o}_{j}"] for j in range(count)])
                networks.append(network)
        return cls(
            networks,
            int(arrays["num_actions"]),
            tuple(int(d) for d in arrays["observation_shape"]),
            names,
        )

    def __repr__(self) -> str:
        return (
            f"NetworkOptionSet(m={len(self)}, A={self._num_actions}, "
            f"observation_shape={self._observation_shape})"
        )


def option_network(
    observation_shape: Sequence[int],
    num_actions: int,
    seed: int,
    trunk: Callable[[Any], Any] | None = None,
    hidden_sizes: Sequence[int] = (32, 32),
    name: str = "option",
) -> Any:
    """A keras option network: ``trunk`` (default: flatten + ReLU dense layers) + mu and beta heads.

    Args:
      observation_shape: the shape of one observation.
      num_actions: A, the width of the softmax head ``mu``.
      seed: seeds every initializer of the default trunk and the heads (same seed, same network).
      trunk: a function from the keras input tensor to a feature tensor [n, d] (e.g. conv layers
        for frames); its layers should take seeded initializers for determinism.
      hidden_sizes: widths of the default trunk's dense layers (the paper's 2 x 32).
      name: the model's name.

    Returns:
      A functional keras model observation batch -> [mu [n, A] softmax, beta [n, 1] sigmoid].
    """
    keras = _tf().keras
    seeds = np.random.SeedSequence(seed).generate_state(len(hidden_sizes) + 2)

    def glorot(i: int) -> Any:
        return keras.initializers.GlorotUniform(seed=int(seeds[i]))

    inputs = keras.Input(shape=tuple(observation_shape), name="observation")
    if trunk is None:
        x = keras.layers.Flatten()(inputs)
        for i, width in enumerate(hidden_sizes):
            x = keras.layers.Dense(int(width), activation="relu", kernel_initializer=glorot(i))(x)
    else:
        x = trunk(inputs)
    k = len(hidden_sizes)
    mu = keras.layers.Dense(
        int(num_actions), activation="softmax", kernel_initializer=glorot(k), name=MU_HEAD
    )(x)
    beta = keras.layers.Dense(
        1, activation="sigmoid", kernel_initializer=glorot(k + 1), name=BETA_HEAD
    )(x)
    return keras.Model(inputs, [mu, beta], name=name)
