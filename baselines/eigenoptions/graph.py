"""The state graph and its normalised Laplacian (Machado, Bellemare & Bowling 2017, Sec. 3).

Eigenoptions start from an undirected, unweighted graph over states: ``W[s, s'] = 1`` when one step
can take the agent between ``s`` and ``s'``. Its normalised Laplacian

    L = D^-1/2 (D - W) D^-1/2,   D = diag(sum_s' W[s, s'])

has eigenvectors ("proto-value functions", Mahadevan & Maggioni 2007) that vary slowly along the
graph for small eigenvalues; each one defines an eigenpurpose (see ``purpose.py``).

Two ways to get W (the ``adjacency`` switch of the method):

- ``known``: from the family's exact models, an edge wherever a transition has positive
  probability;
- ``observed``: from transitions seen in the train tasks (the demonstrations), when the model is
  not to be used; states never seen have no edges.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from opt_suite.families.base import TabularModel

__all__ = [
    "model_adjacency",
    "transition_adjacency",
    "normalized_laplacian",
    "laplacian_eigenvectors",
]


def model_adjacency(models: Sequence[TabularModel]) -> np.ndarray:
    """W, bool [S, S]: ``s`` and ``s'`` adjacent when some action moves one to the other in a model.

    Rows of terminal states are skipped (a task's goal row is made absorbing, which says nothing
    about the layout); the edges *into* a goal still connect it, since W is symmetrised — the graph
    is undirected as in Machado et al. (2017). Self-loops (bumping into a wall) are not edges.
    """
    num_states = models[0].num_states
    adjacency = np.zeros((num_states, num_states), dtype=bool)
    for model in models:
        live = ~np.asarray(model.terminal, dtype=bool)
        moves = (model.prob > 0.0) & live[:, None, None]
        source = np.broadcast_to(np.arange(num_states)[:, None, None], model.next_state.shape)
        adjacency[source[moves], model.next_state[moves]] = True
    return _undirected(adjacency)


def transition_adjacency(transitions: Iterable[tuple[np.ndarray, np.ndarray]], num_states: int):
    """W, bool [S, S]: ``s`` and ``s'`` adjacent when the step ``s -> s'`` was observed.

    Args:
      transitions: pairs of int arrays (states s_t, states s_{t+1}), e.g. a trajectory's
        ``observations[:-1]`` and ``observations[1:]``.
      num_states: S.

    Raises:
      ValueError: a state index outside [0, S).
    """
    adjacency = np.zeros((num_states, num_states), dtype=bool)
    for before, after in transitions:
        before, after = np.asarray(before, dtype=np.int64), np.asarray(after, dtype=np.int64)
        for name, states in (("s_t", before), ("s_t+1", after)):
            if states.size and (states.min() < 0 or states.max() >= num_states):
                raise ValueError(
                    f"transition_adjacency: {name} holds state {int(states.max())} or "
                    f"{int(states.min())}, expected indices in [0, {num_states})"
                )
        adjacency[before, after] = True
    return _undirected(adjacency)


def _undirected(adjacency: np.ndarray) -> np.ndarray:
    adjacency = adjacency | adjacency.T
    np.fill_diagonal(adjacency, False)
    return adjacency


def normalized_laplacian(adjacency: np.ndarray) -> np.ndarray:
    """L = D^-1/2 (D - W) D^-1/2, float [S, S] (Machado et al. 2017, Sec. 3; Chung 1997).

    A state without edges has degree 0, which D^-1/2 cannot take; as in the authors' code
    (``mcmachado/options``, ``main.py``) its degree is set to 1, so its row of L is the unit row
    (eigenvalue 1: it comes after every eigenvector of the connected part that we use).
    """
    weights = np.asarray(adjacency, dtype=np.float64)
    degree = weights.sum(axis=1)
    degree = np.where(degree > 0.0, degree, 1.0)
    inv_sqrt = 1.0 / np.sqrt(degree)
    laplacian = np.diag(degree) - weights
    return inv_sqrt[:, None] * laplacian * inv_sqrt[None, :]


def laplacian_eigenvectors(
    laplacian: np.ndarray, count: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` smallest eigenvalues, increasing, and their unit eigenvectors, signs fixed.

    L is symmetric, so a symmetric solver gives real eigenpairs (the authors' code used the general
    ``eig``, which may return complex round-off); only the smallest ``count`` are computed
    (``scipy.linalg.eigh`` with ``subset_by_index``: a 40x40 grid's full decomposition takes ~10x
    longer). An eigenvector's sign is arbitrary; we fix it so that its entry of largest magnitude
    (the first, on ties) is positive, which makes the result reproducible. Within a repeated
    eigenvalue any orthonormal basis is an answer; LAPACK's is deterministic for a given matrix.

    Args:
      laplacian: float [S, S], symmetric.
      count: how many eigenpairs (all S when None).

    Returns:
      (eigenvalues float [count], eigenvectors float [S, count], column i for eigenvalue i).
    """
    import scipy.linalg  # only discovery needs it; `opt-suite list` imports this module's package

    size = laplacian.shape[0]
    count = size if count is None else min(int(count), size)
    eigenvalues, eigenvectors = scipy.linalg.eigh(laplacian, subset_by_index=[0, count - 1])
    largest = np.argmax(np.abs(eigenvectors), axis=0)
    signs = np.sign(eigenvectors[largest, np.arange(eigenvectors.shape[1])])
    return eigenvalues, eigenvectors * np.where(signs == 0.0, 1.0, signs)[None, :]
