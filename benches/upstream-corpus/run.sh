#!/usr/bin/env bash
# grail `check --each` against regorus on the Rego translation, over the
# generated corpus of upstream-shaped bindings (generate.py, beside this).
# Two comparisons, each with its agreement first (every FAIL and UNKNOWN
# verdict of the translated rules, file by file):
# - like work: grail on the translated rules alone (`--policy LIB`, the
#   shipped library less the rules the translation does not report, written
#   by translated_only.py), against regorus on the translation;
# - the whole library against the translation (what a user runs).
# Then CPU (user + system) and peak memory of each under `/usr/bin/time -v`,
# the three commands alternated ROUNDS times (default 3), with `uptime`
# before and after. A `--policy` folder is compiled, not read precompiled as
# the shipped library is: the compile is measured once on its own (`perf
# stat`, no cache, then a warm cache) and the timed runs read it from a
# cache of their own (`GRAIL_CACHE_DIR=OUT/cache`).
#
#   benches/upstream-corpus/run.sh [OUT] [COUNT] [ROUNDS]
#
# OUT (default /tmp/grail-upstream-corpus) is written, never committed.
# Needs the release builds: `cargo build --release --bin grail --example bench_stream`.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=${1:-/tmp/grail-upstream-corpus}
count=${2:-10000}
rounds=${3:-3}
target=${CARGO_TARGET_DIR:-$root/target}
grail=${GRAIL_BIN:-$target/release/grail}
stream=${BENCH_STREAM:-$target/release/examples/bench_stream}

rm -rf "$out"
python3 benches/upstream-corpus/generate.py "$out" "$count"
cd "$out"
files=(bindings/*.json)
echo "corpus: ${#files[@]} files, $(cat "${files[@]}" | wc -c) bytes"

lib=$out/translated-only
python3 "$root/benches/upstream-corpus/translated_only.py" "$grail" "$lib"
export GRAIL_CACHE_DIR=$out/cache

echo "== agreement, like work: grail --policy translated-only (bench_stream agree-each)"
set +e
"$grail" check --each --format json --probe-evidence-root . --policy "$lib" "${files[@]}" > like.jsonl
status=$?
set -e
[[ $status -le 1 ]] || { echo "grail check --each --policy exited $status" >&2; exit 1; }
"$stream" agree-each like.jsonl "${files[@]}"

echo "== agreement, whole library (bench_stream agree-each)"
set +e
"$grail" check --each --format json --probe-evidence-root . "${files[@]}" > grail.jsonl
status=$?
set -e
[[ $status -le 1 ]] || { echo "grail check --each exited $status" >&2; exit 1; }
"$stream" agree-each grail.jsonl "${files[@]}"

echo "== compiling the translated-only folder, one file checked (perf stat -r 10, CPU)"
one=${files[0]}
cpu() {
  echo "-- $1"; shift
  { perf stat -r 10 -e task-clock "$@" 2>&1 >/dev/null || true; } | grep -E "task-clock|elapsed"
}
cpu "shipped library (precompiled, embedded)" "$grail" check --format json --probe-evidence-root . "$one"
cpu "--policy, compiled every time (--no-cache)" "$grail" check --no-cache --format json --probe-evidence-root . --policy "$lib" "$one"
cpu "--policy, read from the warm cache" "$grail" check --format json --probe-evidence-root . --policy "$lib" "$one"

timed() {
  local label=$1; shift
  /usr/bin/time -v "$@" > /dev/null 2> time.txt || true
  awk -v label="$label" -F': ' '
    /User time/ {u=$2} /System time/ {s=$2} /Elapsed/ {w=$2} /Maximum resident/ {m=$2}
    END {printf "  %-44s cpu %6.2f s (user %.2f + sys %.2f)  wall %s  max RSS %.1f MB\n", label, u+s, u, s, w, m/1024}' time.txt
}
echo "== timed, alternated $rounds times; load before: $(uptime)"
for round in $(seq 1 "$rounds"); do
  echo "-- round $round"
  timed "grail, translated rules only, 2 threads" "$grail" check --each --format json --probe-evidence-root . --policy "$lib" "${files[@]}"
  timed "grail, translated rules only, 1 thread" env RAYON_NUM_THREADS=1 "$grail" check --each --format json --probe-evidence-root . --policy "$lib" "${files[@]}"
  timed "grail, whole library, 2 threads" "$grail" check --each --format json --probe-evidence-root . "${files[@]}"
  timed "regorus, the translation, 1 thread" "$stream" rego-each "${files[@]}"
done
echo "== load after: $(uptime)"
