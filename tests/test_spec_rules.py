"""Rules across spec sections; many problems reported at once (lines: spec_fakes.VALID)."""

from __future__ import annotations

import pytest
from spec_fakes import TEN_LINES, TEN_MISTAKES, VALID, edited, fake_registry, problems_of

from opt_suite.spec import canonical_yaml, parse_spec


@pytest.fixture(autouse=True)
def _fakes():
    with fake_registry():
        yield


def test_ten_mistakes_give_ten_precise_lines():
    assert problems_of(TEN_MISTAKES, "ten.yaml") == [
        line.format(f="ten.yaml") for line in TEN_LINES
    ]


@pytest.mark.parametrize(
    "pairs, line",
    [
        (
            [("  test: 3", "  test: 5")],
            "x.yaml:13:9: tasks.test: more tasks used than sampled (expected train + test <= "
            "count, got 2 + 5 > 6)",
        ),
        (
            [
                (
                    "    - {start: [0, 0], goal: [5, 5]}\n",
                    "    - {start: [0, 0], goal: [5, 5]}\n" * 7,
                )
            ],
            "x.yaml:18:5: tasks.list: more tasks listed than used (expected at most count = 6, "
            "got 7)",
        ),
        (
            [
                (
                    "    - {start: [0, 0], goal: [5, 5]}\n",
                    "    - {start: [0, 0], goal: [5, 5]}\n" * 3 + "  test_per_seed: true\n",
                )
            ],
            "x.yaml:21:18: tasks.test_per_seed: test tasks drawn per seed are sampled, so "
            "tasks.list may hold train tasks only (expected at most train = 2 listed tasks, got 3)",
        ),
        (
            [("  - name: ours", "  - name: primitives")],
            "x.yaml:22:11: methods[1].name: duplicate method entry name 'primitives' (expected "
            "unique names; also methods[0].name)",
        ),
        (
            [("  - name: ours", "  - name: ../ours")],
            "x.yaml:22:11: methods[1].name: not usable as a file name (expected 1-64 letters, "
            "digits, '.', '_' or '-', starting with a letter or digit, got '../ours')",
        ),
        (
            [("baseline: primitives", "baseline: nobody")],
            "x.yaml:32:13: report.baseline: no method entry is named 'nobody' (expected one of: "
            "primitives, ours, or null)",
        ),
        (
            [("episodes: 20", "episodes: 5")],
            "x.yaml:32:3: report.final_fraction: selects no episode (expected final_fraction * "
            "evaluation.episodes >= 1, got 0.1 * 5)",
        ),
    ],
)
def test_cross_section_rules(pairs, line):
    assert problems_of(edited(*pairs), "x.yaml") == [line]


def test_no_methods():
    text = edited(
        (
            "  - name: primitives\n    method: primitives\n  - name: ours\n    method: options\n"
            "    params:\n      lambda2: 100\n      hidden: [16, 16]\n",
            "  []\n",
        ),
        ("baseline: primitives", "baseline: null"),
    )
    assert problems_of(text, "x.yaml") == [
        "x.yaml:20:3: methods: no methods (expected at least one method entry)"
    ]


def test_null_baseline_and_exact_split_are_fine():
    spec = parse_spec(edited(("baseline: primitives", "baseline: null"), ("test: 3", "test: 4")))
    assert spec.report.baseline is None and spec.tasks.train + spec.tasks.test == spec.tasks.count


def test_baseline_is_not_judged_when_a_name_is_unreadable():
    # methods[0].name is broken: the baseline might have been it, so only the name is reported
    problems = problems_of(edited(("  - name: primitives", "  - name: [primitives]")), "x.yaml")
    assert problems == [
        "x.yaml:20:11: methods[0].name: wrong type (expected str, got a list)",
    ]


def test_final_fraction_rule_applies_its_default_when_the_report_section_is_absent():
    # The stored spec spells the default out: a spec that passed validate without a report
    # section must not fail when `report`, `export-demos` or `show-options` read it back.
    text = edited(("episodes: 20", "episodes: 5"))
    text = text[: text.index("report:")]
    (line,) = problems_of(text, "x.yaml")
    assert "report.final_fraction: selects no episode" in line and "0.1 (the default) * 5" in line


@pytest.mark.parametrize(
    "report, lines",
    [
        (
            "  positive_controls: [ours]\n",
            [
                "x.yaml:33:22: report.positive_controls: a validity check needs the cloned option"
                " its positive controls must beat (expected report.clone naming a method entry,"
                " e.g. bc-option-never)"
            ],
        ),
        (
            "  clone: ours\n",
            [
                "x.yaml:33:10: report.clone: a validity check on a spec with no positive control"
                " (expected report.positive_controls listing method entries known to help here,"
                " e.g. hallway-options)"
            ],
        ),
        (
            "  positive_controls: [our, primitives, ours]\n  clone: primitives\n",
            [
                "x.yaml:33:23: report.positive_controls[0]: no method entry is named 'our'; did"
                " you mean 'ours'? (expected a positive control among: primitives, ours)",
                "x.yaml:33:28: report.positive_controls[1]: 'primitives' is report.clone too"
                " (expected another entry)",
            ],
        ),
        (
            "  positive_controls: [ours, ours]\n  clone: nobody\n",
            [
                "x.yaml:33:29: report.positive_controls[1]: 'ours' is listed twice (expected"
                " each control once)",
                "x.yaml:34:10: report.clone: no method entry is named 'nobody' (expected the"
                " cloned-option entry among: primitives, ours)",
            ],
        ),
    ],
)
def test_the_validity_check_names_entries_of_the_spec(report, lines):
    assert problems_of(VALID + report, "x.yaml") == lines


def test_a_validity_check_with_both_keys_parses_and_keeps_old_hashes():
    from opt_suite.spec import spec_hash

    checked = parse_spec(VALID + "  positive_controls: [ours]\n  clone: primitives\n")
    assert (checked.report.positive_controls, checked.report.clone) == (("ours",), "primitives")
    assert spec_hash(parse_spec(VALID)) != spec_hash(checked)
    # added later: a spec that leaves them out keeps the hash it had before they existed
    assert "positive_controls" not in canonical_yaml(parse_spec(VALID))
