"""Option networks compiled for acting: TensorFlow Lite interpreters (XNNPACK), one per option.

Acting with options evaluates the running options on a few frames every primitive tick — a few rows,
thousands of times per second. A TensorFlow function call costs about 0.4 ms here before any
arithmetic (its Python dispatch and graph executor), so on Atari the option calls cost more than the
emulator; an interpreter invocation costs about 0.04 ms for one frame of a two-layer conv net
(measured: ``benchmarks/bench_atari.py``). Acting never changes the options' weights, so each
network is converted once, as inference deployments do: its TFLite model is kept (per process,
weakly, with a digest of its weights) and a later run with the same network and weights — an
evaluation cell's zero-shot episodes after its run, ~0.2 CPU-s per option — builds its
interpreter from the kept model, the bytes a second conversion would give.

Same numbers as the keras networks up to float rounding (a few 1e-8 on μ and β): each interpreter
is checked against its network on probe frames when it is built, and a mismatch above 1e-5 is an
error, not a silent switch. TensorFlow 2.21 marks ``tf.lite.Interpreter`` deprecated (in favour of
the separate LiteRT package) but ships and runs it; without it, :func:`lite_probabilities` returns
``None`` with a warning and the caller keeps the TensorFlow path.
"""

from __future__ import annotations

import hashlib
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from opt_suite._tf import quiet_stderr, tensorflow

__all__ = ["lite_probabilities"]

#: Largest |μ or β| difference between an interpreter and its keras network on the probe frames.
TOLERANCE = 1e-5


#: Per option network, (its input shape and weights' digest, its TFLite model): see the docstring.
_KEPT_MODELS: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], bytes]] = (
    weakref.WeakKeyDictionary()
)


def _interpreter(network: Any, shape: tuple[int, ...]) -> tuple[Any, int, int, int]:
    """(interpreter, input index, μ output index, β output index) of one keras option network."""
    tf = tensorflow()
    with warnings.catch_warnings(), quiet_stderr():  # one "Created XNNPACK delegate" line each
        warnings.simplefilter("ignore", UserWarning)  # the deprecation notice, see the docstring
        interpreter = tf.lite.Interpreter(model_content=_lite_model(network, shape), num_threads=1)
        interpreter.allocate_tensors()
    [frames_in] = interpreter.get_input_details()
    runner = interpreter.get_signature_runner()
    outputs = runner.get_output_details()
    return interpreter, frames_in["index"], outputs["mu"]["index"], outputs["beta"]["index"]


def _lite_model(network: Any, shape: tuple[int, ...]) -> bytes:
    """The network's TFLite model: kept from an earlier conversion of the same weights, or made.

    The key holds every variable's name, dtype, shape and bytes: a network trained (or loaded
    with other weights) since its model was kept is converted again.
    """
    digest = hashlib.sha256()
    for variable in network.variables:
        value = np.asarray(variable)
        digest.update(f"{variable.name} {value.dtype} {value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    key = (shape, digest.hexdigest())
    kept = _KEPT_MODELS.get(network)
    if kept is not None and kept[0] == key:
        return kept[1]
    model = _converted(network, shape)
    _KEPT_MODELS[network] = (key, model)
    return model


def _converted(network: Any, shape: tuple[int, ...]) -> bytes:
    """The network's forward pass on frames [1, *shape] converted to a TFLite model."""
    tf = tensorflow()

    @tf.function(input_signature=[tf.TensorSpec([1, *shape], tf.float32)])
    def forward(frames):
        mu, beta = network(frames, training=False)
        return {"mu": mu, "beta": beta}

    # The converter first saves what it is given as a SavedModel. Given the keras network, that
    # save traces every layer's call again: ~0.3 of the ~0.5 CPU-s of a conversion, paid per
    # option and run. A module holding only the network's variables saves the same signature and
    # variables, and gives the same TFLite model, byte for byte (checked on vector and conv
    # options: ``benchmarks/ppo_run_hashes.py`` hashes runs that act through them).
    holder = tf.Module()
    holder.network_variables = list(network.variables)
    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [forward.get_concrete_function()], holder
    )
    with warnings.catch_warnings(), quiet_stderr():
        warnings.simplefilter("ignore", UserWarning)  # the deprecation notice, see the docstring
        return bytes(converter.convert())


def lite_probabilities(
    networks: Sequence[Any], observation_shape: Sequence[int], num_actions: int, seed: int = 0
) -> Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None:
    """The options' acting function on rows (each row by its own option), through interpreters.

    Args:
      networks: the m keras option networks (frames [n, *shape] float -> [μ [n, A], β [n, 1]]).
      observation_shape: one observation's shape.
      num_actions: A.
      seed: the probe frames' seed.

    Returns:
      ``(observations [k, *shape], which [k]) -> (μ [k, A], β [k])``, or ``None`` when this
      TensorFlow has no ``tf.lite`` interpreter.

    Raises:
      RuntimeError: an interpreter disagrees with its network on the probe frames.
    """
    tf = tensorflow()
    if getattr(getattr(tf, "lite", None), "Interpreter", None) is None:
        warnings.warn(
            "tf.lite.Interpreter is missing: options act through TensorFlow calls (slower)",
            stacklevel=2,
        )
        return None
    shape = tuple(int(d) for d in observation_shape)
    built = [_interpreter(network, shape) for network in networks]
    probes = np.random.default_rng(seed).integers(0, 256, (2, *shape)).astype(np.float32)
    probes[0] = 0.0
    for o, ((interpreter, frames_in, mu_out, beta_out), network) in enumerate(
        zip(built, networks, strict=True)
    ):
        want_mu, want_beta = (np.asarray(t) for t in network(probes, training=False))
        for r in range(len(probes)):
            interpreter.set_tensor(frames_in, probes[r : r + 1])
            interpreter.invoke()
            error = max(
                np.abs(interpreter.get_tensor(mu_out).reshape(-1) - want_mu[r]).max(),
                np.abs(interpreter.get_tensor(beta_out).reshape(-1) - want_beta[r]).max(),
            )
            if not error <= TOLERANCE:
                raise RuntimeError(
                    f"option {o}: the TFLite interpreter differs from its network by {error:.3g} "
                    f"(> {TOLERANCE}) on probe frame {r}"
                )

    def probabilities(observations: np.ndarray, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        frames = np.asarray(observations, np.float32)
        mu = np.empty((len(frames), num_actions), np.float64)
        beta = np.empty(len(frames), np.float64)
        for r, o in enumerate(np.asarray(which)):
            interpreter, frames_in, mu_out, beta_out = built[o]
            interpreter.set_tensor(frames_in, frames[r : r + 1])
            interpreter.invoke()
            mu[r] = interpreter.get_tensor(mu_out)[0]
            beta[r] = interpreter.get_tensor(beta_out).reshape(-1)[0]
        return mu, beta

    return probabilities
