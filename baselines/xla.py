"""When a baseline's training loop should be compiled by XLA: one rule for every baseline.

Imports no TensorFlow (the Laplacian options' module reads it before TensorFlow is loaded).
"""

from __future__ import annotations

__all__ = ["xla_pays"]


def xla_pays(frames: bool) -> bool:
    """Whether a training loop should be one XLA cluster: on feature inputs, not on frames.

    Why: XLA on the CPU fuses the small dense networks of feature inputs into one fast loop, but
    compiles convolutions into code far slower than TensorFlow's own kernels. Measured on
    MinAtar-shaped frames (12 demonstrations, 10x10x4, the same machine and load): LOVE's fit took
    124 s for 40 steps as an XLA cluster and 3.8 s as a TensorFlow graph, 33x; its 1,000 steps
    per seed in ``minatar-field`` ran over 16 minutes without finishing.
    """
    return not frames
