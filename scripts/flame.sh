#!/usr/bin/env bash
# Records processes with perf for a while and draws one flame graph of them (SVG): how the flame
# graphs in docs/ were made (docs/benchmarks.md, "The network under load").
#
#   scripts/flame.sh --out FILE.svg --seconds S [--title TEXT] [--frequency HZ] PID...
#
# Every PID is sampled at HZ (default 199) with DWARF call graphs (barrel is built without frame
# pointers; Go's cometbft unwinds either way), for S seconds. Each stack starts with its
# process's name, so a validator's barrel-node and cometbft sit side by side under one root.
# Needs perf (Debian's linux-perf) and Brendan Gregg's FlameGraph scripts
# (https://github.com/brendangregg/FlameGraph): FLAMEGRAPH_DIR names the folder holding
# stackcollapse-perf.pl and flamegraph.pl (default: found on PATH). The folded stacks are kept
# beside the SVG (FILE.folded), for diffing two runs (difffolded.pl).
set -euo pipefail

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }

out="" seconds="" title="" frequency=199 pids=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --out) out=${2:?--out needs a file}; shift ;;
        --seconds) seconds=${2:?--seconds needs a number}; shift ;;
        --title) title=${2:?--title needs a text}; shift ;;
        --frequency) frequency=${2:?--frequency needs a number}; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "error: unknown option '$1' (try --help)" >&2; exit 2 ;;
        *) [[ $1 =~ ^[0-9]+$ ]] || { echo "error: '$1' is not a pid" >&2; exit 2; }
           pids+=("$1") ;;
    esac
    shift
done
[[ -n $out ]] || { echo "error: --out FILE.svg is required" >&2; exit 2; }
[[ $seconds =~ ^[0-9]+$ && $seconds -gt 0 ]] || { echo "error: --seconds: expected a whole number of seconds above 0" >&2; exit 2; }
[[ $frequency =~ ^[0-9]+$ && $frequency -gt 0 ]] || { echo "error: --frequency: expected a whole number of Hz above 0" >&2; exit 2; }
((${#pids[@]})) || { echo "error: no pid given" >&2; exit 2; }
for pid in "${pids[@]}"; do
    [[ -d /proc/$pid ]] || { echo "error: no process $pid" >&2; exit 2; }
done

tool() {
    local dir=${FLAMEGRAPH_DIR:-}
    if [[ -n $dir && -x $dir/$1 ]]; then echo "$dir/$1"; return; fi
    command -v "$1" || { echo "error: $1 not found: set FLAMEGRAPH_DIR to a FlameGraph checkout" >&2; exit 2; }
}
collapse=$(tool stackcollapse-perf.pl)
draw=$(tool flamegraph.pl)
command -v perf >/dev/null || { echo "error: perf not found (Debian: apt-get install linux-perf)" >&2; exit 2; }

data=$(mktemp /tmp/flame.XXXXXX.data)
trap 'rm -f "$data"' EXIT
perf record -q -F "$frequency" --call-graph dwarf,16384 -o "$data" \
    -p "$(IFS=,; echo "${pids[*]}")" -- sleep "$seconds" >/dev/null
# Each stack's first frame is its process's name (barrel-node, cometbft): record one node's
# processes, or processes of different names, to keep them apart.
perf script -i "$data" 2>/dev/null | "$collapse" >"${out%.svg}.folded"
"$draw" --title "${title:-perf, ${seconds} s at ${frequency} Hz: ${pids[*]}}" --width 1400 \
    "${out%.svg}.folded" >"$out"
echo "flame.sh: $(wc -l <"${out%.svg}.folded") distinct stacks -> $out"
