"""Proof by injected bugs: the results gate must turn red when learning breaks (issue 36, item 3).

Usage (from the repository root, with the package's venv)::

    nice python ci/mutations.py [--only NAME ...] [--workers N] [--out docs/gate-mutations.md]
    nice python ci/mutations.py --ci [--only BUG ...] [--first-red] [--out PAGE]

For each mutation, one at a time: copy ``opt_suite/`` and ``baselines/`` to a temporary folder,
apply one realistic learning bug as a text patch (the old text must occur exactly once), import
the patched module from the copy, run the mutation's gate spec with the copy first on
``PYTHONPATH`` (``opt-suite run``) and ``opt-suite compare`` it with the gate's committed
baseline -- the package's own CLI, with the flags ``.ci/run`` passes (``Gate.compare_flags``:
``--unit seed`` for gate-power and gate-objective). The verdict is read from the exit
status: 1 is a regression (caught), 2 a gate that refused to judge (red too, with its
reason), 0 a pass. A patch that no longer applies, or a copy that fails to import, is a
listed failure of the check, never a pass. The table (``--out``) is written by this script, never
by hand, with each check's wall and CPU time and the machine's load.

A pass on a learning bug is not always a gap in the gate: the issue asks that every bug that
moves a learning curve by more than the gate's stated detectable effect be caught. So every
compared run also gets the bug's effect, per method entry: its loss against the baseline in the
unit ``gate-rates`` injects its degradations (a fraction of each task's range,
:func:`opt_suite.report.gate.degradation`, from the pairing ``compare`` tests), measured by this
repository's own, unpatched report code. The gate's detectable effect is per entry: the
smallest loss at which its baseline's stamp (``measured_rates``) says *that entry* was caught
with power >= 0.8 (:func:`opt_suite.report.measured_rates.detectable_losses`). A missed bug is
**below the detectable effect** when every entry's loss is smaller than that entry's own, and
**a gap** otherwise: some entry moved by at least its detectable effect, or moved at all where
the stamp states none for it, or the effect could not be measured.

``--ci`` judges CI as a whole, as the issue asks: a bug is stopped by CI when any gate `.ci/run`
runs turns red (:data:`CI_GATES`, in its order). Each distinct bug (one patch; its per-gate
mutations grouped, named by the first, :func:`patch_groups`) is applied once and every CI gate is
run and compared with the same copy (:func:`run_gate`, as above). Its verdict
(:func:`ci_verdict`): caught by CI (some compare exit 1), refused by CI (red without a verdict),
missed below every gate's detectable effect (every entry on every gate smaller than its figure
there; an entry a gate states none for is judged by the smallest figure another CI gate states
for the same entry, :func:`judged_by`), or a CI gap. The control must pass every CI gate and
replay each baseline exactly. ``--first-red`` stops a row at its first red gate, as `.ci/run`'s
``set -e`` does.

Exit status: 0 when every learning bug that was run was caught or missed below the detectable
effect, every control passed and every patch applied; 1 otherwise (a gap, a false alarm, a stale
patch; with ``--ci`` also a control whose baseline no longer replays); 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the effects are measured by this repository's report code
    sys.path.insert(0, str(ROOT))
PACKAGES = ("opt_suite", "baselines")  # what a mutation may patch: the code the gate runs


@dataclasses.dataclass(frozen=True)
class Gate:
    """A gate spec, the baseline `.ci/run` compares it with, and compare's flags there.

    ``in_ci``: whether `.ci/run` runs it (tests/test_ci_mutations.py checks that the CI gates,
    in :data:`GATES`' order, are `.ci/run`'s run/compare and `gate NAME FLAGS` lines, in its).
    """

    spec: str
    baseline: str
    compare_flags: tuple[str, ...] = ()
    in_ci: bool = False


#: Every gate a mutation is checked on; the CI gates first, in the order `.ci/run` runs them.
GATES = {
    "quick": Gate("specs/fourrooms-quick.yaml", "ci/baseline.json", in_ci=True),
    # The gate with power for every entry, compared as .ci/run does: the seed as the unit.
    "power": Gate(
        "ci/gate-power.yaml", "ci/baseline-gate-power.json", ("--unit", "seed"), in_ci=True
    ),
    # The field's methods and the cloning controls: 10 run seeds against a pool, as .ci/run does.
    "field": Gate(
        "ci/gate-field.yaml", "ci/baseline-gate-field.json", ("--unit", "pool"), in_ci=True
    ),
    # Algorithm 1's objective guarded: offline-options at lambda2 = 1, where its results depend
    # on Ĵ's terms, compared as .ci/run does.
    "objective": Gate(
        "ci/gate-objective.yaml", "ci/baseline-gate-objective.json", ("--unit", "seed"), in_ci=True
    ),
    # The model-free gates, compared as .ci/run does: the run's seeds against a pool (408, 328).
    "gymnasium": Gate(
        "ci/gate-gymnasium.yaml", "ci/baseline-gate-gymnasium.json", ("--unit", "pool"), in_ci=True
    ),
    "pixels": Gate(
        "ci/gate-pixels.yaml", "ci/baseline-gate-pixels.json", ("--unit", "pool"), in_ci=True
    ),
    # Issue 36, item 1's proposal: offline-options alone where its results depend on Ĵ. Its
    # rates were never measured, so compare is told so (and prints it). Not run by CI.
    "offline-power": Gate(
        "ci/offline-power.yaml", "ci/baseline-offline-power.json", ("--unmeasured-ok",)
    ),
}
#: The gates `.ci/run` runs, in its order: a bug is stopped by CI when any of them turns red.
CI_GATES = tuple(name for name, gate in GATES.items() if gate.in_ci)


@dataclasses.dataclass(frozen=True)
class Mutation:
    """One injected bug: ``old`` becomes ``new`` in ``path``, then ``gate`` is run and compared.

    ``learning``: whether the bug changes what is learned (the gate must catch it); False for
    the control (no patch) and for bugs of the report that change no learning curve.
    """

    name: str
    bug: str
    path: str
    old: str
    new: str
    gate: str
    learning: bool = True


def on_gate(mutation: Mutation, gate: str) -> Mutation:
    """The same bug checked by another gate (named ``<name>-<gate>``)."""
    return dataclasses.replace(mutation, name=f"{mutation.name}-{gate}", gate=gate)


def control(gate: str) -> Mutation:
    """No patch: a rerun of ``gate`` from the copy must pass (and replay its baseline)."""
    suffix = "" if gate == "quick" else f"-{gate}"
    bug = "no patch: a rerun from the copy must pass (and replay the baseline)"
    return Mutation(f"control{suffix}", bug, "opt_suite/__init__.py", "", "", gate, learning=False)


SMDP_DISCOUNT, JHAT_NO_TERMINATION, BETA_FROZEN, DEMOS_SHUFFLED = (
    Mutation(
        "smdp-discount",
        "SMDP target bootstraps with 0.9·γ^k instead of γ^k, a wrong discount",
        "opt_suite/options/termination.py",
        "return option_return if done else option_return + discount * next_value\n"
        "    return np.where(done, option_return, option_return + discount * next_value)",
        "return option_return if done else option_return + 0.9 * discount * next_value\n"
        "    return np.where(done, option_return, option_return + 0.9 * discount * next_value)",
        "quick",
    ),
    Mutation(
        "jhat-no-termination-term",
        "Ĵ's termination term dropped from Algorithm 1's training objective",
        "opt_suite/methods/offline_options/training.py",
        'hyper["termination_weight"] * parts.termination_term,',
        "0.0 * parts.termination_term,",
        "quick",
    ),
    Mutation(
        "beta-frozen",
        "options' β frozen at its initial value while Ĵ is ascended (a zero gradient reaches it)",
        "opt_suite/option_networks/networks.py",
        "return tf.nn.log_softmax(mu, axis=-1), tf.sigmoid(beta)",
        "return tf.nn.log_softmax(mu, axis=-1), tf.sigmoid(tf.stop_gradient(beta) + 0.0 * beta)",
        "quick",
    ),
    Mutation(
        "demos-shuffled",
        "each train task demonstrated by the next task's expert (an off-by-one across tasks)",
        "opt_suite/demonstrations/tabular.py",
        "        policy = policy_for(i, task, model)\n",
        "        others = _models(family, train_tasks, source)\n"
        "        j = (i + 1) % len(train_tasks)\n"
        "        policy = policy_for(j, train_tasks[j], others[j])\n",
        "quick",
    ),
)

MUTATIONS: tuple[Mutation, ...] = (
    control("quick"),
    SMDP_DISCOUNT,
    JHAT_NO_TERMINATION,
    BETA_FROZEN,
    DEMOS_SHUFFLED,
    Mutation(
        "bootstrap-per-run",
        "the report's bootstrap and permutation generator seeded afresh on every run, not from "
        "the report seed (changes no learning curve)",
        "opt_suite/report/leaderboard.py",
        "return np.random.default_rng([REPORT_SEED, *(zlib.crc32(n.encode()) for n in names)])",
        "return np.random.default_rng()",
        "quick",
        learning=False,
    ),
    Mutation(
        "ppo-advantage-sign",
        "PPO's advantages negated (the tf_agents learner and bc_ppo ascend the wrong way)",
        "opt_suite/agents/ppo.py",
        "    agent.initialize()\n",
        "    advantages = agent.compute_advantages\n"
        "    agent.compute_advantages = lambda *a, **k: -advantages(*a, **k)\n"
        "    agent.initialize()\n",
        "gymnasium",
    ),
    Mutation(
        "jhat-no-termination-term-gym",
        "Ĵ's termination term dropped, on the gymnasium gate (MLP options, tf_agents learner)",
        "opt_suite/methods/offline_options/training.py",
        'hyper["termination_weight"] * parts.termination_term,',
        "0.0 * parts.termination_term,",
        "gymnasium",
    ),
    Mutation(
        "smdp-discount-field",
        "the SMDP target's wrong discount, on the field gate (covering, Laplacian, LOVE, CompILE, "
        "cloned options)",
        "opt_suite/options/termination.py",
        "return option_return if done else option_return + discount * next_value\n"
        "    return np.where(done, option_return, option_return + discount * next_value)",
        "return option_return if done else option_return + 0.9 * discount * next_value\n"
        "    return np.where(done, option_return, option_return + 0.9 * discount * next_value)",
        "field",
    ),
    Mutation(
        "segment-fit-ascends",
        "LOVE's and CompILE's full-batch fit steps up their loss, not down (a sign flip in the "
        "gradient), on the field gate",
        "baselines/skill_networks.py",
        "flat, {k: -g for k, g in grads.items()}, moments",
        "flat, {k: g for k, g in grads.items()}, moments",
        "field",
    ),
    control("gymnasium"),
    control("pixels"),
    control("field"),
    Mutation(
        "jhat-no-termination-term-offline",
        "Ĵ's termination term dropped, on the offline-options power spec (related tasks)",
        "opt_suite/methods/offline_options/training.py",
        'hyper["termination_weight"] * parts.termination_term,',
        "0.0 * parts.termination_term,",
        "offline-power",
    ),
    Mutation(
        "beta-frozen-offline",
        "options' β frozen (a zero gradient), on the offline-options power spec",
        "opt_suite/option_networks/networks.py",
        "return tf.nn.log_softmax(mu, axis=-1), tf.sigmoid(beta)",
        "return tf.nn.log_softmax(mu, axis=-1), tf.sigmoid(tf.stop_gradient(beta) + 0.0 * beta)",
        "offline-power",
    ),
    control("offline-power"),
    # The quick spec's learning bugs on the gate CI runs with power for every entry.
    control("power"),
    *(on_gate(m, "power") for m in (SMDP_DISCOUNT, JHAT_NO_TERMINATION, BETA_FROZEN)),
    on_gate(DEMOS_SHUFFLED, "power"),
    # The objective's bugs on the gate built to catch them.
    control("objective"),
    on_gate(JHAT_NO_TERMINATION, "objective"),
    on_gate(BETA_FROZEN, "objective"),
)


#: A learning bug that compare passed although it moved some entry by at least the detectable
#: effect, or where the gate states none: the gate's gap (the check fails).
MISSED_GAP = "missed: a gap"
#: A learning bug that compare passed while moving every entry by less than the gate's
#: detectable effect: a bug the gate was not built to see (the check does not fail).
MISSED_BELOW = "missed: below the detectable effect"


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one mutation did to the gate.

    ``verdict``: caught | refused | :data:`MISSED_GAP` | :data:`MISSED_BELOW` | passed |
    false-alarm | patch-failed | import-failed. ``effects``: method entry -> its loss against the
    baseline as a fraction of each task's range (positive worse), None when no comparison was
    made. ``detectable``: method entry -> the gate's stated detectable effect for it in that unit
    (None: its stamp states none for that entry); empty when the stamp states none at all.
    """

    mutation: Mutation
    verdict: str
    detail: str
    wall_s: float
    cpu_s: float
    effects: Mapping[str, float] | None = None
    detectable: Mapping[str, float | None] = dataclasses.field(default_factory=dict)


