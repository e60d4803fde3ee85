#!/usr/bin/env bash
# Runs every fuzz target in turn for its share of time and prints how many inputs
# each executed: `bash fuzz/campaign.sh [SECONDS]` (default 60 per target; the
# parser, which is cheap, gets four shares). Needs `bash fuzz/seed.sh` and
# `RUSTC_BOOTSTRAP=1 cargo fuzz build -O -s none` first; crashes land in
# fuzz/artifacts/TARGET/.
set -uo pipefail
cd "$(dirname "$0")"
share=${1:-60}
bin=target/x86_64-unknown-linux-gnu/release
export EVALSPEC_FUZZ_DIR=${EVALSPEC_FUZZ_DIR:-/dev/shm}
total=0
for target in parse spec expression records report_diff template; do
  seconds=$share
  [ "$target" = parse ] && seconds=$((share * 4))
  mkdir -p "corpus/$target" "artifacts/$target"
  runs=$("$bin/$target" "corpus/$target" -max_total_time="$seconds" -close_fd_mask=3 \
      -print_final_stats=1 -artifact_prefix="artifacts/$target/" 2>&1 |
    tee "artifacts/$target.log" | awk '/stat::number_of_executed_units/ { print $2 }')
  crashes=$(find "artifacts/$target" -type f | wc -l)
  echo "$target: ${runs:-0} executions in ${seconds}s, $crashes crash file(s)"
  total=$((total + ${runs:-0}))
done
echo "total: $total executions"
