#!/usr/bin/env bash
# Regenerates every generated file of docs/results/gymnasium/ with one command:
#
#   bash docs/results/gymnasium/regenerate.sh [RUNS_DIR]      (default RUNS_DIR: results)
#
# Needs MiniGrid (pip install 'opt-suite[minigrid]'). Runs the bundled specs of the four-rooms
# settings and the gymnasium domains into RUNS_DIR (cells already there are reused, so a rerun of
# finished studies only rewrites the files), then copies their reports here and writes the verdict
# table (collect.py). The MinAtar rows are read from RUNS_DIR/minatar-breakout-controls (its
# lambda1 = 0 variant) and RUNS_DIR/minatar-asterix-controls, which
# docs/results/minatar/regenerate.sh RUNS_DIR makes (until they are there the rows are "pending").
# README.md is written by hand from these files. Measured cost: see README.md and cost.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-results}
mkdir -p "$runs"

# Each spec's wall time beside the machine's load (uptime) at its start and end, appended to
# RUNS_DIR/<spec>.timing (one pair per run): the page's cost table (cost.md, by collect.py) quotes
# them, since a shared machine can double a wall time.
for spec in fourrooms-paper fourrooms-related-controls fourrooms-heldout \
  gymnasium-frozenlake gymnasium-cartpole minigrid-doorkey; do
  echo "start $(date -u +%T) $(uptime)" >> "$runs/$spec.timing"
  /usr/bin/time -a -o "$runs/$spec.timing" -f "time wall_s %e user_s %U sys_s %S" \
    opt-suite run "$spec" --out "$runs/$spec" --workers 2 --quiet
  echo "end $(date -u +%T) $(uptime)" >> "$runs/$spec.timing"
  # options kept per seed and how the learner called them (option_usage.md, into the run folder)
  opt-suite option-usage "$runs/$spec"
done
# The MinAtar rows (need pip install 'opt-suite[minatar]'; GPL-3.0), when wanted:
#   bash docs/results/minatar/regenerate.sh "$runs"

python "$here/collect.py" "$runs"
