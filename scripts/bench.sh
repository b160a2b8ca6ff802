#!/usr/bin/env bash
# Benchmarks: builds the release binary, the bench examples and the benches,
# then runs them. Prints the machine, divan's detail for grail, and the
# side-by-side tables (median, p95, ratio to the peer: regorus, then
# cedar-policy, then upstream's node checker) that BENCHMARKS.md records.
# The upstream peer needs upstream's checker outside the repository
# (GRAIL_UPSTREAM_CHECKER, default /tmp/upstream/check-security-binding.mjs)
# and node; without them that step says it is skipped.
#
#   scripts/bench.sh            # everything (about 10-20 minutes on 2 busy cores)
#   scripts/bench.sh --quick    # fewer samples and runs
#   scripts/bench.sh --table    # the side-by-side tables only
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

quick=""
table_only=""
for arg in "$@"; do
  case "$arg" in
    --quick) quick="--quick" ;;
    --table) table_only=1 ;;
    *) echo "usage: scripts/bench.sh [--quick] [--table]" >&2; exit 2 ;;
  esac
done

echo "== machine"
echo "nproc: $(nproc)"
free -h | sed -n '1,2p'
grep -m1 'model name' /proc/cpuinfo || true
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
rustc --version

echo "== build (release): grail, the bench examples, the benches"
cargo build --release --quiet --bin grail --examples
cargo bench --no-run --quiet 2>/dev/null || cargo bench --no-run

if [[ -z "$table_only" ]]; then
  echo "== divan: grail's own benches (cargo bench --bench grail)"
  if [[ -n "$quick" ]]; then
    cargo bench --quiet --bench grail -- --sample-count 10
  else
    cargo bench --quiet --bench grail
  fi
fi

echo "== cold process, CPU time and wall time (perf stat -r 50; task-clock is less disturbed by other load)"
if command -v perf >/dev/null && perf stat -r 1 true >/dev/null 2>&1; then
  for cmd in "target/release/grail check --format json benches/data/binding-3k.json" \
             "target/release/examples/bench_rego_cold benches/rego/guardrails.rego benches/data/binding-3k.json"; do
    echo "-- $cmd"
    # shellcheck disable=SC2086
    perf stat -r 50 $cmd 2>&1 >/dev/null | grep -E "task-clock|elapsed" || true
  done
else
  echo "perf is not available; the table's cold rows (wall time of spawned processes) stand alone"
fi

echo "== side by side (cargo bench --bench side_by_side): agreement first, then the table"
cargo bench --quiet --bench side_by_side -- $quick

echo "== Cedar peer (cargo bench --bench cedar_peer): agreement first, then the table"
cargo bench --quiet --bench cedar_peer -- $quick

echo "== upstream-shaped corpus (benches/upstream-corpus/run.sh): agreement on every verdict of the translated rules, then grail check --each against regorus"
cargo build --release --quiet --example bench_stream
benches/upstream-corpus/run.sh

echo "== upstream peer (cargo bench --bench side_by_side -- --upstream): exit statuses compared first, then the table"
cargo bench --quiet --bench side_by_side -- --upstream $quick
