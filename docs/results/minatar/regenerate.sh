#!/usr/bin/env bash
# Regenerates every generated file of docs/results/minatar/ with one command:
#
#   bash docs/results/minatar/regenerate.sh [RUNS_DIR]      (default RUNS_DIR: results)
#
# Needs MinAtar (pip install 'opt-suite[minatar]'; GPL-3.0). Runs the minatar-breakout spec (a
# lambda1 sweep: cells already in RUNS_DIR are reused, so a rerun of a finished study only rewrites
# the files), draws the learned options' strips, and copies everything here (collect.py).
# README.md is written by hand from these files. Measured cost: see README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-results}
mkdir -p "$runs"

opt-suite run minatar-breakout --out "$runs/minatar-breakout" --workers 2 --quiet

# The strips of the run's latest variant (lambda1 = 0.1: show-options reads the latest run), and
# of the untrained options, on test task 0.
rm -rf "$here/options"
opt-suite show-options "$runs/minatar-breakout" --method offline-options --out "$here/options"
opt-suite show-options "$runs/minatar-breakout" --method random-options --out "$here/options"

python "$here/collect.py" "$runs"
