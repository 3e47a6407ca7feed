"""Tabular option-critic (Bacon, Harb & Precup 2017) as a baseline method.

Option-critic learns options by interacting: a critic (intra-option Q-learning of Q_Omega and Q_U)
and two actors (the intra-option policy gradient for softmax policies pi_o, the termination gradient
for sigmoid terminations beta_o), trained together with a policy over options. Here it trains on the
train tasks for the spec's interaction budget and hands its learned (pi_o, beta_o) to the suite's
test-time learner as the option set (its own policy over options is discarded, like every method's).

Schedules: by default episodes cycle over the train tasks (task ``e mod T`` for episode e) until the
budget is spent. With ``episodes_per_task`` the tasks run in order, that many episodes each — the
original four-rooms experiment is two tasks of 1000 episodes: goal in the east hallway, then a goal
in the south-east room (``specs/option-critic-sutton.yaml``).

Where the numbers come from (the authors' ``jeanharb/option_critic``, ``fourrooms/``):

- ``lr_critic 0.5``, ``lr_intra 0.25``, ``lr_term 0.25``, ``gamma 0.99``, 4 options, 1000-step
  episodes, baseline on: the command in ``fourrooms/README.md`` that produced the paper's Fig. 2-3;
- ``temperature 0.01``: ``transfer.py``'s default, which that command does not override (the
  paper's text says 0.001); the policy over options is a softmax over Q_Omega with the same
  temperature, as in ``transfer.py`` (its epsilon-greedy policy is commented out, so ``--epsilon
  0.01`` has no effect; ``option_policy: epsilon-greedy`` gives the paper's epsilon-soft policy).

Deliberate differences from the authors' code (the paper's Algorithm 1 is followed instead):

- the intra-option gradient is taken at (s, a), just after the critic update, not one step later at
  (s', a') with the next action;
- the termination gradient updates the option that was executing in s' (the code updates the
  *newly chosen* option when the old one has just terminated), and termination is sampled after it;
- steps per episode count the env steps (the code records the 0-based index of the last step, one
  less); the mean option duration counts each option execution's primitive steps, including the
  execution cut by the episode's end (the code adds one to every duration after the first option and
  leaves out the last execution).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, ClassVar, Literal

import numpy as np

from opt_suite.families.base import TabularModel
from opt_suite.families.capabilities import DISCRETE_ACTIONS, EXACT_MODEL, INDEX_OBSERVATIONS
from opt_suite.methods.base import Discovery, DiscoveryContext, Method
from opt_suite.methods.budget import DiscoveryBudget
from opt_suite.options import TabularOptionSet
from opt_suite.params import param

__all__ = ["OptionCritic", "OptionCriticParams", "option_tables"]

_CHUNK_EPISODES = 4096


@dataclasses.dataclass(frozen=True)
class OptionCriticParams:
    """Tabular option-critic; defaults are the authors' four-rooms settings (module docstring)."""

    options: int = param(4, doc="number of options (authors: 4)", ge=1, le=1024)
    gamma: float = param(0.99, doc="discount (authors: 0.99)", gt=0, le=1)
    lr_critic: float = param(0.5, doc="step size of Q_Omega and Q_U (authors: 0.5)", gt=0, le=1)
    lr_intra: float = param(0.25, doc="intra-option policy gradient step (authors: 0.25)", gt=0)
    lr_term: float = param(0.25, doc="termination gradient step (authors: 0.25)", gt=0)
    temperature: float = param(
        0.01, doc="softmax temperature of pi_o and of the policy over options (code: 0.01)", gt=0
    )
    option_policy: Literal["softmax", "epsilon-greedy"] = param(
        "softmax", doc="policy over options: softmax of Q_Omega (code) or epsilon-greedy (paper)"
    )
    epsilon: float = param(
        0.01, doc="exploration of the epsilon-greedy policy over options", ge=0, le=1
    )
    baseline: bool = param(
        True, doc="subtract Q_Omega(s, o) from Q_U(s, o, a) in the intra-option gradient (authors)"
    )
    termination_reg: float = param(
        0.0, doc="xi, added to the advantage in the termination gradient (four rooms: 0)", ge=0
    )
    max_steps: int = param(1000, doc="episode cap in env steps (authors: 1000)", ge=1)
    episodes_per_task: int | None = param(
        None,
        doc="run the train tasks in order, this many episodes each (original: 1000); null: "
        "cycle over the tasks until the interaction budget is spent",
        ge=1,
    )
    random_starts: bool = param(
        False,
        doc="start each episode in a uniformly random non-goal state (original) instead of the "
        "task's start",
    )


def option_tables(theta: np.ndarray, vartheta: np.ndarray, temperature: float):
    """(mu [O, S, A], beta [O, S]): pi_o = softmax(theta[o, s] / T), beta_o = sigmoid(vartheta)."""
    logits = theta / temperature
    logits = logits - logits.max(axis=-1, keepdims=True)
    mu = np.exp(logits)
    mu /= mu.sum(axis=-1, keepdims=True)
    beta = np.exp(-np.logaddexp(0.0, -vartheta))
    return mu, beta


