#!/usr/bin/env bash
# grail `check --each` against regorus on the Rego translation, over the
# generated corpus of upstream-shaped bindings (generate.py, beside this).
# Agreement first (every FAIL and UNKNOWN verdict of the translated rules,
# file by file), then throughput and peak memory of each side under
# `/usr/bin/time -v`, one after the other, with the load before and after.
#
#   benches/upstream-corpus/run.sh [OUT] [COUNT]
#
# OUT (default /tmp/grail-upstream-corpus) is written, never committed.
# Needs the release builds: `cargo build --release --bin grail --example bench_stream`.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=${1:-/tmp/grail-upstream-corpus}
count=${2:-10000}
target=${CARGO_TARGET_DIR:-$root/target}
grail=${GRAIL_BIN:-$target/release/grail}
stream=${BENCH_STREAM:-$target/release/examples/bench_stream}

rm -rf "$out"
python3 benches/upstream-corpus/generate.py "$out" "$count"
cd "$out"
files=(bindings/*.json)
echo "corpus: ${#files[@]} files, $(cat "${files[@]}" | wc -c) bytes"

echo "== agreement (bench_stream agree-each)"
set +e
"$grail" check --each --format json --probe-evidence-root . "${files[@]}" > grail.jsonl
status=$?
set -e
[[ $status -le 1 ]] || { echo "grail check --each exited $status" >&2; exit 1; }
"$stream" agree-each grail.jsonl "${files[@]}"

timed() {
  local label=$1; shift
  echo "-- $label: $*" | cut -c1-160
  /usr/bin/time -v "$@" > /dev/null 2> time.txt || true
  grep -E "Elapsed|User time|System time|Maximum resident" time.txt
}
echo "== load before: $(cut -d' ' -f1-3 /proc/loadavg)"
timed "grail, --each, 2 threads" "$grail" check --each --format json --probe-evidence-root . "${files[@]}"
timed "grail, --each, 1 thread" env RAYON_NUM_THREADS=1 "$grail" check --each --format json --probe-evidence-root . "${files[@]}"
timed "regorus, one thread" "$stream" rego-each "${files[@]}"
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
