"""What a spec may import: only modules of installed distributions, refused before any import.

Naming a module runs its import. A spec names modules in a gymnasium id (``"module:Id"``), in the
``scripted`` source's ``function: "module:function"`` and, through entry points, in a registered
name. Hostile specs named ``unittest.__main__`` (ran unittest at ``validate``), ``venv.__main__``
(made a virtual environment), ``antigravity`` (opened a browser), a ``.py`` beside the spec (run
under ``python -m opt_suite``, whose first ``sys.path`` entry is the current folder), a forged
``*.dist-info`` beside it (passed the installed check), and planners ``os:system``,
``builtins:exec`` and ``builtins:input`` (blocked a run on stdin). Each is a located exit-2 line,
and nothing was imported (opt_suite/installed.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from installed_plugin import install_module
from runner_support import REPO
from spec_fakes import where

from opt_suite.cli import main

SPEC = """\
name: imports
family:
  name: gymnasium
  params: {{id: "{id}"}}
tasks: {{count: 2, train: 1, test: 1}}
methods: [{{name: primitives, method: primitives}}]
evaluation: {{learner: tf_agents, frames: 1000}}
"""

SCRIPTED = """\
name: scripted-imports
family: {{name: gymnasium, params: {{id: MiniGrid-Empty-Random-6x6-v0}}}}
tasks: {{count: 3, train: 2, test: 1, seed: 0}}
demonstrations:
  source: scripted
  params: {{function: "{function}"}}
methods:
  - {{name: learned, method: {method}}}
evaluation: {{learner: tf_agents, episodes: 10, seeds: 1}}
"""

# Standard-library modules that nothing in `validate` imports, so that finding one in
# sys.modules afterwards can only mean the spec imported it (harmless stand-ins for antigravity).
UNUSED_STDLIB = ("this", "colorsys", "tabnanny", "venv", "lib2to3")


def _scripted(tmp_path, function, method="offline_options", name="spec.yaml"):
    spec = tmp_path / name
    spec.write_text(SCRIPTED.format(function=function, method=method))
    return spec


def _validate_subprocess(cwd, *specs):
    return subprocess.run(
        [sys.executable, "-m", "opt_suite", "validate", *specs],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    ("env_id", "why"),
    [
        ("unittest.__main__:X-v0", "a __main__ module runs a program"),
        ("venv.__main__:X-v0", "a __main__ module runs a program"),
        ("os:X-v0", "'os' is the standard library"),
        ("this:X-v0", "'this' is the standard library"),
    ],
)
def test_a_module_outside_installed_packages_is_a_located_error(
    tmp_path, capsys, monkeypatch, env_id, why
):
    monkeypatch.chdir(tmp_path)  # venv.__main__ would create its environment here
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(id=env_id))
    code = main(["validate", str(spec)])
    err = capsys.readouterr().err
    assert code == 2 and f"{spec}:4:" in err and why in err, err
    assert "family.params.id" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml"]  # nothing created


def test_standard_library_modules_are_refused_before_they_are_imported(tmp_path):
    """One process validates every spec; afterwards none of the named modules is in sys.modules."""
    specs = []
    for i, module in enumerate(UNUSED_STDLIB):
        specs.append(_scripted(tmp_path, f"{module}:main", name=f"scripted{i}.yaml"))
        (tmp_path / f"id{i}.yaml").write_text(SPEC.format(id=f"{module}:X-v0"))
        specs.append(tmp_path / f"id{i}.yaml")
    specs.append(_scripted(tmp_path, "venv.__main__:main", name="main.yaml"))
    code = (
        "import json, sys\n"
        "from opt_suite.cli import main\n"
        f"before = [m for m in {UNUSED_STDLIB!r} if m in sys.modules]\n"
        f"code = main(['validate', *{[str(s) for s in specs]!r}])\n"
        f"after = [m for m in {UNUSED_STDLIB!r} if m in sys.modules]\n"
        "print(json.dumps([code, before, after]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    status, before, after = json.loads(result.stdout.splitlines()[-1])
    assert before == [], before  # else their absence afterwards would prove nothing
    assert status == 2 and after == [], (after, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == len(specs), result.stderr  # one located line per spec
    assert all("is not imported" in line or "cannot import module" in line for line in lines)
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix != ".yaml") == []


def test_a_file_beside_the_spec_is_not_run_even_under_an_installed_name(tmp_path):
    """One subprocess: ``python -m opt_suite`` in the spec's folder puts that folder on sys.path."""
    marker = tmp_path / "ran.txt"
    code = f"open({str(marker)!r}, 'w').write('ran')\ndef plan(env):\n    return [0]\n"
    (tmp_path / "beside.py").write_text(code)
    (tmp_path / "minigrid.py").write_text(code)  # shadows the installed minigrid package
    names = []
    for i, env_id in enumerate(("beside:X-v0", "minigrid:MiniGrid-Empty-5x5-v0")):
        (tmp_path / f"id{i}.yaml").write_text(SPEC.format(id=env_id))
        names.append(f"id{i}.yaml")
    names.append(_scripted(tmp_path, "beside:plan", name="scripted.yaml").name)
    result = _validate_subprocess(tmp_path, *names)
    assert result.returncode == 2, result.stderr
    assert not marker.exists(), "a spec ran a file from its folder"
    err = result.stderr
    assert "id0.yaml:4:" in err and "id1.yaml:4:" in err, err
    at = where(_read(tmp_path, "scripted.yaml"), '"beside:plan"')
    assert f"scripted.yaml:{at}: demonstrations.params.function" in err
    assert "would be imported from" in err and "minigrid.py" in err
    assert "'beside' is not a package of an installed distribution" in err


