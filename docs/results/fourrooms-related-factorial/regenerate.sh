#!/usr/bin/env bash
# Regenerates every generated file of docs/results/fourrooms-related-factorial/ with one command:
#
#   bash docs/results/fourrooms-related-factorial/regenerate.sh [RUNS_DIR]   (default: results)
#
# Runs the bundled sweep spec fourrooms-related-factorial (3 variants of bc-option-length's
# termination_probability; the other entries' cells are shared by the variants) into
# RUNS_DIR/fourrooms-related-factorial (cells already there are reused, so a rerun of the finished
# study only rewrites the files), then copies every variant's report here and writes
# comparisons.md/.json (collect.py). README.md is written by hand from these files.
# Measured cost: provenance.json (wall time, workers, commit, command, load around the run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-results}
mkdir -p "$runs"

# The machine's load (uptime) at the run's start and end and the run's wall and CPU seconds
# (/usr/bin/time), appended to RUNS_DIR/<spec>.timing: collect.py puts the last run's into
# provenance.json, since a shared machine can double a wall time.
spec=fourrooms-related-factorial
echo "start $(date -u +%T) $(uptime)" >> "$runs/$spec.timing"
/usr/bin/time -a -o "$runs/$spec.timing" -f "time wall_s %e user_s %U sys_s %S" \
  opt-suite run "$spec" --out "$runs/$spec" --workers 2 --quiet
echo "end $(date -u +%T) $(uptime)" >> "$runs/$spec.timing"

python "$here/collect.py" "$runs"
