#!/usr/bin/env bash
# Runs one benchmark command alternately in two checkouts (a baseline and the candidate), ROUNDS
# times each, so both see the same machine load; prints each run's JSON line tagged with its side.
#   bench/compare-commits.sh BASELINE_DIR CANDIDATE_DIR ROUNDS -- node dist-bench/bench/xds/run.js
# Each checkout must have its bench built (npx tsc -p tsconfig.bench.json) and node_modules.
set -euo pipefail
base="$1" cand="$2" rounds="$3"
shift 4
for ((i = 1; i <= rounds; i++)); do
  for side in base cand; do
    dir=$base
    [ "$side" = cand ] && dir=$cand
    (cd "$dir" && "$@") | sed "s/^/{\"side\":\"$side\",\"round\":$i,\"run\":/; s/\$/}/"
  done
done
