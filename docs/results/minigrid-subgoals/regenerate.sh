#!/usr/bin/env bash
# Regenerates every generated file of docs/results/minigrid-subgoals/ with one command:
#
#   bash docs/results/minigrid-subgoals/regenerate.sh [RUNS_DIR]      (default RUNS_DIR: results)
#
# Runs the bundled spec minigrid-subgoals into RUNS_DIR/minigrid-subgoals (cells already there are
# reused, so a rerun of the finished study only rewrites the files), counts how the learner used
# the options (opt-suite option-usage), then copies its report and option_usage.md/.csv here and
# writes the page's data and comparisons.md/.json (collect.py). README.md is written by hand
# from these files. Measured cost: provenance.json (wall time, workers, commit, command, load
# around the run). Needs MiniGrid: pip install 'opt-suite[minigrid]'.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-results}
mkdir -p "$runs"

# The machine's load (uptime) at the run's start and end and the run's wall and CPU seconds
# (/usr/bin/time), appended to RUNS_DIR/<spec>.timing: collect.py puts the last run's into
# provenance.json, since a shared machine can double a wall time.
spec=minigrid-subgoals
echo "start $(date -u +%T) $(uptime)" >> "$runs/$spec.timing"
/usr/bin/time -a -o "$runs/$spec.timing" -f "time wall_s %e user_s %U sys_s %S" \
  opt-suite run "$spec" --out "$runs/$spec" --workers 2 --quiet
echo "end $(date -u +%T) $(uptime)" >> "$runs/$spec.timing"
# how the learner called each option, per seed and run (option_usage.md/.csv, into the run
# folder): read from the counts the evaluation cells recorded, seconds
opt-suite option-usage "$runs/$spec"

python "$here/collect.py" "$runs"
