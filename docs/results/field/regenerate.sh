#!/usr/bin/env bash
# Regenerates every generated file of docs/results/field/ with one command:
#
#   bash docs/results/field/regenerate.sh [RUNS_DIR]      (default RUNS_DIR: results)
#
# Needs MinAtar for minatar-field (pip install 'opt-suite[minatar]'; GPL-3.0). Runs the two field
# specs (cells already in RUNS_DIR are reused, so a rerun of finished studies only rewrites the
# reports), then copies their leaderboards and tabulates the verdict per method (collect.py).
# README.md is written by hand from those files. Measured cost: see README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-results}
mkdir -p "$runs"

# minatar-field is minatar-breakout-controls plus the field's methods, on the same test tasks
# (drawn per seed): started in a copy of that run (docs/results/minatar/regenerate.sh makes it), it
# reuses the parent's cells and computes only the field's. Each run's wall and CPU time and the
# load around it go to RUNS_DIR/<spec>.timing.
if [[ -d "$runs/minatar-breakout-controls" && ! -e "$runs/minatar-field" ]]; then
  cp -r "$runs/minatar-breakout-controls" "$runs/minatar-field"
fi
for spec in fourrooms-field minatar-field; do
  echo "start $(date -u +%T) $(uptime)" >> "$runs/$spec.timing"
  /usr/bin/time -a -o "$runs/$spec.timing" -f "time wall_s %e user_s %U sys_s %S" \
    opt-suite run "$spec" --out "$runs/$spec" --workers 2 --quiet
  echo "end $(date -u +%T) $(uptime)" >> "$runs/$spec.timing"
done

python "$here/collect.py" "$runs"
