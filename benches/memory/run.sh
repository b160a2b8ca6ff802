#!/bin/sh
# Peak memory and wall time of `grail check` on each case `generate.py` wrote.
#   benches/memory/run.sh GRAIL OUT [CASE...]
# Prints one line per case: its name, the exit status, the peak resident set
# size ("Maximum resident set size" of /usr/bin/time -v) and the wall time.
set -u
grail=$1
out=$2
shift 2
cases=${*:-$(ls "$out")}
for case in $cases; do
    dir=$out/$case
    case $case in
    run-*) args="run.yaml" ;;
    registry-*) args="registry.yaml" ;;
    levels-* | line-*) args="binding.json --probe-evidence-root . --credential-roots /home/runner" ;;
    *) continue ;;
    esac
    log=$(mktemp)
    # shellcheck disable=SC2086
    (cd "$dir" && /usr/bin/time -v -o "$log" timeout 600 "$grail" check $args >/dev/null 2>"$log.err"; echo "$?" >"$log.rc")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
    printf '%-22s exit %-3s peak %8.1f MiB  wall %s\n' "$case" "$(cat "$log.rc")" "$(awk "BEGIN{print ${rss:-0} / 1024}")" "$wall"
    rm -f "$log" "$log.err" "$log.rc"
done