def _task_arrays(models: list[TabularModel]) -> dict[str, np.ndarray]:
    """The train tasks' model arrays stacked [T, ...], in ``loop.run_chunk``'s argument order."""
    shapes = {model.next_state.shape for model in models}
    if len(shapes) != 1:
        raise ValueError(f"option_critic: train task models differ in shape: {sorted(shapes)}")
    cumulative = np.cumsum([model.prob for model in models], axis=-1)
    num_states = models[0].num_states
    live_states = np.zeros((len(models), num_states), dtype=np.int64)
    live_count = np.zeros(len(models), dtype=np.int64)
    for t, model in enumerate(models):
        live = np.flatnonzero(~np.asarray(model.terminal, dtype=bool))
        live_states[t, : len(live)], live_count[t] = live, len(live)
    return {
        "next_state": np.ascontiguousarray([model.next_state for model in models], dtype=np.int32),
        "cumprob": np.ascontiguousarray(cumulative / cumulative[..., -1:]),
        "reward": np.ascontiguousarray([model.reward for model in models], dtype=np.float64),
        "terminal": np.ascontiguousarray([model.terminal for model in models], dtype=np.bool_),
        "start": np.array([model.start for model in models], dtype=np.int64),
        "live_states": live_states,
        "live_count": live_count,
    }


def loop_config(p: OptionCriticParams, per_task: int) -> np.ndarray:
    """The scalar settings of ``loop.run_chunk``, in its order."""
    return np.array(
        [
            p.gamma,
            p.lr_critic,
            p.lr_intra,
            p.lr_term,
            p.temperature,
            p.epsilon,
            p.termination_reg,
            float(p.option_policy == "softmax"),
            float(p.baseline),
            float(p.random_starts),
            float(p.max_steps),
            float(per_task),
        ]
    )


class OptionCritic(Method):
    """Options learned online by the option-critic architecture, tabular."""

    name: ClassVar[str] = "option_critic"
    description: ClassVar[str] = (
        "option-critic (Bacon et al. 2017), tabular: options learned by interacting"
    )
    Params: ClassVar[type] = OptionCriticParams
    requires: ClassVar[frozenset[str]] = frozenset(
        {EXACT_MODEL, DISCRETE_ACTIONS, INDEX_OBSERVATIONS}
    )
    #: Shown by ``opt-suite describe``: why there is no model-free variant here.
    model_needed_because: ClassVar[str] = (
        "its compiled loop (loop.py) samples the train tasks' transitions from the model's "
        "arrays; stepping the env instead, as smdp_q_learning does without a model, is not "
        "written yet"
    )

    @classmethod
    def discovery_budget(cls, params: Any) -> DiscoveryBudget:
        """Env steps up to ``evaluation.interaction_budget``, no demonstrations."""
        return DiscoveryBudget(False, None)

    @classmethod
    def option_count(cls, params: Any) -> int:
        """``options`` options."""
        return int(params.options)

    def discover(self, context: DiscoveryContext) -> Discovery:
        """Train on the train tasks within ``context.interaction_budget`` env steps."""
        from baselines.option_critic import loop  # compiles on first use (cached on disk)

        p = self.params
        models = context.tabular_models(self.name)
        arrays = _task_arrays(models)
        num_states, num_actions = models[0].num_states, models[0].num_actions
        if p.random_starts and np.any(arrays["live_count"] == 0):
            raise ValueError("option_critic: random_starts needs a non-goal state in every task")
        q_omega = np.zeros((num_states, p.options))
        q_u = np.zeros((num_states, p.options, num_actions))
        theta = np.zeros((p.options, num_states, num_actions))
        vartheta = np.zeros((p.options, num_states))
        per_task = p.episodes_per_task or 0
        episodes_end = len(models) * per_task if per_task else np.iinfo(np.int64).max
        config = loop_config(p, per_task)
        rng = np.random.default_rng(context.seed)
        buffer_size = max(1 << 18, 8 * loop.uniforms_per_episode(p.max_steps))
        out = [
            np.zeros(_CHUNK_EPISODES, np.int64),
            np.zeros(_CHUNK_EPISODES),
            np.zeros(_CHUNK_EPISODES),
        ]
        curves: list[list[np.ndarray]] = [[], [], []]
        episode, steps = 0, 0
        budget = int(context.interaction_budget)
        started = time.perf_counter()
        while episode < episodes_end and steps < budget:
            uniforms = rng.random(buffer_size)
            episode, steps, recorded = loop.run_chunk(
                *arrays.values(), config, q_omega, q_u, theta, vartheta, uniforms,
                episode, episodes_end, steps, budget, *out,
            )  # fmt: skip
            for curve, chunk in zip(curves, out, strict=True):
                curve.append(chunk[:recorded].copy())
        seconds = time.perf_counter() - started
        mu, beta = option_tables(theta, vartheta, p.temperature)
        steps_curve, return_curve, duration_curve = (np.concatenate(c) for c in curves)
        return Discovery(
            TabularOptionSet(mu, beta, tuple(f"oc-{i}" for i in range(p.options))),
            curves={
                "steps_per_episode": steps_curve.astype(np.float64),
                "return_per_episode": return_curve,
                "mean_option_duration": duration_curve,
            },
            info={
                "env_steps": int(steps),
                "episodes": int(len(steps_curve)),
                "stopped_by_budget": bool(episode < episodes_end),
                "compiled": bool(loop.COMPILED),
                "train_seconds": round(seconds, 3),
            },
        )
