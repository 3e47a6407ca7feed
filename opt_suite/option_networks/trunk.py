"""How a network's trunk is sized to its observation, and how big a network may be (no TensorFlow).

One rule for every deep piece — the PPO experts and learner (``opt_suite.agents``) and the
convolutional options (:mod:`opt_suite.option_networks.conv`) — so that specs and ``validate`` can
apply it before anything is built:

- **vectors** (a rank-1 ``Box``): no convolution; dense layers on the observation.
- **images** ([H, W] or [H, W, C]): convolutions with 'valid' padding, each mapping a side of n
  pixels to (n - kernel) // stride + 1. The *default* convolutions are Atari's trunk (Mnih et al.
  2013/2016: 8x8 stride 4, then 4x4 stride 2); it needs sides of at least 20 pixels. On a smaller
  image (a 10x10 MinAtar frame, a 7x7 MiniGrid view) the default becomes 3x3 stride-1
  convolutions with the same filters, as many layers as the image has room for (each takes 2
  pixels off a side); an image under 3 pixels on a side gets none (dense layers on its pixels).
  Convolutions written in a spec are used as written and must fit: :func:`shrink_problem` says
  which layer shrinks the input to nothing.

Bounds (checked by ``validate``, before any network is built; a larger network is a typo or a
different project): at most :data:`MAX_LAYERS` convolutions and :data:`MAX_LAYERS` dense layers,
:data:`MAX_FILTERS` filters and :data:`MAX_UNITS` units per layer, a kernel or stride of at most
:data:`MAX_KERNEL`, and :data:`MAX_PARAMETERS` parameters per network (the widths alone do not
bound it: a wide dense layer on a large flattened feature map is where the bytes go).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "CONV_LAYERS",
    "ConvLayer",
    "MAX_FILTERS",
    "MAX_KERNEL",
    "MAX_LAYERS",
    "MAX_PARAMETERS",
    "MAX_UNITS",
    "SMALL_KERNEL",
    "conv_output_sides",
    "fitted_layers",
    "frame_layers",
    "image_sides",
    "network_parameters",
    "shrink_problem",
    "small_image_layers",
]

#: (filters, kernel, stride) of one square convolution.
ConvLayer = tuple[int, int, int]

MAX_LAYERS = 8
MAX_FILTERS = 1024
MAX_UNITS = 4096
MAX_KERNEL = 256  # wider than any Atari screen (210x160)
#: 50 M float32 parameters (200 MB, x3 with Adam's moments). Atari's PPO network has 0.68 M.
MAX_PARAMETERS = 50_000_000
#: The small-image convolution: 3x3, stride 1 (the smallest kernel that sees a neighbourhood).
SMALL_KERNEL = 3


def image_sides(shape: Sequence[int]) -> tuple[int, int] | None:
    """(H, W) of an image observation shape ([H, W] or [H, W, C]), None for anything else."""
    return (int(shape[0]), int(shape[1])) if len(shape) in (2, 3) else None


def conv_output_sides(sides: tuple[int, int], layers: Sequence[ConvLayer]) -> list[tuple[int, int]]:
    """(H, W) after each layer, 'valid' padding; a side below 1 means the layer has no output."""
    height, width = sides
    out = []
    for _, kernel, stride in layers:
        height, width = (height - kernel) // stride + 1, (width - kernel) // stride + 1
        out.append((height, width))
        if min(height, width) < 1:
            break
    return out


def shrink_problem(sides: tuple[int, int], layers: Sequence[ConvLayer]) -> str | None:
    """Which layer shrinks an image of ``sides`` to nothing, or None when every layer has output.

    E.g. ``layer 1 (8x8 stride 4) shrinks a 10x10 input to 1x1, layer 2 (4x4 stride 2) to
    nothing``.
    """
    out = conv_output_sides(sides, layers)
    if not out or min(out[-1]) >= 1:
        return None
    parts = []
    for i, ((_, kernel, stride), (h, w)) in enumerate(zip(layers, out, strict=False), start=1):
        size = f"{h}x{w}" if min(h, w) >= 1 else "nothing"
        into = f" shrinks a {sides[0]}x{sides[1]} input" if i == 1 else ""
        parts.append(f"layer {i} ({kernel}x{kernel} stride {stride}){into} to {size}")
    return ", ".join(parts)


def small_image_layers(sides: tuple[int, int], filters: Sequence[int]) -> tuple[ConvLayer, ...]:
    """3x3 stride-1 layers with ``filters``, as many as fit ``sides`` (each takes 2 px a side)."""
    room = (min(sides) - 1) // (SMALL_KERNEL - 1)
    return tuple((int(f), SMALL_KERNEL, 1) for f in filters[: max(room, 0)])


def fitted_layers(
    shape: Sequence[int], layers: Sequence[ConvLayer], default: bool
) -> tuple[ConvLayer, ...]:
    """The convolutions a network on observations of ``shape`` uses (see the module docstring).

    Args:
      shape: one observation's shape.
      layers: the configured (filters, kernel, stride) per layer.
      default: whether ``layers`` are the default (Atari's) kernels and strides, which give way to
        :func:`small_image_layers` on images they do not fit.

    Raises:
      ValueError: configured (not default) layers that shrink the image to nothing.
    """
    sides = image_sides(shape)
    if sides is None:
        return ()
    problem = shrink_problem(sides, layers)
    if problem is None:
        return tuple((int(f), int(k), int(s)) for f, k, s in layers)
    if default:
        return small_image_layers(sides, [f for f, _, _ in layers])
    raise ValueError(problem)


def network_parameters(
    shape: Sequence[int],
    layers: Sequence[ConvLayer],
    dense: Sequence[int],
    outputs: int,
) -> int:
    """Weights + biases of convolutions ``layers`` (fitted), dense ``dense`` and ``outputs`` units.

    Args:
      shape: one observation's shape ([H, W, C], [H, W], a vector's [d], or [] for an index).
      layers: the convolutions the network uses (from :func:`fitted_layers`).
      dense: the dense layers' widths after the convolutions.
      outputs: the width of the output layer (the heads together).
    """
    sides = image_sides(shape)
    if sides is not None:
        channels = int(shape[2]) if len(shape) == 3 else 1
        count = 0
        for (filters, kernel, _), (h, w) in zip(
            layers, conv_output_sides(sides, layers), strict=True
        ):
            count += kernel * kernel * channels * filters + filters
            channels, sides = filters, (h, w)
        width = sides[0] * sides[1] * channels
    else:
        count, width = 0, 1
        for d in shape:
            width *= int(d)
    for units in (*dense, outputs):
        count += width * int(units) + int(units)
        width = int(units)
    return count


#: (filters, kernel, stride) of the options' two convolutional layers on frames (Mnih et al.
#: 2013's first two; ``opt_suite.option_networks.conv``).
CONV_LAYERS: tuple[ConvLayer, ...] = ((16, 8, 4), (32, 4, 2))


def frame_layers(frame_shape: Sequence[int]) -> tuple[ConvLayer, ...]:
    """The convolutions of an option on frames of ``frame_shape`` (``conv.py``'s docstring).

    :data:`CONV_LAYERS` if they fit, else 3x3 stride-1 layers with the same filters, as many as
    fit (:func:`fitted_layers`).
    """
    return fitted_layers(frame_shape, CONV_LAYERS, default=True)
