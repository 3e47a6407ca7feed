"""``validate`` warns about a method entry whose discovery takes far more steps than the others'.

Issue 38 item 3: a default sized for the authors' tasks (LOVE's 20,000 full-batch steps) should
not surprise a user on a small spec. The warning is a line on stderr; the status stays 0.
"""

from __future__ import annotations

from opt_suite.cli import main
from opt_suite.runner.estimate import costly_discoveries
from opt_suite.runner.protocol import resolve_components
from opt_suite.spec import find_spec, load_spec

COSTLY = """\
name: costly
extends: fourrooms-quick
methods:
  - name: primitives
    method: primitives
  - name: offline-options
    method: offline_options
  - name: compile
    method: compile
  - name: love
    method: love
    params:
      iterations: {iterations}
"""


def test_a_far_costlier_discovery_is_a_warning_naming_the_entry_and_param(tmp_path, capsys):
    # offline_options declares at most 4 x 200 x 10 = 8000 steps, CompILE 100: the median of
    # LOVE's others is 4050, and 20 x 4050 = 81,000 steps is where the warning starts.
    path = tmp_path / "costly.yaml"
    path.write_text(COSTLY.format(iterations=100_000))
    assert main(["validate", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("ok: costly")
    (line,) = err.strip().splitlines()
    assert line.startswith("warning: costly: method 'love' (love): discovery takes up to 100000")
    assert "25x the median" in line and "lower params.iterations" in line
    path.write_text(COSTLY.format(iterations=80_000))
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().err == ""


def test_the_bundled_field_spec_draws_no_warning():
    spec = load_spec(find_spec("fourrooms-field"))
    assert costly_discoveries(spec, resolve_components(spec).methods) == []
