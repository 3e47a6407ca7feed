"""What docs/compatibility.md calls *yes* runs: a sample of its combinations at tiny budgets.

Issue 39's case first: ``ppo_expert`` on FrozenLake (index observations) validated and then failed
every demonstrations cell. Each spec here is one *yes* of the page's tables, run end to end.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

from opt_suite import registry
from opt_suite.cli import main

DOCS = Path(__file__).resolve().parents[1] / "docs"

LAKE = "{id: FrozenLake-v1, kwargs: {is_slippery: false}, max_episode_steps: 100}"
TINY_PPO = "{num_envs: 2, steps_per_iteration: 32, epochs: 1, network: {fc_units: [16]}}"
TINY_OPTIONS = "{epochs: 2, steps_per_epoch: 2, max_options: 1, hidden_sizes: [8]}"

SAMPLE = {
    # (source, method, learner): the source's params
    ("ppo_expert", "bc_option", "smdp_q_learning"): f"{{frames: 256, ppo: {TINY_PPO}}}",
    ("q_learning", "offline_options", "intra_option_q_learning"): "{}",
}


def _page():
    spec = importlib.util.spec_from_file_location(
        "gen_compatibility", DOCS / "gen_compatibility.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize(("source", "method", "learner"), sorted(SAMPLE))
def test_a_yes_of_the_compatibility_page_runs_end_to_end(source, method, learner, tmp_path):
    page = _page()
    family = registry.load(registry.FAMILIES, "gymnasium")
    lake = family(family.Params(id="FrozenLake-v1"))
    method_cls = registry.load(registry.METHODS, method)
    learner_cls = registry.load(registry.LEARNERS, learner)
    source_cls = registry.load(registry.DEMONSTRATION_SOURCES, source)
    assert page.combination(method_cls, learner_cls, [source], lake) == "yes"
    assert page.unfit_at_defaults(source_cls, lake) is None
    params = f"{{offline_options: {TINY_OPTIONS}}}" if method == "bc_option" else TINY_OPTIONS
    path = tmp_path / "spec.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            name: lake-{source}
            family: {{name: gymnasium, params: {LAKE}}}
            tasks: {{count: 3, train: 2, test: 1, seed: 0}}
            demonstrations:
              source: {source}
              params: {SAMPLE[source, method, learner]}
              trajectories_per_task: 2
              max_steps: 100
            methods: [{{name: m, method: {method}, params: {params}}}]
            evaluation: {{learner: {learner}, episodes: 5, max_steps: 100, seeds: 1}}
            report: {{final_fraction: 0.2, baseline: null}}
            """
        )
    )
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--workers", "0", "--no-report"]) == 0
