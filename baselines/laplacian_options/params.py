"""The Laplacian options' parameters, each with the paper's value and where it comes from.

Gomez, Bowling & Machado (ICLR 2024), "Proper Laplacian Representation Learning", and the authors'
``tarod13/laplacian_dual_dynamics`` (``src/hyperparam/al.yaml``) set: d = 11 eigenfunctions, a
3 x 256 ReLU MLP, Adam at 1e-3, batches of 1024, 50 000 gradient steps, 200 000 random-walk
samples in episodes of 50 steps, the barrier coefficient starting at 1.0 and rising at rate 1.0,
duals at rate 1e-4 clipped to [-100, 100]. The suite's defaults are smaller (10 000 steps of
batches of 512, 2 x 64 units, Adam at 0.003), measured on Sutton's four rooms (104 states, a
20 000-step walk from the tasks' starts; 26 s on a loaded 2-core machine as TensorFlow graphs, a
few seconds since the steps are compiled by numba on index observations): eigenvalues 0.0056,
0.0075, 0.0129 for the exact 0.0057, 0.0068, 0.014 of I - P; |cos| 0.971, 0.941, 0.974 for
u_1..u_3 against the eigenvectors of the operator the walk samples (its own state weighting), and
0.73, 0.69, 0.98 against the uniformly weighted ones (a walk from fixed starts weights the states
unevenly, which turns the near-degenerate pair 0.0057 / 0.0068). Smaller budgets fail there:
3000 steps (at 1e-3 / 256 / 2 x 64, or 0.01 / 128 / 32 units) and even 20 000 steps at 0.01 / 128
/ 32 units give |cos| 0.01-0.54 (small eigengaps need large batches). Each departure from the
paper is said in its ``doc``.

The option part follows Machado, Bellemare & Bowling (2017), as ``baselines.eigenoptions`` does:
discount 0.9, terminate where no action has positive value. The eigenoption policy is learned by
fitted Q-iteration (Ernst et al. 2005) on the same random-walk transitions: model-free, offline,
and it needs no more env steps than the representation already spent.
"""

from __future__ import annotations

import dataclasses

from baselines.random_walk import MAX_WALK_FRAMES
from opt_suite.option_networks.trunk import MAX_LAYERS, MAX_UNITS
from opt_suite.params import param

__all__ = ["LaplacianOptionsParams"]


@dataclasses.dataclass(frozen=True)
class LaplacianOptionsParams:
    """How many eigenfunctions, learned from how long a walk, turned into options how."""

    count: int = param(
        4,
        doc="options: one per eigenfunction 2..count+1 (the first, constant one is learned but "
        "gives no option, as eigenoptions' skip_constant); the paper learns d = 11",
        ge=1,
        le=64,
    )
    walk_frames: int = param(
        20000,
        doc="env steps of the uniform random walk (paper: 200000), at most "
        "evaluation.interaction_budget",
        ge=100,
        le=MAX_WALK_FRAMES,
    )
    episode_steps: int = param(
        1000,
        doc="random-walk episode length before a reset (paper: 50, with uniformly random starts; "
        "the suite's tasks start in one place, so episodes must be long to spread out)",
        ge=1,
        le=10**6,
    )
    hidden_sizes: tuple[int, ...] = param(
        (64, 64),
        doc="ReLU layers of the eigenfunction and Q networks after the input (paper: 256 x 3); "
        "images get convolutions first (opt_suite.option_networks.conv.frame_layers)",
        ge=1,
        le=MAX_UNITS,
    )
    steps: int = param(
        10000, doc="gradient steps of the Laplacian objective (paper: 50000)", ge=1, le=10**6
    )
    batch_size: int = param(512, doc="transitions per step (paper: 1024)", ge=8, le=65536)
    learning_rate: float = param(0.003, doc="Adam's step size (paper: 0.001)", gt=0, le=1)
    barrier_initial: float = param(1.0, doc="barrier coefficient b at start (paper: 1.0)", ge=0)
    barrier_rate: float = param(
        1.0, doc="b += rate * mean(positive quadratic error) per step (paper: 1.0)", ge=0
    )
    dual_rate: float = param(
        1e-3,
        doc="dual ascent step on the orthonormality errors (paper: 1e-4 over 50000 steps; 1e-3 "
        "for the suite's shorter runs)",
        ge=0,
        le=1,
    )
    gamma: float = param(
        0.9, doc="discount of each eigenpurpose (Machado et al. 2017: 0.9)", gt=0, lt=1
    )
    fqi_iterations: int = param(
        60,
        doc="fitted Q-iteration sweeps (targets recomputed each); errors shrink as gamma^sweeps, "
        "so 60 sweeps leave 0.2% of the first sweep's (20 left 12%: options that never stop)",
        ge=1,
        le=1000,
    )
    fqi_steps: int = param(
        30, doc="gradient steps fitting Q to each sweep's targets", ge=1, le=100000
    )
    termination_tol: float = param(
        0.1,
        doc="terminate where max_a Q(s, a) <= this, in units of the eigenpurpose reward's standard "
        "deviation (Machado et al. 2017: no action has positive value). Fitted Q leaves the true "
        "value 0 of staying at a maximum as a small positive number (measured up to 0.07 on a 5x7 "
        "room, where the largest values are ~6): with 0 the option would stay there forever",
        ge=0,
    )
    min_spread: float = param(
        0.1,
        doc="an eigenfunction whose standard deviation over the walk's states is below this (it "
        "has unit second moment) has collapsed to a constant: an error",
        gt=0,
        lt=1,
    )

    def check(self) -> list[tuple[str, str]]:
        """At most MAX_LAYERS dense layers."""
        if len(self.hidden_sizes) > MAX_LAYERS:
            return [("hidden_sizes", f"at most {MAX_LAYERS} layers, got {len(self.hidden_sizes)}")]
        if not self.hidden_sizes:
            return [("hidden_sizes", "at least one layer")]
        return []