def missed_verdict(
    effects: Mapping[str, float] | None, detectable: Mapping[str, float | None]
) -> str:
    """A passed learning bug: below the gate's detectable effect, or a gap in the gate.

    Below only when the effect of every entry is known and smaller in size than that entry's own
    stated detectable effect (``detectable``, entry -> loss); an improvement as large counts too
    (a learning curve moved that far). An entry the gate states no detectable effect for is
    below only if the bug left it exactly where it was.
    """
    if effects is None or not effects:
        return MISSED_GAP
    if all(_below(loss, detectable.get(name)) for name, loss in effects.items()):
        return MISSED_BELOW
    return MISSED_GAP


def _below(loss: float, detectable: float | None) -> bool:
    """Whether an entry's loss is smaller than its detectable effect (None: none stated)."""
    if not math.isfinite(loss):  # an effect not measured is no evidence of smallness
        return False
    return loss == 0.0 if detectable is None else abs(loss) < detectable


def detectable_effect(gate: Gate) -> dict[str, float | None]:
    """The gate's stated detectable effect per entry, from its baseline's stamped measured rates.

    Empty when the baseline cannot be read, has no stamp, or its stamp has no power per entry.
    """
    from opt_suite.report import BaselineError, load_baseline
    from opt_suite.report.measured_rates import detectable_losses

    try:
        baseline = load_baseline(ROOT / gate.baseline)
    except BaselineError:  # compare refuses it too, and says why: that row is red
        return {}
    return detectable_losses(baseline.measured)


