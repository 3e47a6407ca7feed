"""Reading spec files: every way a file can be unreadable gives one precise, located line."""

from __future__ import annotations

from pathlib import Path

import pytest
from spec_fakes import VALID, fake_registry, problems_of

from opt_suite.spec import SpecError, load_spec, parse_spec
from opt_suite.spec.yaml_loader import MAX_BYTES, MAX_NODES

# A document missing every required section also reports those; these are the lines it adds.
MISSING = [
    "x.yaml:1:1: family: missing required key (expected a mapping (FamilySpec): task family)",
    "x.yaml:1:1: tasks: missing required key (expected a mapping (TasksSpec): task variations "
    "and split)",
    "x.yaml:1:1: methods: missing required key (expected a list of mappings (MethodSpec): "
    "methods to compare)",
]


@pytest.fixture(autouse=True)
def _fakes():
    with fake_registry():
        yield


def file_problems(path: Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return info.value.problems


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    assert file_problems(path) == [f"{path}:1:1: (spec): no such file '{path}'"]


def test_directory(tmp_path):
    path = tmp_path / "folder.yaml"
    path.mkdir()
    assert file_problems(path) == [
        f"{path}:1:1: (spec): '{path}' is a directory (expected a YAML file)"
    ]


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n"])
def test_empty_file(tmp_path, text):
    path = tmp_path / "empty.yaml"
    path.write_text(text)
    assert file_problems(path) == [
        f"{path}:1:1: (spec): file is empty (expected a mapping of spec sections)"
    ]


def test_file_too_large(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("#" * (MAX_BYTES + 1))
    assert file_problems(path) == [
        f"{path}:1:1: (spec): file is too large (expected at most {MAX_BYTES} bytes)"
    ]


def test_not_utf8_points_at_the_byte(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: ok\ndescription: café\n".encode("latin-1"))
    # line 2, "description: caf" is 16 characters, the bad byte is the 17th
    assert file_problems(path) == [
        f"{path}:2:17: (spec): file is not valid UTF-8 (expected UTF-8 text, got byte 0xe9)"
    ]


def test_utf8_bom_and_non_ascii_are_fine(tmp_path):
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + VALID.replace("Second line.", "Über café ✓").encode())
    assert "Über café ✓" in load_spec(path).description


@pytest.mark.parametrize(
    "text, line",
    [
        (
            "name: a\nfamily: [\n",
            "x.yaml:3:1: (spec): invalid YAML: while parsing a flow node at line 3, expected the "
            "node content, but found '<stream end>'",
        ),
        (
            "name: a\n  bad: 1\n",
            "x.yaml:2:6: (spec): invalid YAML: mapping values are not allowed here",
        ),
        (
            "name: a\n\tfamily: x\n",
            "x.yaml:2:1: (spec): invalid YAML: while scanning for the next token, found character "
            "'\\t' that cannot start any token",
        ),
        (
            "a: 1\n---\nb: 2\n",
            "x.yaml:2:1: (spec): invalid YAML: expected a single document in the stream at line 1, "
            "but found another document",
        ),
        ("name: *nope\n", "x.yaml:1:7: (spec): invalid YAML: found undefined alias 'nope'"),
        (
            "name: a\x07\n",
            "x.yaml:1:8: (spec): invalid YAML: special characters are not allowed (got #x0007)",
        ),
    ],
)
def test_yaml_syntax_errors(text, line):
    assert problems_of(text, "x.yaml") == [line]


def test_duplicate_keys_at_top_and_nested():
    text = VALID.replace("  seed: 7\n", "  seed: 7\n  train: 3\n").replace(
        "description: |", "name: again\ndescription: |"
    )
    assert problems_of(text, "x.yaml") == [
        "x.yaml:2:1: name: duplicate key (first written at line 1)",
        "x.yaml:16:3: tasks.train: duplicate key (first written at line 13)",
    ]


@pytest.mark.parametrize(
    "text, got",
    [("- a\n- b\n", "a list"), ("~\n", "null"), ("just text\n", "a str (its text is not shown)")],
)
def test_top_level_must_be_a_mapping(text, got):
    assert problems_of(text, "x.yaml") == [
        f"x.yaml:1:1: (spec): expected a mapping of spec sections, got {got}"
    ]


def test_alias_bomb_is_refused_before_expansion():
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    problems = problems_of("\n".join(lines) + "\n", "x.yaml")
    assert len(problems) == 1
    assert problems[0].startswith(
        f"x.yaml:1:1: (spec): aliases expand the document too much (expected at most {MAX_NODES} "
        "values, got "
    )


def test_self_containing_alias():
    assert problems_of("a: &x [1, *x]\n", "x.yaml") == [
        "x.yaml:1:4: (spec): an alias refers to a node that contains it"
    ]


def test_python_tags_are_never_executed(tmp_path):
    marker = tmp_path / "pwned"
    text = f"name: !!python/object/apply:os.system ['touch {marker}']\n"
    assert problems_of(text, "x.yaml") == [
        *MISSING,
        "x.yaml:1:7: name: unsupported YAML tag '!!python/object/apply:os.system' (expected plain "
        "YAML values; tags are never executed)",
    ]
    assert not marker.exists()


def test_custom_and_collection_tags_are_refused():
    text = VALID.replace("seed: 7", "seed: !env SEED").replace("walls", "x")
    text = text.replace("slip: 0.2", "slip: !!set {a, b}")
    assert problems_of(text, "x.yaml") == [
        "x.yaml:9:11: family.params.slip: unsupported YAML tag '!!set' (expected plain YAML "
        "values; tags are never executed)",
        "x.yaml:14:9: tasks.seed: unsupported YAML tag '!env' (expected plain YAML values; tags "
        "are never executed)",
    ]


def test_keys_must_be_text():
    text = VALID.replace("  seed: 7\n", "  seed: 7\n  3: three\n")
    assert problems_of(text, "x.yaml") == [
        "x.yaml:15:3: tasks: keys must be text (expected str, got int 3)"
    ]


def test_explicit_scalar_tag_that_does_not_parse():
    text = VALID.replace("seed: 7", "seed: !!int seven")
    assert problems_of(text, "x.yaml") == ["x.yaml:14:9: tasks.seed: cannot read 'seven' as !!int"]


def test_nesting_depth_is_bounded():
    deep = "name: " + "[" * 3000 + "]" * 3000 + "\n"
    assert problems_of(deep, "x.yaml") == [
        "x.yaml:1:1: (spec): nested too deeply (expected at most 64 levels)"
    ]
    problems = problems_of(
        VALID.replace("walls", "x") + "x-deep: " + "[" * 80 + "]" * 80 + "\n", "x.yaml"
    )
    assert any("nested too deeply (expected at most 64 levels)" in p for p in problems)


def test_merge_keys_and_aliases_are_expanded():
    text = VALID.replace(
        "    params:\n      lambda2: 100\n      hidden: [16, 16]\n",
        "    params: &opts\n      lambda2: 100\n      hidden: [16, 16]\n"
        "  - name: ours-kl\n    method: options\n    params:\n"
        "      <<: *opts\n      lambda1: 0.001\n",
    )
    spec = parse_spec(text)
    ours, ours_kl = spec.methods[1].params, spec.methods[2].params
    assert (ours_kl.lambda2, ours_kl.hidden, ours_kl.lambda1) == (100.0, (16, 16), 0.001)
    assert ours.lambda1 == 0.0


def test_merge_of_a_scalar_is_refused():
    text = VALID.replace("    params:\n      lambda2", "    params:\n      <<: 3\n      lambda2")
    assert problems_of(text, "x.yaml") == [
        "x.yaml:25:11: methods[1].params: '<<' merges mappings only (expected a mapping)"
    ]
