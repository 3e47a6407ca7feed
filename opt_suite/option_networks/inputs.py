"""Which option networks read a family's observations, for a ``features`` setting (no TensorFlow).

``offline_options`` and ``random_options`` (which draws offline_options' initial networks) build
their networks on whatever a family offers, without requiring an exact model:

- ``model``: a family with an exact model and index observations (four rooms, chains): MLP options
  tabulated over every state of the model, grid cells as coordinates (``features.py``);
- ``index``: index observations without a model (a gymnasium env such as FrozenLake): the same MLP
  options tabulated over the ``Discrete`` space's ``n`` indices, each index scaled to [-1, 1] as
  its coordinate (``onehot``: a weight row per index);
- ``vector``: a rank-1 ``Box`` (CartPole): MLP options on the vector itself, kept as keras networks;
- ``frames``: images (MinAtar, a MiniGrid view, Atari): the convolutional options of ``conv.py``.

The default ``features: coords`` fits every kind (a grid cell's, an index's, a vector's own
coordinates; an image's pixels through the convolutional trunk); ``onehot``/``both`` need indices
and ``frames`` needs images. What does not fit is a (key, message) problem that ``validate``
reports at ``params.features``, before anything runs.
"""

from __future__ import annotations

from typing import Any, Literal

from opt_suite.families.capabilities import (
    EXACT_MODEL,
    IMAGE_OBSERVATIONS,
    INDEX_OBSERVATIONS,
    VECTOR_OBSERVATIONS,
    offered,
)

__all__ = ["InputKind", "index_count", "network_input", "readable"]

InputKind = Literal["model", "index", "vector", "frames"]


def network_input(features: str, family: Any) -> tuple[InputKind | None, str | None]:
    """(the networks' input kind, None), or (None, why ``features`` cannot read ``family``)."""
    has = offered(family)
    name = family.name
    if features == "frames":
        if IMAGE_OBSERVATIONS in has:
            return "frames", None
        fits = "'coords' or 'onehot' or 'both'" if INDEX_OBSERVATIONS in has else "'coords'"
        return None, (
            f"'frames' (convolutional options) needs a family with image observations; "
            f"{name} has none: use {fits}"
        )
    if INDEX_OBSERVATIONS in has:
        return ("model" if EXACT_MODEL in has else "index"), None
    if IMAGE_OBSERVATIONS in has:
        if features == "coords":  # the default: an image's pixels, through the conv trunk
            return "frames", None
        return None, (
            f"{features!r} needs index observations; {name} has images: use 'frames' or "
            "'coords' (both mean convolutional options on the pixels)"
        )
    if VECTOR_OBSERVATIONS in has:
        if features == "coords":
            return "vector", None
        return None, (
            f"{features!r} needs index observations (a weight row per state); {name} has "
            "vectors: use 'coords' (the vector itself)"
        )
    return None, (
        f"{name}'s observations {family.observation_space} are neither indices (Discrete), "
        "vectors (a rank-1 Box) nor images (a rank-2 or -3 Box): no option network reads them"
    )


def readable(family: Any) -> bool:
    """Whether some option network reads ``family``'s observations (indices, vectors, images)."""
    return bool({INDEX_OBSERVATIONS, VECTOR_OBSERVATIONS, IMAGE_OBSERVATIONS} & offered(family))


def index_count(family: Any) -> int:
    """n, the number of indices of ``family``'s ``Discrete`` observations (``index`` input)."""
    n = getattr(family.observation_space, "n", None)
    if n is None:
        raise ValueError(f"{family.name} has no index observations: {family.observation_space}")
    return int(n)