def effects_of(run: Path, gate: Gate) -> dict[str, float] | None:
    """Each method entry's loss in ``run`` against the gate's baseline, None if not comparable.

    The comparison ``compare`` makes (its loaders, its pairing, its unit), run here with the
    repository's unpatched report code: the effect is a property of the mutated learning
    curves, whatever the patched copy's report would say.
    """
    from opt_suite.cli.compare import unit_for_test
    from opt_suite.report import (
        BaselineError,
        CompareError,
        ReportDataError,
        compare_runs,
        load_baseline,
    )
    from opt_suite.report.source import load_view_inputs
    from opt_suite.run_view import RunView
    from opt_suite.store import StoreError

    flags = list(gate.compare_flags)
    asked = flags[flags.index("--unit") + 1] if "--unit" in flags else None
    try:
        baseline = load_baseline(ROOT / gate.baseline)
        with RunView(run, None) as view:
            inputs, _ = load_view_inputs(view)
        result = compare_runs(inputs, baseline, unit=unit_for_test(asked, baseline))
    except (BaselineError, CompareError, ReportDataError, StoreError):
        return None
    return {row.method: row.degradation for row in result.rows}


def patched_copy(mutation: Mutation, into: Path) -> str | None:
    """Copy the packages into ``into`` and apply ``mutation``; a problem, or None when applied."""
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, into / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    if not mutation.old:
        return None
    target = into / mutation.path
    if not target.is_file():
        return f"patch does not apply: {mutation.path} does not exist"
    text = target.read_text()
    found = text.count(mutation.old)
    if found != 1:
        return f"patch does not apply: its old text occurs {found} times in {mutation.path}"
    target.write_text(text.replace(mutation.old, mutation.new))
    return None


