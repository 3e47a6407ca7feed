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

opt-suite run fourrooms-field --out "$runs/fourrooms-field" --workers 2 --quiet
opt-suite run minatar-field --out "$runs/minatar-field" --workers 2 --quiet

python "$here/collect.py" "$runs"
