#!/usr/bin/env bash
# Throughput side by side, one run (issue 22): for each data set (the
# generated bindings, and the examples mutated), the FAIL/UNKNOWN agreement
# of grail and the Rego translation, then CPU time and peak memory of
#   - grail in process (`bench_stream grail`), regorus in process (`bench_stream rego`),
#   - `grail check --each --format json` over the same bindings on disk,
# and grail's instructions per file and per byte on disk (callgrind, 200
# files minus 1, one thread). Generating a binding is inside the in-process
# figures of both tools.
#
#   scripts/throughput.sh [COUNT]     # 10,000 by default
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-10000}"
cargo build --release --quiet --bin grail --example bench_stream
bin=target/release/grail
stream=target/release/examples/bench_stream
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); nproc: $(nproc)"
measure() { # label, command...
  local label="$1"; shift
  /usr/bin/time -f "$label: %U s user, %S s system, %e s wall, %M KB peak" "$@" > "$work/out" 2> "$work/time" || true
  tail -1 "$work/time"
}
for set in generated examples; do
  export GRAIL_BENCH_SET="$set"
  echo "== $set"
  "$stream" agree "$count"
  "$stream" write "$work/$set" "$count"
  measure "grail in process" "$stream" grail "$count"
  head -1 "$work/out"
  measure "regorus in process" "$stream" rego "$count"
  measure "grail check --each, 2 threads" "$bin" check --each --format json "$work/$set"/*.json
  RAYON_NUM_THREADS=1 measure "grail check --each, 1 thread" "$bin" check --each --format json "$work/$set"/*.json
  if command -v valgrind >/dev/null; then
    files=("$work/$set"/*.json)
    one=$(RAYON_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" check --each --format json "${files[0]}" 2>&1 >/dev/null | sed -n 's/.*Collected : //p' || true)
    many=$(RAYON_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" check --each --format json "${files[@]:0:200}" 2>&1 >/dev/null | sed -n 's/.*Collected : //p' || true)
    bytes=$(cat "${files[@]:1:199}" | wc -c)
    echo "callgrind: $(( (many - one) / 199 )) instructions per file, $(( (many - one) / bytes )) per byte (files 2-200: $bytes bytes)"
  fi
done
