"""``opt-suite validate``: ok lines, problems on stderr with exit 2, --resolved, no tracebacks."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml
from spec_fakes import TEN_LINES, TEN_MISTAKES, VALID, fake_registry

from opt_suite.cli import main
from opt_suite.spec import load_spec, spec_hash, to_plain


def _bomb(levels: int = 12) -> bytes:
    """Each level lists the previous one 8 times: 8**12 values once aliases are expanded."""
    lines = ["l0: &l0 [1, 1]"]
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 8)}]")
    return ("\n".join(lines) + "\n").encode()


BOMB = _bomb()


@pytest.fixture(autouse=True)
def _fakes():
    with fake_registry():
        yield


@pytest.fixture
def valid(tmp_path):
    path = tmp_path / "valid.yaml"
    path.write_text(VALID)
    return path


def test_ok_line_with_the_hash(valid, capsys):
    assert main(["validate", str(valid)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"ok: grid-test (hash {spec_hash(load_spec(valid))[:12]}): ")
    # The work estimate, then the time estimate (the fake family has neither: each says why).
    first, second = out.splitlines()
    assert first.endswith("no work estimate (NotImplementedError: a spec-test fake)")
    assert second == "  time: no time estimate (NotImplementedError: a spec-test fake)"
    assert err == ""


def test_resolved_prints_the_canonical_yaml(valid, capsys):
    assert main(["validate", str(valid), "--resolved"]) == 0
    out, _ = capsys.readouterr()
    spec = load_spec(valid)
    assert out.startswith(f"# grid-test: resolved from {valid}\n# spec_hash: {spec_hash(spec)}\n")
    assert yaml.safe_load(out) == to_plain(spec)


def test_ten_mistakes_give_ten_lines_and_exit_2(tmp_path, capsys):
    path = tmp_path / "ten.yaml"
    path.write_text(TEN_MISTAKES)
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [line.format(f=path) for line in TEN_LINES]


def test_several_specs_report_each_and_fail_if_one_fails(valid, tmp_path, capsys):
    broken = tmp_path / "broken.yaml"
    broken.write_text(VALID.replace("count: 6", "count: 0"))
    assert main(["validate", str(valid), str(broken)]) == 2
    out, err = capsys.readouterr()
    assert out.startswith("ok: grid-test (hash ")
    assert err == f"{broken}:11:10: tasks.count: out of range (expected >= 1 and <= 10000, got 0)\n"


@pytest.mark.parametrize(
    "name, content",
    [
        ("missing.yaml", None),
        ("folder", "dir"),
        ("empty.yaml", b""),
        ("binary.yaml", bytes(range(256))),
        ("bomb.yaml", BOMB),
        ("python.yaml", b"name: !!python/object/new:os.system [echo hi]\n"),
    ],
)
def test_bad_files_exit_2_without_traceback(tmp_path, capsys, name, content):
    path = tmp_path / name
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert err.startswith(f"{path}:") and err.endswith("\n")


def test_internal_errors_are_reported_not_raised(valid, capsys, monkeypatch):
    def broken(path):
        raise RuntimeError("a bug")

    monkeypatch.setattr("opt_suite.cli.validate.load_sweep", broken)
    assert main(["validate", str(valid)]) == 2
    assert capsys.readouterr().err == (
        f"{valid}: internal error while validating: RuntimeError('a bug')\n"
    )


def test_command_line_never_prints_a_traceback(tmp_path):
    """The installed entry point on hostile input (real registry, a fresh process)."""
    (tmp_path / "deep.yaml").write_text("name: " + "[" * 5000 + "]" * 5000 + "\n")
    (tmp_path / "tab.yaml").write_text("name: a\n\tfamily: b\n")
    (tmp_path / "list.yaml").write_text("- 1\n")
    (tmp_path / "folder").mkdir()
    files = ["deep.yaml", "tab.yaml", "list.yaml", "folder", "missing.yaml"]
    result = subprocess.run(
        [sys.executable, "-m", "opt_suite", "validate", *files],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert "Traceback" not in result.stderr
    assert [line.split(":")[0] for line in result.stderr.splitlines()] == files