def _read(folder, name):
    return (folder / name).read_text()


def test_a_forged_dist_info_beside_the_spec_installs_nothing(tmp_path):
    """Metadata naming the file beside it: an id, a planner and a method name are all refused."""
    marker = tmp_path / "ran.txt"
    source = f"open({str(marker)!r}, 'w').write('ran')\ndef plan(env):\n    return [0]\n"
    install_module(tmp_path, "forged", source)  # RECORD, top_level.txt: a complete forgery
    (tmp_path / "forged-0.1.dist-info" / "entry_points.txt").write_text(
        "[opt_suite.methods]\nforged = forged:Forged\n"
    )
    (tmp_path / "id.yaml").write_text(SPEC.format(id="forged:X-v0"))
    _scripted(tmp_path, "forged:plan", name="scripted.yaml")
    _scripted(
        tmp_path,
        "opt_suite.demonstrations.minigrid_planner:shortest_path",
        method="forged",
        name="method.yaml",
    )
    result = _validate_subprocess(tmp_path, "id.yaml", "scripted.yaml", "method.yaml")
    err = result.stderr
    assert result.returncode == 2 and not marker.exists(), err
    assert err.count("'forged' is not a package of an installed distribution") == 2, err
    assert "id.yaml:4:" in err and "scripted.yaml:6:" in err
    assert "method.yaml:8:" in err and "unknown method 'forged'" in err
    assert "Traceback" not in err
    listed = subprocess.run(
        [sys.executable, "-m", "opt_suite", "list"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert listed.returncode == 0 and "forged" not in listed.stdout
    assert not marker.exists()


def test_an_installed_plugins_module_shadowed_beside_the_spec_is_not_loaded(tmp_path):
    """A real plugin registers a method; a file of its module's name in the cwd is not run."""
    site = install_module(tmp_path / "site-packages", "shadowed", "class Method:\n    pass\n")
    (site / "shadowed-0.1.dist-info" / "entry_points.txt").write_text(
        "[opt_suite.methods]\nshadowed = shadowed:Method\n"
    )
    work = tmp_path / "work"
    work.mkdir()
    marker = work / "ran.txt"
    (work / "shadowed.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    spec = _scripted(work, "opt_suite.demonstrations.minigrid_planner:shortest_path", "shadowed")
    result = subprocess.run(
        [sys.executable, "-m", "opt_suite", "validate", spec.name],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=work,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])},
    )
    err = result.stderr
    assert result.returncode == 2 and not marker.exists(), err
    assert "spec.yaml:8:" in err and "method 'shadowed' is registered as shadowed:Method" in err
    assert f"would be imported from {work / 'shadowed.py'}" in err and "Traceback" not in err


PLUGIN = """\
from os import system
from shutil import rmtree


def plan(env):
    return [2]


class Planner:
    def __call__(self, env):
        return [2]
"""


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """A planner plugin installed into a site-packages folder on sys.path."""
    site = install_module(tmp_path / "site-packages", "planner_plugin", PLUGIN)
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop("planner_plugin", None)


@pytest.mark.parametrize(
    ("function", "words"),
    [
        ("os:system", "'os' is the standard library"),
        ("builtins:exec", "'builtins' is the standard library"),
        ("builtins:input", "'builtins' is the standard library"),
        ("planner_plugin:system", "is a builtin_function_or_method, not a function"),
        ("planner_plugin:rmtree", "is a function of 'shutil', not one defined in"),
        ("planner_plugin:Planner", "is a type, not a function"),
        ("opt_suite.cli:main", "is not a planner of opt_suite's"),
        ("planner_plugin:plan.__call__", "expected 'module:function' with a function name"),
    ],
)
def test_a_planner_must_be_a_function_of_a_plugin(tmp_path, capsys, plugin, function, words):
    spec = _scripted(tmp_path, function)
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    at = where(spec.read_text(), f'"{function}"')
    assert f"{spec}:{at}: demonstrations.params.function: " in err and words in err, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_run_refuses_a_planner_before_anything_runs(tmp_path, capsys):
    """``builtins:input`` blocked a run on stdin; ``run`` now stops at the spec, writing nothing."""
    spec = _scripted(tmp_path, "builtins:input")
    out = tmp_path / "out"
    assert main(["run", str(spec), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:6:" in err and "'builtins' is the standard library" in err, err
    assert not out.exists()


def test_a_function_of_an_installed_plugin_is_a_planner(tmp_path, capsys, plugin):
    spec = _scripted(tmp_path, "planner_plugin:plan")
    assert main(["validate", str(spec)]) == 0, capsys.readouterr().err


def test_validate_says_which_installed_module_an_id_imported(tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(id="gymnasium.envs.classic_control:CartPole-v1"))
    assert main(["validate", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "imported module 'gymnasium.envs.classic_control'" in out
    assert "naming a module runs its import" in out