def _module(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _run(command: Sequence[str], copy: Path) -> subprocess.CompletedProcess[str]:
    """Run ``python COMMAND`` with the copy as the working folder and first on ``PYTHONPATH``.

    Why both: ``-m`` and ``-c`` put the working folder first on ``sys.path``, before
    ``PYTHONPATH``; from the repository root the unpatched package would run and every bug
    would pass unseen.
    """
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    # No `nice` of its own: the children inherit the caller's (`nice python ci/mutations.py`).
    return subprocess.run(
        [sys.executable, *command], env=env, cwd=copy, capture_output=True, text=True
    )


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


def _flagged(stdout: str) -> str:
    """The flagged rows of compare's table as "method baseline → run (diff)".

    A row reads: method, test, its units ("20 pairs", "8 seeds", or the pool unit's "8 seeds vs
    160"), baseline mean, run mean, difference, intervals, ...
    """
    flagged = []
    for line in stdout.splitlines():
        if not line.rstrip().endswith("REGRESSION"):
            continue
        r = line.split()
        units = [i for i, word in enumerate(r) if word in ("pairs", "seeds")]
        end = units[0] + 2 if units and r[units[0] + 1 : units[0] + 2] == ["vs"] else None
        at = (end if end is not None else units[0]) + 1 if units else len(r)
        if len(r) > at + 2:
            flagged.append(f"{r[0]} {r[at]} → {r[at + 1]} ({r[at + 2]})")
    return ", ".join(flagged) or "?"


def _replay_line(stdout: str) -> str:
    return next((line for line in stdout.splitlines() if line.startswith("replay:")), "")


@dataclasses.dataclass(frozen=True)
class GateRun:
    """One gate spec run with a patched copy and compared with its baseline, as `.ci/run` does.

    ``run_status`` and ``status``: the exit statuses of `opt-suite run` and `opt-suite compare`
    (0 pass, 1 regression, 2 refused). ``detail``: the replay line and compare's verdict, or
    its reason for refusing. ``effects``: as :attr:`Outcome.effects` (None when compare refused).
    """

    gate: str
    run_status: int
    status: int
    detail: str
    replay: str
    effects: Mapping[str, float] | None
    wall_s: float
    cpu_s: float


def _cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def prepare(mutation: Mutation, copy: Path) -> tuple[str, str] | None:
    """Patch a copy into ``copy`` and import the patched module from it.

    Returns (patch-failed | import-failed, the problem), or None when the copy is ready to run.
    """
    problem = patched_copy(mutation, copy)
    if problem is not None:
        return "patch-failed", problem
    # The copy first on the path: the entry points name modules, which resolve to the copy.
    module = _module(mutation.path)
    imported = _run(
        ["-c", f"import baselines, {module}; print({module}.__file__, baselines.__file__)"],
        copy,
    )
    if imported.returncode != 0:
        return "import-failed", _last_line(imported.stderr)
    elsewhere = [f for f in imported.stdout.split() if not Path(f).is_relative_to(copy)]
    if elsewhere:
        return "import-failed", f"imported from outside the copy: {elsewhere[0]}"
    return None


def run_gate(name: str, copy: Path, out: Path, workers: int) -> GateRun:
    """Run gate ``name``'s spec with the prepared ``copy`` into ``out`` and compare it."""
    gate = GATES[name]
    started, cpu_before = time.monotonic(), _cpu_s()
    spec, baseline = ROOT / gate.spec, ROOT / gate.baseline
    run = _run(
        ["-m", "opt_suite", "run", str(spec), "--out", str(out), "--quiet", "--no-report"]
        + ["--workers", str(workers)],
        copy,
    )
    compare = _run(
        ["-m", "opt_suite", "compare", str(out), "--baseline", str(baseline)]
        + list(gate.compare_flags),
        copy,
    )
    replay = _replay_line(compare.stdout)
    ran = "" if run.returncode == 0 else f"run exit {run.returncode}: "
    effects = None
    if compare.returncode == 2:
        detail = f"{ran}{_last_line(compare.stderr)}"
    else:
        effects = effects_of(out, gate)
        said = (
            f"regression: {_flagged(compare.stdout)}"
            if compare.returncode == 1
            else _last_line(compare.stdout)
        )
        detail = f"{ran}{replay} — {said}"
    wall, cpu = time.monotonic() - started, _cpu_s() - cpu_before
    return GateRun(name, run.returncode, compare.returncode, detail, replay, effects, wall, cpu)


def check(mutation: Mutation, workers: int) -> Outcome:
    """Patch a copy, import it, run the gate spec and compare it with the gate's baseline."""
    started, cpu_before = time.monotonic(), _cpu_s()
    detectable = detectable_effect(GATES[mutation.gate])

    def outcome(verdict: str, detail: str, effects: Mapping[str, float] | None = None) -> Outcome:
        wall, used = time.monotonic() - started, _cpu_s() - cpu_before
        return Outcome(mutation, verdict, detail, wall, used, effects, detectable)

    with tempfile.TemporaryDirectory(prefix=f"mutation-{mutation.name}-") as tmp:
        broken = prepare(mutation, Path(tmp))
        if broken is not None:
            return outcome(*broken)
        ran = run_gate(mutation.gate, Path(tmp), Path(tmp) / "run", workers)
    red = "caught" if mutation.learning else "false-alarm"  # a control must pass
    if ran.status == 2:
        return outcome("refused" if mutation.learning else red, ran.detail)
    if ran.status == 1:
        return outcome(red, ran.detail, ran.effects)
    verdict = missed_verdict(ran.effects, detectable) if mutation.learning else "passed"
    return outcome(verdict, ran.detail, ran.effects)


# The CI-wide check: each distinct bug once, on every gate .ci/run runs.

#: A learning bug some CI gate's compare called a regression (exit 1).
CI_CAUGHT = "caught by CI"
#: A learning bug some CI gate turned red without a verdict (compare exit 2, or a failed run,
#: which stops .ci/run under `set -e`), none with one.
CI_REFUSED = "refused by CI"
#: A learning bug every CI gate passed while it moved every entry, on every gate, by less than
#: that entry's detectable effect: a bug CI was not built to see (the check does not fail).
CI_BELOW = "missed: below every gate's detectable effect"
#: A learning bug every CI gate passed although it moved some entry by at least its detectable
#: effect, or moved an entry no CI gate guards, or its effect was not measured: CI's gap.
CI_GAP = "missed: a CI gap"
#: A control (or report bug) whose every CI gate passed but some baseline did not replay
#: exactly: the bugs' effects would be measured against code other than the baseline's.
REPLAY_CHANGED = "replay changed"


def patch_groups(mutations: Sequence[Mutation]) -> dict[str, tuple[Mutation, ...]]:
    """The distinct bugs: mutations grouped by their patch (path, old, new), in first order.

    Each group is named by its first member (the bug's base name: ``jhat-no-termination-term``
    for its ``-power``, ``-objective``, ``-gym`` ... checks); every control is one group.
    """
    groups: dict[tuple[str, str, str], list[Mutation]] = {}
    for m in mutations:
        groups.setdefault((m.path, m.old, m.new), []).append(m)
    return {members[0].name: tuple(members) for members in groups.values()}


def gate_label(name: str) -> str:
    """A gate as `.ci/run` names it: its spec's stem (``fourrooms-quick``, ``gate-power``)."""
    return Path(GATES[name].spec).stem


def judged_by(
    entry: str, gate: str, detectable_by_gate: Mapping[str, Mapping[str, float | None]]
) -> tuple[float, str] | None:
    """The detectable effect an entry's loss on ``gate`` is judged by, and the gate stating it.

    The gate's own figure when it states one; else the smallest that another CI gate states for
    the same method entry name (the first in `.ci/run`'s order on a tie): a move that large is
    one CI is known to see there. None when no CI gate states one for the entry.
    """
    own = detectable_by_gate.get(gate, {}).get(entry)
    if own is not None:
        return own, gate
    stated = [
        (figure, other)
        for other in CI_GATES
        if (figure := detectable_by_gate.get(other, {}).get(entry)) is not None
    ]
    return min(stated, key=lambda pair: pair[0]) if stated else None


def _red(run: GateRun) -> bool:
    return run.run_status != 0 or run.status != 0


def _caught(run: GateRun) -> bool:
    """Whether compare called it a regression (a failed run stops .ci/run before compare)."""
    return run.run_status == 0 and run.status == 1


def _moved_too_far(
    run: GateRun, detectable_by_gate: Mapping[str, Mapping[str, float | None]]
) -> list[str]:
    """Why a passed gate run is a gap in CI: each entry not below its detectable effect."""
    label = gate_label(run.gate)
    if not run.effects:
        return [f"{label}: no effect measured"]
    reasons = []
    for entry, loss in run.effects.items():
        judged = judged_by(entry, run.gate, detectable_by_gate)
        if _below(loss, None if judged is None else judged[0]):
            continue
        if not math.isfinite(loss):
            reasons.append(f"{entry} on {label}: loss unknown")
        elif judged is None:
            reasons.append(f"{entry} {loss:+.1%} on {label}, guarded by no CI gate")
        else:
            reasons.append(f"{entry} {loss:+.1%} on {label} ≥ {_figure(*judged, on=run.gate)}")
    return reasons


def _figure(figure: float, stated_by: str, on: str | None = None) -> str:
    """A detectable effect, naming the gate it is borrowed from when not ``on``'s own."""
    borrowed = "" if stated_by == on else f" ({gate_label(stated_by)}'s)"
    return f"{figure:.0%}{borrowed}"


def ci_verdict(
    mutation: Mutation,
    runs: Sequence[GateRun],
    detectable_by_gate: Mapping[str, Mapping[str, float | None]],
) -> tuple[str, str]:
    """CI's verdict on one bug from its gate runs (in .ci/run's order), and why.

    A learning bug: :data:`CI_CAUGHT` when a gate called it a regression, :data:`CI_REFUSED`
    when gates turned red without one, else :data:`CI_BELOW` or :data:`CI_GAP`: below only when
    every CI gate ran and, on each, every entry's loss is smaller than the detectable effect it
    is judged by (:func:`judged_by`). Not a learning bug (the control): ``false-alarm`` when any
    gate turned red, :data:`REPLAY_CHANGED` when one did not replay its baseline exactly, else
    ``passed``.
    """
    labels = [gate_label(r.gate) for r in runs if _red(r)]
    if not mutation.learning:
        if labels:
            return "false-alarm", f"red on {', '.join(labels)}"
        changed = [gate_label(r.gate) for r in runs if not r.replay.startswith("replay: identical")]
        if changed:
            return REPLAY_CHANGED, f"not replayed exactly on {', '.join(changed)}"
        return "passed", f"every CI gate passed and replayed its baseline ({len(runs)} run)"
    caught = [gate_label(r.gate) for r in runs if _caught(r)]
    if caught:
        return CI_CAUGHT, f"red on {', '.join(caught)}"
    if labels:
        return CI_REFUSED, f"red without a verdict on {', '.join(labels)}"
    missing = [gate_label(g) for g in CI_GATES if g not in {r.gate for r in runs}]
    if missing:
        return CI_GAP, f"not run on {', '.join(missing)}"
    reasons = [reason for r in runs for reason in _moved_too_far(r, detectable_by_gate)]
    if reasons:
        return CI_GAP, "; ".join(reasons)
    return CI_BELOW, "every entry on every gate below the detectable effect it is judged by"


@dataclasses.dataclass(frozen=True)
class CiOutcome:
    """What one bug did to CI: its gate runs in .ci/run's order and CI's verdict.

    ``mutation``: the bug's group's first member (its base name and description); ``members``:
    every mutation name with the same patch. ``not_run``: the CI gates not run (``--first-red``
    stopped at a red one, or the copy was broken).
    """

    mutation: Mutation
    members: tuple[str, ...]
    verdict: str
    detail: str
    runs: tuple[GateRun, ...]
    not_run: tuple[str, ...]
    wall_s: float
    cpu_s: float


def check_ci(
    members: Sequence[Mutation],
    workers: int,
    detectable_by_gate: Mapping[str, Mapping[str, float | None]],
    *,
    first_red: bool = False,
    progress: Callable[[GateRun], None] = lambda run: None,
) -> CiOutcome:
    """Apply one bug once, then run every CI gate with the copy, as .ci/run orders them.

    ``first_red``: stop at the first red gate, as .ci/run does under `set -e`.
    """
    mutation = members[0]
    names = tuple(m.name for m in members)
    started, cpu_before = time.monotonic(), _cpu_s()
    runs: list[GateRun] = []
    with tempfile.TemporaryDirectory(prefix=f"mutation-ci-{mutation.name}-") as tmp:
        copy = Path(tmp)
        broken = prepare(mutation, copy)
        if broken is None:
            for gate in CI_GATES:
                runs.append(run_gate(gate, copy, copy / f"run-{gate}", workers))
                progress(runs[-1])
                if first_red and _red(runs[-1]):
                    break
    verdict, detail = broken or ci_verdict(mutation, runs, detectable_by_gate)
    wall, cpu = time.monotonic() - started, _cpu_s() - cpu_before
    not_run = CI_GATES[len(runs) :]
    return CiOutcome(mutation, names, verdict, detail, tuple(runs), not_run, wall, cpu)


def _gate_cell_ci(
    run: GateRun, learning: bool, detectable_by_gate: Mapping[str, Mapping[str, float | None]]
) -> str:
    """One gate run, compact: its outcome and the entry that decides it, vs its detectable."""
    if run.run_status != 0:
        return f"**refused** (run exit {run.run_status})"
    if run.status == 2:
        return "**refused**"
    outcome = "**caught**" if run.status == 1 else "missed" if learning else "passed"
    effects = run.effects
    if effects is None:
        return f"{outcome}: loss unknown"
    if not effects:
        return outcome
    too_far = [
        e
        for e, loss in effects.items()
        if not _below(loss, (judged_by(e, run.gate, detectable_by_gate) or (None,))[0])
    ]
    entry = too_far[0] if too_far else max(effects, key=lambda e: abs(effects[e]))
    loss = effects[entry]
    judged = judged_by(entry, run.gate, detectable_by_gate)
    figure = "none" if judged is None else _figure(*judged, on=run.gate)
    shown = f"{loss:+.1%}" if math.isfinite(loss) else "unknown"
    return f"{outcome}: {entry} {shown} vs {figure}"


def _detectable_cell_ci(
    gate: str,
    entries: Sequence[str],
    detectable_by_gate: Mapping[str, Mapping[str, float | None]],
) -> str:
    """Each entry's detectable effect as judged on ``gate``, naming a borrowed figure's gate."""
    cells = []
    for entry in entries:
        judged = judged_by(entry, gate, detectable_by_gate)
        cells.append(f"{entry} {'none' if judged is None else _figure(*judged, on=gate)}")
    return ", ".join(cells) or "none measured"


def render_ci(
    outcomes: Sequence[CiOutcome],
    command: str,
    load: str,
    detectable_by_gate: Mapping[str, Mapping[str, float | None]],
    *,
    first_red: bool = False,
) -> str:
    """The generated CI-wide page: one row per bug across every CI gate, then each gate run."""
    labels = [gate_label(g) for g in CI_GATES]
    learning = [o for o in outcomes if o.mutation.learning and o.verdict not in _BROKEN]
    stopped = [o for o in learning if o.verdict in (CI_CAUGHT, CI_REFUSED)]
    gaps = [o for o in learning if o.verdict == CI_GAP]
    below = [o for o in learning if o.verdict == CI_BELOW]
    lines = [
        *_header(
            "CI against injected bugs: every gate `.ci/run` runs",
            "ci/mutations.py --ci",
            command,
            load,
            "`opt-suite run` and `opt-suite compare` of each gate",
        ),
        "Each row applies one bug (one patch; the per-gate checks of the same patch are listed"
        " under it) to a copy of the package once, then runs every gate `.ci/run` runs, in its"
        f" order ({', '.join(labels)}), with the copy first on `PYTHONPATH`, each compared with"
        " its committed baseline with `.ci/run`'s flags. CI stops a bug when any gate turns red."
        " **caught by CI**: some gate's `compare` exit 1; **refused by CI**: red without a"
        " verdict (`compare` exit 2, or a failed `opt-suite run`, which stops `.ci/run`), none"
        " exit 1; **missed: below every gate's detectable effect**: every gate passed and, on"
        " every gate, every entry's loss is smaller than its detectable effect there — the"
        " gate's own figure, or for an entry that gate states none for, the smallest another CI"
        " gate states for the same method entry (named: *10% (gate-power's)*); **missed: a CI"
        " gap**: every gate passed although some entry moved by at least that figure, or an"
        " entry no CI gate guards moved at all, or an effect was not measured (the check"
        " fails). A control must pass every gate and replay each baseline exactly:"
        " **false-alarm** when red, **replay changed** when a baseline no longer replays.",
        "",
        "Each gate's cell: **caught** (exit 1), **refused**, *missed* (a learning bug passed) or"
        " passed, with the entry that decides it — the first that reached its detectable"
        " effect, else the one that moved most — its loss (a share of each task's range, as in"
        " the per-gate pages) *vs* the detectable effect it is judged by.",
    ]
    if first_red:
        lines += [
            "",
            "`--first-red`: each row stops at its first red gate, as `.ci/run` does under"
            " `set -e`; the gates after it are *not run*.",
        ]
    lines += [
        "",
        f"| bug | patch | {' | '.join(labels)} | CI verdict | wall | CPU |",
        "|---|---|" + "---|" * len(labels) + "---|---|---|",
    ]
    for o in outcomes:
        m = o.mutation
        by_gate = {r.gate: r for r in o.runs}
        cells = [
            _gate_cell_ci(by_gate[g], m.learning, detectable_by_gate)
            if g in by_gate
            else "*not run*"
            for g in CI_GATES
        ]
        also = [n for n in o.members if n != m.name]
        checks = f" (per-gate checks: {', '.join(f'`{n}`' for n in also)})" if also else ""
        verdict = f"**{o.verdict}**: {_escaped(o.detail)}"
        lines.append(
            f"| `{m.name}`{checks} | {m.bug} (`{m.path}`) | {' | '.join(cells)} | {verdict} |"
            f" {o.wall_s:.0f} s | {o.cpu_s:.0f} s |"
        )
    broken = [o.mutation.name for o in outcomes if o.verdict in _BROKEN]
    alarms = [o.mutation.name for o in outcomes if o.verdict in ("false-alarm", REPLAY_CHANGED)]
    lines += [
        "",
        f"Learning bugs stopped by CI: **{len(stopped)} of {len(learning)}**"
        f" ({len([o for o in stopped if o.verdict == CI_CAUGHT])} by a regression verdict)."
        f" Missed: **{len(gaps)} a CI gap**, {len(below)} below every gate's detectable effect."
        + (f" Controls red or not replayed: **{', '.join(alarms)}**." if alarms else "")
        + (f" Broken rows (not counted): {', '.join(broken)}." if broken else ""),
        f"Whole check: {sum(o.wall_s for o in outcomes):.0f} s wall,"
        f" {sum(o.cpu_s for o in outcomes):.0f} CPU-seconds.",
        "",
        "## Each gate run",
        "",
        "| bug | gate | run, compare exit | replay and verdict | loss per entry (share of each"
        " task's range) | detectable per entry (as judged) | wall | CPU |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        for r in o.runs:
            effects = (
                "—"
                if r.effects is None
                else ", ".join(
                    f"{e} {loss:+.1%}" if math.isfinite(loss) else f"{e} unknown"
                    for e, loss in r.effects.items()
                )
            )
            entries = list(r.effects or detectable_by_gate.get(r.gate, {}))
            lines.append(
                f"| `{o.mutation.name}` | {_gate_cell(GATES[r.gate])} |"
                f" {r.run_status}, {r.status} | {_escaped(r.detail)} | {effects} |"
                f" {_detectable_cell_ci(r.gate, entries, detectable_by_gate)} |"
                f" {r.wall_s:.0f} s | {r.cpu_s:.0f} s |"
            )
    lines.append("")
    return "\n".join(lines)


def _escaped(detail: str) -> str:
    """A detail for a table cell: paths as in the repository, no column breaks."""
    return detail.replace(f"{ROOT}/", "").replace("|", "\\|")


def _header(title: str, script: str, command: str, load: str, cpu_times: str) -> list[str]:
    """A generated page's opening lines: what wrote it, how to rerun it, when, at what load."""
    return [
        f"# {title}",
        "",
        f"Generated by `{script}` (issue 36, item 3) — do not edit by hand; rerun it:",
        "",
        f"    {command}",
        "",
        f"Measured {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, load average at the"
        f" start {load} on {os.cpu_count()} cores (the wall times are the machine's, the CPU"
        f" times the check's own: {cpu_times}).",
        "",
    ]


def render(outcomes: Sequence[Outcome], command: str, load: str) -> str:
    """The generated Markdown page: one row per mutation, the detection rate, the costs."""
    learning = [o for o in outcomes if o.mutation.learning and o.verdict not in _BROKEN]
    red = [o for o in learning if o.verdict in ("caught", "refused")]
    gaps = [o for o in learning if o.verdict == MISSED_GAP]
    below = [o for o in learning if o.verdict == MISSED_BELOW]
    lines = [
        *_header(
            "The gate against injected bugs",
            "ci/mutations.py",
            command,
            load,
            "patch, import, `opt-suite run`, `opt-suite compare`",
        ),
        "Each row patches a copy of the package with one bug, runs its gate spec with the copy"
        " first on `PYTHONPATH` and compares it with the gate's committed baseline. **caught**:"
        " `compare` exit 1; **refused**: exit 2, CI red without a verdict; **missed: below the"
        " detectable effect**: exit 0 on a learning bug whose loss is smaller, for every entry,"
        " than the gate's detectable effect for that entry (the gate was not built to see it);"
        " **missed: a gap**: exit 0 on a learning bug that moved some entry by at least its"
        " detectable effect, or moved an entry the gate states none for (the check fails);"
        " **passed**: exit 0 where no"
        " learning curve changes (control, report bugs); **false-alarm**: red where nothing"
        " learned changed; **patch-failed** / **import-failed**: the check itself is broken for"
        " that row.",
        "",
        "**loss per entry**: the bug's effect on the gated metric (auc), per method entry: the"
        " mean over the (seed, task) pairs `compare` tests of the run's loss against the"
        " baseline, each divided by its task's range (max − min of the baseline over every"
        " entry and seed) — the unit in which `gate-rates` injects its degradations; positive is"
        " worse, negative better; in bold where its size reaches that entry's detectable"
        " effect. **detectable per entry**: the gate's stated detectable effect for each method"
        " entry, the smallest loss at which its baseline's `measured_rates` stamp (from"
        " `opt-suite gate-rates --stamp`) has power ≥ 0.8 *for that entry*; *none* for an entry"
        " no measured loss reached that power for, *none measured* when the baseline has no"
        " stamp with power per entry. —: no comparison was made (the gate refused, or the row is"
        " broken).",
        "",
        "| mutation | bug | gate | outcome | loss per entry (share of each task's range)"
        " | detectable per entry | replay and verdict | wall | CPU |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        m = o.mutation
        detail = _escaped(o.detail)
        lines.append(
            f"| `{m.name}` | {m.bug} (`{m.path}`) | {_gate_cell(GATES[m.gate])} | **{o.verdict}** |"
            f" {_effects_cell(o, bold=True)} | {_detectable_cell(o.detectable)} |"
            f" {detail} | {o.wall_s:.0f} s | {o.cpu_s:.0f} s |"
        )
    broken = [o.mutation.name for o in outcomes if o.verdict in _BROKEN]
    lines += [
        "",
        f"Learning bugs turned red: **{len(red)} of {len(learning)}**"
        + (
            f" ({len([o for o in red if o.verdict == 'caught'])} by a regression verdict)."
            if red
            else "."
        )
        + f" Missed: **{len(gaps)} a gap**, {len(below)} below the detectable effect."
        + (f" Broken rows (not counted): {', '.join(broken)}." if broken else ""),
        f"Whole check: {sum(o.wall_s for o in outcomes):.0f} s wall,"
        f" {sum(o.cpu_s for o in outcomes):.0f} CPU-seconds.",
        "",
    ]
    return "\n".join(lines)


_BROKEN = ("patch-failed", "import-failed")


def _effects_cell(outcome: Outcome, *, bold: bool = False) -> str:
    """Each entry's loss in percent of the task ranges; bold where it reaches its detectable."""
    if outcome.effects is None:
        return "—"

    def one(name: str, loss: float) -> str:
        if not math.isfinite(loss):
            return f"{name} unknown"
        text = f"{name} {loss:+.1%}"
        detectable = outcome.detectable.get(name)
        reached = detectable is not None and abs(loss) >= detectable
        return f"**{text}**" if bold and reached else text

    return ", ".join(one(name, loss) for name, loss in outcome.effects.items())


def _detectable_cell(detectable: Mapping[str, float | None]) -> str:
    """Each entry's detectable effect in percent of the task ranges; *none* where none is known."""
    if not detectable:
        return "none measured"
    return ", ".join(
        f"{name} {'none' if loss is None else f'{loss:.0%}'}" for name, loss in detectable.items()
    )


def _gate_cell(gate: Gate) -> str:
    """The gate spec, with compare's flags when it is not compared with the defaults."""
    return f"`{gate.spec}`" + (
        f" (`compare {' '.join(gate.compare_flags)}`)" if gate.compare_flags else ""
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen mutations, print one line each, write the table; 0, 1 or 2 (above)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run these mutations only")
    parser.add_argument("--workers", type=int, default=2, help="opt-suite run --workers")
    parser.add_argument("--out", type=Path, help="write the Markdown table here")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument(
        "--ci",
        action="store_true",
        help="each distinct bug once, on every gate .ci/run runs (--only names the bugs)",
    )
    parser.add_argument(
        "--first-red",
        action="store_true",
        help="with --ci: stop a bug's row at its first red gate, as .ci/run does",
    )
    args = parser.parse_args(argv)
    if args.first_red and not args.ci:
        print("mutations.py: --first-red: only with --ci", file=sys.stderr)
        return 2
    if args.ci:
        return _main_ci(args)
    if args.list:
        for m in MUTATIONS:
            print(f"{m.name:30} {m.gate:10} {m.bug}")
        return 0
    known = {m.name: m for m in MUTATIONS}
    unknown = sorted(set(args.only or ()) - set(known))
    if unknown:
        print(
            f"mutations.py: --only: unknown {', '.join(unknown)}; --list names them",
            file=sys.stderr,
        )
        return 2
    chosen = [known[n] for n in args.only] if args.only else list(MUTATIONS)
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    command = "nice python ci/mutations.py" + (
        f" --only {' '.join(args.only)}" if args.only else ""
    )
    outcomes = []
    for mutation in chosen:
        outcome = check(mutation, args.workers)
        print(
            f"{mutation.name}: {outcome.verdict}: {outcome.detail}; loss {_effects_cell(outcome)},"
            f" detectable {_detectable_cell(outcome.detectable)}"
            f" ({outcome.wall_s:.0f} s wall, {outcome.cpu_s:.0f} CPU-s)",
            flush=True,
        )
        outcomes.append(outcome)
        if args.out is not None:  # after every row: an interrupted check keeps what it measured
            args.out.write_text(render(outcomes, f"{command} --out {args.out}", load))
    bad = [o for o in outcomes if o.verdict in (*_BROKEN, MISSED_GAP, "false-alarm")]
    return 1 if bad else 0


def _main_ci(args: argparse.Namespace) -> int:
    """``--ci``: each chosen bug on every CI gate; the page; 0, 1 (a gap, an alarm) or 2."""
    groups = patch_groups(MUTATIONS)
    if args.list:
        for name, members in groups.items():
            print(f"{name:30} {', '.join(m.name for m in members)}")
        return 0
    unknown = sorted(set(args.only or ()) - set(groups))
    if unknown:
        print(
            f"mutations.py: --ci --only: unknown bug {', '.join(unknown)}; --ci --list names"
            " the bugs (one per patch, by the base name)",
            file=sys.stderr,
        )
        return 2
    chosen = [groups[n] for n in args.only] if args.only else list(groups.values())
    detectable_by_gate = {g: detectable_effect(GATES[g]) for g in CI_GATES}
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    command = (
        "nice python ci/mutations.py --ci"
        + (f" --only {' '.join(args.only)}" if args.only else "")
        + (" --first-red" if args.first_red else "")
        + (f" --out {args.out}" if args.out is not None else "")
    )

    def progress(run: GateRun) -> None:
        print(
            f"  {gate_label(run.gate)}: run exit {run.run_status}, compare exit {run.status}:"
            f" {run.detail} ({run.wall_s:.0f} s wall, {run.cpu_s:.0f} CPU-s)",
            flush=True,
        )

    outcomes = []
    for members in chosen:
        print(f"{members[0].name}:", flush=True)
        outcome = check_ci(
            members, args.workers, detectable_by_gate, first_red=args.first_red, progress=progress
        )
        not_run = ", ".join(gate_label(g) for g in outcome.not_run)
        print(
            f"{outcome.mutation.name}: {outcome.verdict}: {outcome.detail}"
            + (f"; not run: {not_run}" if not_run else "")
            + f" ({outcome.wall_s:.0f} s wall, {outcome.cpu_s:.0f} CPU-s)",
            flush=True,
        )
        outcomes.append(outcome)
        if args.out is not None:  # after every row: an interrupted check keeps what it measured
            page = render_ci(outcomes, command, load, detectable_by_gate, first_red=args.first_red)
            args.out.write_text(page)
    bad = (*_BROKEN, CI_GAP, "false-alarm", REPLAY_CHANGED)
    return 1 if any(o.verdict in bad for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
