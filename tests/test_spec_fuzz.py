"""Property: whatever is done to a valid spec, loading gives a Spec or a SpecError — never a crash.

Edits are structural (delete a key, replace a value with a random one, add an unknown key) and
textual (insert, delete or replace characters or bytes anywhere in the file). Every problem line
must keep the ``file:LINE:COL: key.path: message`` shape.
"""

from __future__ import annotations

import re

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spec_fakes import VALID, fake_registry

from opt_suite.spec import Spec, SpecError, load_spec, parse_spec

# The key path has no spaces unless it quotes an odd key: ['a b'].
LINE = re.compile(
    r"^(?P<file>(?:.*/)?fuzz\.yaml):(?P<line>\d+):(?P<col>\d+): (?P<path>\S+|.*\[.*\].*?): \S"
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["grid", "options", "primitives", "random", "small", "1e-3", "~", "[", "{"]),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


def check_outcome(load) -> None:
    with fake_registry():
        try:
            result = load()
        except SpecError as exc:
            assert exc.problems, "a SpecError always carries its problems"
            for line in exc.problems:
                match = LINE.match(line)
                assert match and "\n" not in line, f"malformed problem line: {line!r}"
                assert int(match["line"]) >= 1 and int(match["col"]) >= 1
            return
    assert isinstance(result, Spec)


def edit(data: st.DataObject, node):
    """Apply one random edit somewhere inside ``node`` (a plain dict/list), in place or returned."""
    if isinstance(node, dict) and node and data.draw(st.booleans(), label="descend"):
        key = data.draw(st.sampled_from(sorted(node, key=str)), label="key")
        node[key] = edit(data, node[key])
        return node
    if isinstance(node, list) and node and data.draw(st.booleans(), label="descend"):
        index = data.draw(st.integers(0, len(node) - 1), label="index")
        node[index] = edit(data, node[index])
        return node
    action = data.draw(st.sampled_from(["replace", "delete", "insert"]), label="action")
    if action == "delete" and isinstance(node, dict) and node:
        del node[data.draw(st.sampled_from(sorted(node, key=str)), label="deleted")]
        return node
    if action == "insert" and isinstance(node, dict):
        node[data.draw(st.text(max_size=8), label="new key")] = data.draw(values, label="new value")
        return node
    if action == "insert" and isinstance(node, list):
        node.append(data.draw(values, label="appended"))
        return node
    return data.draw(values, label="replacement")


@SETTINGS
@given(st.data())
def test_structural_edits_never_crash(data):
    plain = yaml.safe_load(VALID)
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        plain = edit(data, plain)
    text = yaml.safe_dump(plain, allow_unicode=True)
    check_outcome(lambda: parse_spec(text, "fuzz.yaml"))


@SETTINGS
@given(st.data())
def test_text_mutations_never_crash(data):
    text = VALID
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        at = data.draw(st.integers(0, len(text)), label="position")
        span = data.draw(st.integers(0, 5), label="span")
        insert = data.draw(
            st.text(alphabet=st.sampled_from(list(":-[]{}&*!|>'\"#%@ \n\tax0.,?~")), max_size=4)
            | st.text(max_size=3),
            label="insert",
        )
        text = text[:at] + insert + text[at + span :]
    check_outcome(lambda: parse_spec(text, "fuzz.yaml"))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.data())
def test_byte_mutations_never_crash(tmp_path_factory, data):
    raw = bytearray(VALID.encode())
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        at = data.draw(st.integers(0, len(raw) - 1), label="position")
        raw[at] = data.draw(st.integers(0, 255), label="byte")
    path = tmp_path_factory.mktemp("fuzz") / "fuzz.yaml"
    path.write_bytes(bytes(raw))
    check_outcome(lambda: load_spec(path))
