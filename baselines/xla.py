"""When a baseline's training loop should be compiled by XLA: one rule for every baseline.

Imports no TensorFlow (the Laplacian options' module reads it before TensorFlow is loaded).
"""

from __future__ import annotations

__all__ = ["bucketed", "xla_pays"]


def xla_pays(frames: bool) -> bool:
    """Whether a training loop should be one XLA cluster: on feature inputs, not on frames.

    Why: XLA on the CPU fuses the small dense networks of feature inputs into one fast loop, but
    compiles convolutions into code far slower than TensorFlow's own kernels. Measured on
    MinAtar-shaped frames (12 demonstrations, 10x10x4, the same machine and load): LOVE's fit took
    124 s for 40 steps as an XLA cluster and 3.8 s as a TensorFlow graph, 33x; its 1,000 steps
    per seed in ``minatar-field`` ran over 16 minutes without finishing.
    """
    return not frames


def bucketed(size: int) -> int:
    """The padded length of a dimension of ``size`` fed to an XLA cluster: the next power of two.

    Why: XLA compiles a cluster once per input shape, and the demonstrations of each seed have
    another horizon and another number of distinct states. Compiling CompILE's fit took about 7 s
    of its 10 s per seed on four rooms (its 400 steps cost 0.5 s more than its 100), LOVE's about
    3 s of 5 s, so a gate of many seeds spent most of its time compiling. Padded to powers of two,
    the seeds of a family share a few shapes, and a worker compiles each once. The padding is
    masked (a longer batch, as when one demonstration is longer than the others), so the
    objective is the same; only the order of float sums over the padded axes can differ.
    """
    if size < 1:
        raise ValueError(f"a dimension to pad must have at least one entry, got {size}")
    return 1 << (size - 1).bit_length()
