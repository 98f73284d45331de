#!/usr/bin/env bash
# ctest load_interrupt: SIGINT, then SIGTERM, sent to barrel-load while it loads a node of its
# own. Each must end it with status 128 + the signal, stop the node, and leave neither the
# node's temporary directory nor a --json temporary behind. The seam is the first progress line
# on stderr (the node serves and the sends have begun); the load is slow enough (--rate) that
# it cannot end first.
#   interrupt_test.sh BARREL-LOAD BARREL-NODE WORK-DIR
set -u
load=$1 node=$2 work=$3

fail() { echo "FAIL: $*" >&2; exit 1; }

children_of() {  # the pids whose parent is $1
    local stat
    for stat in /proc/[0-9]*/stat; do
        # Field 4 is the parent, after the command name in parentheses (which may hold spaces).
        local rest
        rest=$(sed 's/^.*) //' "$stat" 2>/dev/null) || continue
        [[ $(cut -d' ' -f2 <<< "$rest") == "$1" ]] && basename "$(dirname "$stat")"
    done
}

for signal in INT TERM; do
    rm -rf "$work"
    mkdir -p "$work/tmp" "$work/out"
    # A background job of a script starts with SIGINT ignored, which barrel-load respects: this
    # one starts with both signals at their defaults, as from a terminal.
    TMPDIR="$work/tmp" env --default-signal=INT,TERM "$load" --txs 100000 --senders 20 --rate 2000 --node "$node" \
        --json "$work/out/load.json" > "$work/stdout" 2> "$work/stderr" &
    pid=$!
    for _ in $(seq 1200); do
        grep -q "^barrel-load: [0-9]* s: sent" "$work/stderr" && break
        kill -0 "$pid" 2> /dev/null || break
        sleep 0.1
    done
    grep -q "^barrel-load: [0-9]* s: sent" "$work/stderr" ||
        fail "SIG$signal: no progress line within 120 s:$(cat "$work/stderr")"
    nodes=$(children_of "$pid")
    [[ -n $nodes ]] || fail "SIG$signal: barrel-load has no child process"
    [[ -n $(ls -A "$work/tmp") ]] || fail "SIG$signal: no temporary directory while running"
    kill -s "$signal" "$pid"
    wait "$pid"
    status=$?
    expected=$((128 + $(kill -l "$signal")))
    [[ $status == "$expected" ]] ||
        fail "SIG$signal: exit status $status, expected $expected:$(cat "$work/stderr")"
    grep -q "^barrel-load: SIG$signal: stopping the node and removing its temporary files$" \
        "$work/stderr" || fail "SIG$signal: no message:$(cat "$work/stderr")"
    for n in $nodes; do
        kill -0 "$n" 2> /dev/null && fail "SIG$signal: the node (pid $n) still runs"
    done
    [[ -z $(ls -A "$work/tmp") ]] || fail "SIG$signal: left in TMPDIR: $(ls -A "$work/tmp")"
    [[ -z $(ls -A "$work/out") ]] || fail "SIG$signal: left beside --json: $(ls -A "$work/out")"
    echo "SIG$signal: exit $status, node stopped, nothing left behind"
done
