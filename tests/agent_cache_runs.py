"""One ``tf_agents`` run's fingerprint (returns and final agent state), in or out of process.

``python tests/agent_cache_runs.py KIND UNITS SEED`` prints the fingerprint of that run made in
a fresh process: what ``test_agent_cache`` compares the runs of one process with.
"""

from __future__ import annotations

import hashlib
import sys

import numpy as np

from opt_suite.agents.params import NetworkParams, PPOParams
from opt_suite.families.gymnasium.family import Gymnasium, Params
from opt_suite.families.tabular.chain import Chain
from opt_suite.learners.agent_learner import TFAgentsLearner
from opt_suite.learners.base import LearnerContext, LearnerRun
from opt_suite.options.network import NetworkOptionSet
from opt_suite.options.tabular import TabularOptionSet

#: Two observation kinds: a state index (Chain) and a vector of 4 floats (CartPole); and Chain
#: with two options whose initiation sets (drawn from the run's seed) mask the agent's choices.
KINDS = ("chain", "cartpole", "chain-masked")


def _family(kind: str):
    if kind.startswith("chain"):
        return Chain(Chain.Params(num_states=6))
    return Gymnasium(Params(id="CartPole-v1"))


def _masked_options(num_states: int, num_actions: int, seed: int) -> TabularOptionSet:
    """Options "first action" and "last action", each startable in a seed's half of the states."""
    mu = np.zeros((2, num_states, num_actions))
    mu[0, :, 0], mu[1, :, -1] = 1.0, 1.0
    initiation = np.zeros((2, num_states), dtype=bool)
    rng = np.random.default_rng(seed)
    for option in range(2):
        initiation[option, rng.permutation(num_states)[: num_states // 2]] = True
    return TabularOptionSet(mu, np.full((2, num_states), 0.5), ("first", "last"), initiation)


def run_fingerprint(kind: str, units: int, seed: int) -> str:
    """SHA-256 of one run's returns, steps, frames and its agent's final state (all variables)."""
    from opt_suite.agents import agent_cache

    family = _family(kind)
    _, [task] = family.make_tasks(family.Variation(), [], 2, 1, 1, 0)
    env = family.make_env(task)
    if kind == "chain-masked":
        options = _masked_options(int(env.observation_space.n), int(env.action_space.n), seed)
    else:
        options = NetworkOptionSet.empty(int(env.action_space.n), env.observation_space.shape)
    env.close()
    network = NetworkParams(fc_units=(units,))
    ppo = PPOParams(
        num_envs=2, steps_per_iteration=8, learning_rate=1e-3, epochs=2, network=network
    )
    learner = TFAgentsLearner(TFAgentsLearner.Params(ppo=ppo))
    runs = [LearnerRun(task, np.random.SeedSequence(seed))]
    [log] = learner.run(LearnerContext(family, runs, options, 6, 20))
    state = agent_cache.state(agent_cache.agents()[-1])  # the agent this run trained
    digest = hashlib.sha256()
    for array in (log.returns, log.steps, log.frames, *(state[k] for k in sorted(state))):
        found = np.ascontiguousarray(array)
        digest.update(str((found.dtype, found.shape)).encode())
        digest.update(found.tobytes())
    digest.update(" ".join(sorted(state)).encode())
    return digest.hexdigest()


if __name__ == "__main__":
    print(run_fingerprint(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
