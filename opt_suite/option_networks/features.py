"""What the option networks and the policy over options see of a tabular state.

The paper (Sec. 4.1) gives each option "a two-layer neural network with 32 neurons in each
layer" but not its input. For a grid the natural inputs are:

- ``onehot``: the state's index. The first layer is then a lookup table (we gather a row of its
  weights instead of multiplying by a one-hot vector), so each state has its own free parameters and
  nothing is shared between neighbouring cells: the network can fit the demonstrations exactly but
  says nothing useful about states the demonstrations never visit.
- ``coords``: the cell's (row, column), scaled to [-1, 1]. Two numbers: the network must express μ
  and β as smooth functions of position, which generalises to unvisited cells ("go north in the
  bottom rooms") but struggles to carve walls and hallways sharply.
- ``both``: the sum of the two first-layer contributions, i.e. the concatenated input.

Families without a grid (``TabularModel.cells is None``, e.g. a chain) use the state index scaled to
[-1, 1] as their single coordinate, and so do families with index observations but no exact model
(a gymnasium env such as FrozenLake: the index range is the ``Discrete`` space's ``n``,
:func:`index_features`). On a vector observation (CartPole) ``coords`` is the vector as the env
gives it (see ``offline_options/on_vectors.py``), and on an image ``coords``, the default, means
its pixels through the convolutional trunk (``frames``): the default fits every observation kind.

Measured choice: **coords** (the default). ``benchmarks/offline_options_choices.py`` learns options
from one expert demonstration on each of 6 train tasks, then runs the benchmark's learner (SMDP
Q-learning, default settings) on 24 held-out tasks x 2 learner seeds; mean ± s.e. over discovery
seeds (3 on 10x15, 2 on 40x40) of the primitive steps in the first K episodes (lower is better),
with ``likelihood: log_prob_per_step`` and the other defaults:

=====================================  =========  ===============  ===============  ==============
setting (K)                            primitives onehot           coords           both
=====================================  =========  ===============  ===============  ==============
10x15, goals in the SE room (K=20)      5041       1400 ± 323       966 ± 16         1237 ± 233
10x15, goals anywhere (K=20)            5753       6973 ± 109       6796 ± 33        7456 ± 471
paper-40x40, goals anywhere (K=50)      45128      45742 ± 407      44622 ± 396      46120 ± 321
=====================================  =========  ===============  ===============  ==============

With goals anywhere, no choice of input makes the options pay off on 10x15 (its demonstrations are
3-21 steps long), and on 40x40 they are at best level with primitives; with related goals they cut
the early steps 3-5x. Coordinates are best or tied for best everywhere: with one-hot input the
options are exact on the demonstrated cells and untrained (random) elsewhere, which held-out tasks
mostly visit; with both, the per-cell part lets an option memorise the demonstrations instead of
learning a navigation pattern. Reproduce with (one line per setting)::

    .venv/bin/python benchmarks/offline_options_choices.py --layout 10x15 --goal-region south-east \
        --first-k 20 --vary features=onehot features=coords features=both
    .venv/bin/python benchmarks/offline_options_choices.py --layout 10x15 --first-k 20
    .venv/bin/python benchmarks/offline_options_choices.py --layout paper-40x40 --episodes 200 \
        --first-k 50 --discovery-seeds 2
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np

from opt_suite.families.base import TabularModel

__all__ = ["FeatureKind", "StateFeatures", "index_features", "state_features"]

FeatureKind = Literal["onehot", "coords", "both"]


@dataclasses.dataclass(frozen=True, eq=False)
class StateFeatures:
    """The network input of every state of a tabular model.

    Attributes:
      num_states: S.
      use_index: whether the first layer has a per-state weight row (the one-hot part).
      coords: float32 [S, d] dense features, or None when the input is the one-hot index alone.
    """

    num_states: int
    use_index: bool
    coords: np.ndarray | None

    @property
    def coord_dim(self) -> int:
        """d, the width of the dense part (0 without one)."""
        return 0 if self.coords is None else int(self.coords.shape[1])


def grid_coordinates(model: TabularModel) -> np.ndarray:
    """float32 [S, d]: each state's (row, col) scaled to [-1, 1], or its scaled index off grids."""
    if model.cells is not None:
        cells = np.asarray(model.cells, dtype=np.float64)
        extent = np.maximum(cells.max(axis=0) - cells.min(axis=0), 1.0)
        scaled = 2.0 * (cells - cells.min(axis=0)) / extent - 1.0
        return scaled.astype(np.float32)
    return index_coordinates(model.num_states)


def index_coordinates(num_states: int) -> np.ndarray:
    """float32 [S, 1]: each state index scaled to [-1, 1] (the coordinate of a state off grids)."""
    index = np.arange(num_states, dtype=np.float64)[:, None]
    return (2.0 * index / max(num_states - 1, 1) - 1.0).astype(np.float32)


def state_features(model: TabularModel, kind: FeatureKind | Literal["frames"]) -> StateFeatures:
    """The features of every state of ``model`` (all tasks of a family share the state space)."""
    if kind == "frames":
        raise ValueError(
            "features: 'frames' (convolutional options) needs image observations; this family "
            "has state indices: use 'onehot', 'coords' or 'both'"
        )
    _check_kind(kind)
    coords = None if kind == "onehot" else grid_coordinates(model)
    return StateFeatures(model.num_states, use_index=kind != "coords", coords=coords)


def index_features(num_states: int, kind: str) -> StateFeatures:
    """The features of every index 0..S-1 of a ``Discrete(S)`` observation, without a model.

    As :func:`state_features` on a model without cells: the index scaled to [-1, 1] (``coords``),
    a per-index weight row (``onehot``), or both.
    """
    _check_kind(kind)
    coords = None if kind == "onehot" else index_coordinates(num_states)
    return StateFeatures(num_states, use_index=kind != "coords", coords=coords)


def _check_kind(kind: str) -> None:
    """Raise ValueError for anything but a state input of :data:`FeatureKind`."""
    if kind not in ("onehot", "coords", "both"):
        raise ValueError(f"features: expected 'onehot', 'coords' or 'both', got {kind!r}")
