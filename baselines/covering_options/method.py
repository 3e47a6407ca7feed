"""Covering options (Jinnai, Park, Abel & Konidaris, ICML 2019) as a baseline method.

Read top to bottom, as the paper's Algorithm 1:

1. the state graph G of the train tasks: from the family's exact model (``graph: known``, the
   paper's setting), from the demonstrations' transitions (``observed``), or from a uniform random
   walk of ``walk_frames`` env steps (``random_walk``, the data of the paper's online setting);
   states the data never reach are not part of the graph;
2. repeat: the Fiedler vector of G's normalised Laplacian; a point option between its arg-min and
   arg-max; that edge added to G (``fiedler.py``);
3. each point option as a table: it may start only at its source (the initiation set {v_i}),
   follows a shortest path to its target and terminates there (beta = 1 at v_j, and where the
   target cannot be reached).

The paper's option is undirected in its analysis (the edge it adds joins two vertices of an
undirected graph); ``both_directions`` (default) turns each round's edge into an option each way,
so ``count`` options take ``ceil(count / 2)`` rounds.

Shortest paths follow each (state, action)'s most likely successor: the model's (``known``), or the
successor seen most often in the data (``observed``, ``random_walk``: no model used).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Literal

import numpy as np

from baselines.random_walk import MAX_WALK_FRAMES
from opt_suite.component import ProblemSize
from opt_suite.families.capabilities import DISCRETE_ACTIONS, EXACT_MODEL, INDEX_OBSERVATIONS
from opt_suite.methods.base import Discovery, DiscoveryContext, Method, discrete_actions
from opt_suite.methods.budget import DiscoveryBudget
from opt_suite.options import TabularOptionSet
from opt_suite.params import param

__all__ = ["CoveringOptions", "CoveringOptionsParams"]


@dataclasses.dataclass(frozen=True)
class CoveringOptionsParams:
    """How many covering options, from which graph."""

    count: int = param(
        8,
        doc="options in total (the suite's default, as eigenoptions'; the paper varies it)",
        ge=1,
        le=256,
    )
    graph: Literal["known", "observed", "random_walk"] = param(
        "known",
        doc="state graph from the exact model ('known': the paper's offline setting), the "
        "demonstrations' transitions ('observed') or a uniform random walk ('random_walk')",
    )
    both_directions: bool = param(
        True, doc="an option each way along every added edge (the paper's graph is undirected)"
    )
    walk_frames: int = param(
        10000,
        doc="env steps of the random walk (graph: random_walk), at most "
        "evaluation.interaction_budget",
        ge=1,
        le=MAX_WALK_FRAMES,
    )
    episode_steps: int = param(
        1000, doc="random-walk episode length before a reset (graph: random_walk)", ge=1, le=10**6
    )


class CoveringOptions(Method):
    """Point options between the extremes of the Fiedler vector, added one edge at a time."""

    name: ClassVar[str] = "covering_options"
    description: ClassVar[str] = (
        "covering options (Jinnai et al. 2019): point options that raise algebraic connectivity"
    )
    Params: ClassVar[type] = CoveringOptionsParams
    requires: ClassVar[frozenset[str]] = frozenset({DISCRETE_ACTIONS, INDEX_OBSERVATIONS})

    @classmethod
    def requirements(cls, params: Any) -> frozenset[str]:
        """The exact model only for ``graph: known``."""
        return cls.requires | ({EXACT_MODEL} if params.graph == "known" else set())

    @classmethod
    def option_count(cls, params: Any) -> int:
        """``count`` options."""
        return int(params.count)

    @classmethod
    def discovery_budget(cls, params: Any) -> DiscoveryBudget:
        """Demonstrations for ``observed``; ``walk_frames`` env steps for ``random_walk``."""
        walk = params.graph == "random_walk"
        return DiscoveryBudget(
            params.graph == "observed", int(params.walk_frames) if walk else 0, "walk_frames"
        )

    @classmethod
    def memory_estimate(cls, params: Any, size: ProblemSize) -> tuple[int, str] | None:
        """The dense weights and Laplacian: states x states float64, three of them (tabular)."""
        if size.num_states is None:
            return None
        n = size.num_states
        return 3 * 8 * n * n, "the dense graph and Laplacian: states x states"

    def discover(self, context: DiscoveryContext) -> Discovery:
        """Covering options of the train tasks' state graph."""
        from baselines.covering_options.fiedler import covering_edges

        p = self.params
        num_states = int(getattr(context.family.observation_space, "n", 0))
        num_actions = discrete_actions(context.family, self.name)
        successor, adjacency, walk = self._graph(context, num_states, num_actions)
        active = np.flatnonzero(adjacency.any(axis=1))  # states the graph reaches
        caveats = []
        if p.graph != "known":
            # Data are one-way where the walk ends (a goal is entered, never left): only states
            # that can reach each other along the seen moves can hold a point option's two ends.
            active, left_out = _largest_strongly_connected(successor, active)
            if left_out:
                caveats.append(
                    f"{left_out} visited state(s) cannot be reached back along the observed moves "
                    "(e.g. goals that end an episode) and are left out of the graph"
                )
        if active.size < 2:
            raise ValueError(
                f"{self.name} (graph: {p.graph}): no two states of the data reach each other "
                "along the observed moves (one-way demonstrations?); covering options need a "
                "graph that can be walked both ways"
            )
        rounds = -(-p.count // 2) if p.both_directions else p.count
        try:
            edges, final = covering_edges(adjacency[np.ix_(active, active)], rounds)
        except ValueError as error:
            raise ValueError(f"{self.name} (graph: {p.graph}): {error}") from None
        pairs = []
        for edge in edges:
            source, target = int(active[edge.source]), int(active[edge.target])
            pairs.append((source, target))
            if p.both_directions:
                pairs.append((target, source))
        pairs = pairs[: p.count]
        tables = [point_option(successor, source, target) for source, target in pairs]
        for (source, target), (_, _, _, reachable) in zip(pairs, tables, strict=True):
            if not reachable:
                raise ValueError(
                    f"{self.name} (graph: {p.graph}): no path from state {source} to state "
                    f"{target} along the {'model' if p.graph == 'known' else 'observed'} "
                    "transitions; the point option could never reach its target"
                )
        mu, beta, initiation = (np.stack([t[i] for t in tables]) for i in range(3))
        names = tuple(f"cover-{s}-to-{t}" for s, t in pairs)
        info: dict[str, Any] = {
            "graph_states": int(active.size),
            "graph_edges": int(np.triu(adjacency).sum()),
            "pairs": [[int(s), int(t)] for s, t in pairs],
            "algebraic_connectivity_final": final,
            "caveats": caveats,
        }
        if walk is not None:
            info.update(env_steps=len(walk), env_frames=walk.frames, walk_episodes=walk.episodes)
        return Discovery(
            TabularOptionSet(mu, beta, names, initiation),
            curves={"algebraic_connectivity": np.array([e.connectivity for e in edges] + [final])},
            info=info,
        )

    def _graph(
        self, context: DiscoveryContext, num_states: int, num_actions: int
    ) -> tuple[np.ndarray, np.ndarray, Any]:
        """(successor int [S, A], adjacency bool [S, S], the walk or None) of ``params.graph``."""
        from baselines.eigenoptions.graph import model_adjacency, transition_adjacency

        p = self.params
        if p.graph == "known":
            from baselines.eigenoptions.purpose import layout_dynamics

            models = context.tabular_models(self.name)
            dynamics = layout_dynamics(models)
            likeliest = np.argmax(dynamics.prob, axis=2)
            successor = np.take_along_axis(dynamics.next_state, likeliest[..., None], 2)[..., 0]
            return successor.astype(np.int64), model_adjacency(models), None
        walk = None
        if p.graph == "observed":
            if not context.demonstrations:
                raise ValueError(f"{self.name} (graph: observed): no demonstrations to read")
            steps = [
                (np.asarray(t.observations[:-1]), np.asarray(t.actions), t.observations[1:])
                for t in context.demonstrations
            ]
            before, actions, after = (np.concatenate([s[i] for s in steps]) for i in range(3))
        else:
            from baselines.random_walk import uniform_random_walk

            walk = uniform_random_walk(context, self.name, p.walk_frames, p.episode_steps)
            before, actions, after = walk.observations, walk.actions, walk.next_observations
        before, actions, after = (np.asarray(a, dtype=np.int64) for a in (before, actions, after))
        adjacency = transition_adjacency([(before, after)], num_states)
        return observed_successor(before, actions, after, num_states, num_actions), adjacency, walk


def _largest_strongly_connected(
    successor: np.ndarray, states: np.ndarray
) -> tuple[np.ndarray, int]:
    """(The largest strongly connected set of ``states`` along ``successor``, how many left)."""
    import scipy.sparse
    import scipy.sparse.csgraph

    num_states, num_actions = successor.shape
    rows = np.repeat(np.arange(num_states), num_actions)
    moves = scipy.sparse.csr_matrix(
        (np.ones(rows.size), (rows, successor.ravel())), shape=(num_states, num_states)
    )
    _, labels = scipy.sparse.csgraph.connected_components(moves, directed=True, connection="strong")
    sizes = np.bincount(labels[states], minlength=labels.max() + 1)
    kept = states[labels[states] == np.argmax(sizes)]
    return kept, int(states.size - kept.size)


def observed_successor(
    before: np.ndarray, actions: np.ndarray, after: np.ndarray, num_states: int, num_actions: int
) -> np.ndarray:
    """Successors int [S, A]: of (s, a) the one seen most often (ties: lowest); s if unseen."""
    counts: dict[tuple[int, int], dict[int, int]] = {}
    for s, a, n in zip(before.tolist(), actions.tolist(), after.tolist(), strict=True):
        seen = counts.setdefault((s, a), {})
        seen[n] = seen.get(n, 0) + 1
    successor = np.repeat(np.arange(num_states, dtype=np.int64)[:, None], num_actions, axis=1)
    for (s, a), seen in counts.items():
        successor[s, a] = min(seen, key=lambda n: (-seen[n], n))
    return successor


def point_option(
    successor: np.ndarray, source: int, target: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """(mu [S, A], beta [S], initiation [S], whether ``source`` reaches ``target``).

    mu is uniform over the actions whose successor is one step nearer ``target`` (shortest paths
    over the directed successor graph), uniform where no path exists or at the target; beta is 1
    at the target and wherever it cannot be reached; the option may start only at ``source``.
    """
    import scipy.sparse
    import scipy.sparse.csgraph

    num_states, num_actions = successor.shape
    rows = np.repeat(np.arange(num_states), num_actions)
    moves = scipy.sparse.csr_matrix(
        (np.ones(rows.size), (successor.ravel(), rows)), shape=(num_states, num_states)
    )  # reversed edges: distances *to* target are distances *from* it on the reversed graph
    distance = scipy.sparse.csgraph.shortest_path(
        moves, directed=True, unweighted=True, indices=target
    )
    closer = distance[successor] == distance[:, None] - 1.0
    moving = closer.any(axis=1)
    mu = np.where(moving[:, None], closer, True).astype(np.float64)
    mu /= mu.sum(axis=1, keepdims=True)
    beta = (~np.isfinite(distance) | (np.arange(num_states) == target)).astype(np.float64)
    initiation = np.zeros(num_states, dtype=bool)
    initiation[source] = True
    return mu, beta, initiation, bool(np.isfinite(distance[source]))
