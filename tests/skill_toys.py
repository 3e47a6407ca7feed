"""Synthetic demonstrations built from known sub-policies, for the segmentation baselines' tests.

The papers' grid-world setting (Kipf et al. 2019, Sec. 4; Jiang et al. 2022, Sec. 6) composes each
demonstration from a few sub-tasks in sequence. Here, on four rooms' 40x40 map (rooms of 18x18
open cells), each sub-policy is "move in direction d" (one primitive action repeated) for a random
length of ``min_length``..``max_length`` steps, with the direction changed at every sub-task; the
true boundaries are the steps where a new sub-policy starts. Moves are the model's intended
outcomes (no slip), so a demonstration is exactly its sub-policies.
"""

from __future__ import annotations

import functools

import numpy as np

from opt_suite import registry
from opt_suite.methods.base import DiscoveryContext, Trajectory


@functools.cache
def _family_and_tasks():
    family_cls = registry.load(registry.FAMILIES, "fourrooms")
    family = family_cls(family_cls.Params(layout="paper-40x40"))
    train, _ = family.make_tasks(family_cls.Variation(), (), count=2, train=1, test=1, seed=0)
    return family, tuple(train)


def _intended(model) -> np.ndarray:
    """int [S, A]: the cell an action's intended move reaches (the most likely outcome)."""
    best = np.argmax(model.prob, axis=-1)
    return np.take_along_axis(model.next_state, best[..., None], axis=-1)[..., 0]


def segmented_demonstrations(
    count: int,
    seed: int,
    segments: int = 3,
    min_length: int = 3,
    max_length: int = 6,
) -> tuple[DiscoveryContext, list[list[int]]]:
    """(a discovery context holding ``count`` synthetic demonstrations, their true boundaries).

    Args:
      count: demonstrations.
      seed: seeds the sub-task draws and the context's seed.
      segments: sub-tasks per demonstration.
      min_length, max_length: the range of a sub-task's length in steps.
    """
    family, train = _family_and_tasks()
    model = family.tabular_model(train[0])
    step = _intended(model)
    rng = np.random.default_rng(seed)
    free = np.flatnonzero(~model.terminal)
    demos, truth = [], []
    while len(demos) < count:
        state = int(rng.choice(free))
        states, actions, cuts = [state], [], []
        action = -1
        ok = True
        for i in range(segments):
            action = int(rng.choice([a for a in range(model.prob.shape[1]) if a != action]))
            if i:
                cuts.append(len(actions))
            for _ in range(int(rng.integers(min_length, max_length + 1))):
                nxt = int(step[state, action])
                if nxt == state or model.terminal[nxt]:
                    ok = False  # a wall or the goal: draw this demonstration again
                    break
                state = nxt
                states.append(state)
                actions.append(action)
            if not ok:
                break
        if not ok:
            continue
        demos.append(
            Trajectory(
                task_id=train[0].task_id,
                observations=np.array(states, np.int64),
                actions=np.array(actions, np.int64),
                rewards=np.zeros(len(actions)),
            )
        )
        truth.append(cuts)
    context = DiscoveryContext(
        family=family,
        train_tasks=train,
        demonstrations=tuple(demos),
        interaction_budget=0,
        seed=np.random.SeedSequence(seed),
    )
    return context, truth
