"""Covering options' graph rule: join the two ends of the Fiedler vector (Jinnai et al. 2019).

Jinnai, Park, Abel & Konidaris, "Discovering Options for Exploration by Minimizing Cover Time"
(ICML 2019), Algorithm 1. The expected cover time of a random walk on a connected graph G is bounded
by its algebraic connectivity lambda_2 (Broder & Karlin 1989):

    E[C(G)] <= n^2 ln n / lambda_2(G)              (Broder & Karlin 1989; Jinnai et al. 2019)

so an option that raises lambda_2 the most lowers the bound the most. Adding the edge between the
arg-min and the arg-max of the Fiedler vector (the eigenvector of lambda_2) is the first-order
greedy choice (Ghosh & Boyd 2006), and the algorithm repeats it: compute the Fiedler vector, add a
point option between its two extremes, add that edge to G, recompute.

lambda_2 and the Fiedler vector are those of the normalised Laplacian
L = I - D^-1/2 W D^-1/2 (``baselines.eigenoptions.graph``, the same one the 2017 eigenoptions use):
its spectral gap is the random walk's, which is what the cover-time bound is about. The Fiedler
vector *as a function on states* is f = D^-1/2 v, the eigenvector of the random walk's Laplacian
I - D^-1 W (same eigenvalue): L's own eigenvector v is f weighted by sqrt(degree), which moves its
extremes off the low-degree ends of a path (on a 5-vertex path v peaks at vertices 1 and 3, f at 0
and 4, the pair whose edge raises lambda_2 the most). Option edges
are weighted like any other edge (W[i, j] += 1), so a second option between already adjacent states
still changes the graph.

A disconnected graph has lambda_2 = 0 and a Fiedler vector that only labels components; its
"extremes" are an arbitrary pair in two components between which no option can be executed. That is
an error here, never an option.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from baselines.eigenoptions.graph import laplacian_eigenvectors, normalized_laplacian

__all__ = ["CoveringEdge", "DisconnectedGraph", "components", "covering_edges"]


class DisconnectedGraph(ValueError):
    """The state graph has more than one connected component: no Fiedler vector to climb."""


@dataclasses.dataclass(frozen=True)
class CoveringEdge:
    """One round of Algorithm 1: the option edge (source -> target) and the graph's lambda_2.

    Attributes:
      source: arg-min of the Fiedler vector (the option's initiation state).
      target: arg-max of the Fiedler vector (where it terminates).
      connectivity: lambda_2 of the graph *before* this edge was added.
    """

    source: int
    target: int
    connectivity: float


def components(weights: np.ndarray) -> np.ndarray:
    """The connected component (int [n]) of each vertex (labels 0, 1, ... by first vertex)."""
    import scipy.sparse
    import scipy.sparse.csgraph

    _, labels = scipy.sparse.csgraph.connected_components(
        scipy.sparse.csr_matrix(np.asarray(weights) > 0), directed=False
    )
    return labels


def covering_edges(weights: np.ndarray, rounds: int) -> tuple[list[CoveringEdge], float]:
    """``rounds`` rounds of Algorithm 1 on the undirected graph ``weights``.

    Args:
      weights: float [n, n], symmetric, >= 0, zero diagonal; a connected graph of n >= 2 vertices.
      rounds: how many edges to add.

    Returns:
      (one :class:`CoveringEdge` per round, lambda_2 after the last edge).

    Raises:
      DisconnectedGraph: more than one connected component (named with their sizes).
      ValueError: fewer than 2 vertices.
    """
    weights = np.array(weights, dtype=np.float64)
    if weights.shape[0] < 2:
        raise ValueError(f"covering options: a graph of {weights.shape[0]} state(s) has no cover")
    labels = components(weights)
    if labels.max() > 0:
        sizes = np.bincount(labels)
        raise DisconnectedGraph(
            f"the state graph has {len(sizes)} connected components (sizes "
            f"{', '.join(str(int(s)) for s in sorted(sizes, reverse=True)[:8])}"
            f"{', ...' if len(sizes) > 8 else ''}); covering options need a connected graph "
            "(lambda_2 = 0: the Fiedler vector only labels components)"
        )
    edges = []
    for _ in range(rounds):
        values, vectors = laplacian_eigenvectors(normalized_laplacian(weights), 2)
        fiedler = vectors[:, 1] / np.sqrt(weights.sum(axis=1))  # D^-1/2 v: see the docstring
        source, target = int(np.argmin(fiedler)), int(np.argmax(fiedler))
        edges.append(CoveringEdge(source, target, float(values[1])))
        weights[source, target] += 1.0
        weights[target, source] += 1.0
    values, _ = laplacian_eigenvectors(normalized_laplacian(weights), 2)
    return edges, float(values[1])
