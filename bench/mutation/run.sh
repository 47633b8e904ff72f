#!/usr/bin/env bash
# Mutation scores (StrykerJS, stryker.config.mjs), by hand like every benchmark: one Stryker run per
# target, one JSON line per target with its score and the surviving mutants.
#   npm run bench:mutation                            # every target below (hours on 2 cores)
#   npm run bench:mutation -- src/dns/server/table.ts # one file or glob
# Score = (killed + timeout) / (all mutants but compile errors), Stryker's "total" score.
set -euo pipefail
cd "$(dirname "$0")/../.."
npx tsc -p tsconfig.bench.json
TARGETS=(
  "src/dns/server/table.ts"
  "src/pipeline/last-good.ts"
  "src/pipeline/output-guard.ts"
  "src/pipeline/file-sink.ts"
  "src/xds/server/authz.ts"
  "src/xds/server/plan.ts"
  "src/xds/server/subscription.ts"
  "src/xds/server/session.ts"
  "src/envoy/render/**/*.ts"
  "src/model/**/*.ts"
)
[ "$#" -gt 0 ] && TARGETS=("$@")
for target in "${TARGETS[@]}"; do
  report="reports/mutation/$(echo "$target" | tr '/*' '__').json"
  start=$(date +%s)
  # The model and the Envoy renderer are judged by their own suites (vitest.mutation.config.ts).
  case "$target" in
    src/model/*) suites=model ;;
    src/envoy/*) suites=envoy ;;
    *) suites= ;;
  esac
  OOOI_MUTATION_SUITES=$suites npx stryker run --mutate "$target" --reporters json,progress >&2
  cp reports/mutation/mutation.json "$report"
  node dist-bench/bench/mutation/summary.js "$report" "$target" "$(( $(date +%s) - start ))"
done
