#!/usr/bin/env bash
# Regenerates every generated file of docs/results/minatar/ with one command:
#
#   bash docs/results/minatar/regenerate.sh [RUNS_DIR]      (default RUNS_DIR: results)
#
# Needs MinAtar (pip install 'opt-suite[minatar]'; GPL-3.0). Runs minatar-breakout-controls (a
# lambda1 sweep) and minatar-asterix-controls (cells already in a run directory are reused, so a
# rerun of a finished study only rewrites the files), draws every variant's learned options and
# counts how the learner used them, and copies everything here (collect.py). README.md is written
# by hand from these files. Measured cost: see README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-results}
mkdir -p "$runs"

# Each run's wall and CPU time beside the machine's load at its start and end, appended to
# RUNS_DIR/<spec>.timing (the gymnasium page's cost table quotes them).
for spec in minatar-asterix-controls minatar-breakout-controls; do
  echo "start $(date -u +%T) $(uptime)" >> "$runs/$spec.timing"
  /usr/bin/time -a -o "$runs/$spec.timing" -f "time wall_s %e user_s %U sys_s %S" \
    opt-suite run "$spec" --out "$runs/$spec" --workers 2 --quiet
  echo "end $(date -u +%T) $(uptime)" >> "$runs/$spec.timing"
done

# Every variant's kept options, drawn on test task 0 of seed 0 (strips of frames from a state
# inside a demonstration), and the learner's use of every option set (share of decisions and of
# frames per option over learning, from the counts each evaluation cell recorded).
for game in breakout asterix; do
  run="$runs/minatar-$game-controls"
  rm -rf "${here:?}/$game"
  mkdir -p "$here/$game"
  if [[ -f "$run/sweep.json" ]]; then
    variants=$(python -c 'import json, sys
for v in json.load(open(sys.argv[1]))["variants"]:
    print(v["name"], v["spec_hash"][:12])' "$run/sweep.json")
  else
    variants="the-run $(python -c 'import json, sys
print(json.load(open(sys.argv[1]))["spec"]["hash"][:12])' "$run/leaderboard.json")"
  fi
  while read -r name hash; do
    for method in offline-options offline-options-keep-3 offline-options-likelihood-only \
      bc-option-never bc-option-every-step random-options; do
      opt-suite show-options "$run" --spec "$hash" --method "$method" \
        --out "$here/$game/options/$name"
    done
  done <<< "$variants"
  opt-suite option-usage "$run"
done

python "$here/collect.py" "$runs"
