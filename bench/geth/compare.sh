#!/usr/bin/env bash
# barrel-node run against go-ethereum's dev node under the same load, side by side: the same
# barrel-load (same signed transfers, batches, connections) sent to a fresh barrel node and to a
# fresh `geth --dev`, alternating, and one table of medians (docs/benchmarks.md, "The node under
# load").
#
#   bench/geth/compare.sh [--geth PATH] [--build DIR] [--rounds R] [--block-time MS]
#                         [-- BARREL-LOAD OPTIONS...]
#
# geth: PATH, else `geth` on PATH, else ~/go/bin/geth (`go install
# github.com/ethereum/go-ethereum/cmd/geth@latest` builds one). Each node seals as fast as it
# can: barrel-node at --block-time 0 (the default, the node's own) a block whenever transactions
# are pending and the previous block is committed, at --block-time MS as soon as 2,500 transfers
# are ready and otherwise every MS ms; geth --dev.period 0 a block whenever transactions are
# pending, with a gas limit (1e9) that does not cap it.
# geth's pool is raised to hold the whole load, as barrel-load raises barrel-node's.
#
# geth --dev funds one developer account only: the script makes the genesis barrel-load assumes
# (barrel-node gen --accounts 1000 --seed 1), and the developer account sends each of its
# accounts 100 ether (eth_sendTransaction, unlocked in dev mode) before the load. geth's base fee
# rises 12.5% per block over half full, so its transfers carry a 1,000 gwei gas price, to be sure
# (barrel-node has no base fee: 1 gwei).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build="$repo/build/release"
geth=""
rounds=3
block_time=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --geth) geth=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --block-time) block_time=$2; shift 2 ;;
        --) shift; break ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if [[ -z "$geth" ]]; then
    geth=$(command -v geth || true)
    [[ -n "$geth" ]] || geth="$HOME/go/bin/geth"
fi
[[ -x "$geth" ]] || { echo "error: no geth at '$geth' (--geth PATH)" >&2; exit 2; }
node="$build/src/barrel-node"
load="$build/bench/barrel-load"
for b in "$node" "$load"; do
    [[ -x "$b" ]] || { echo "error: $b is not built (cmake --build $build)" >&2; exit 2; }
done

work=$(mktemp -d /tmp/barrel-geth-compare.XXXXXX)
geth_pid=""
cleanup() {
    [[ -n "$geth_pid" ]] && kill "$geth_pid" 2>/dev/null && wait "$geth_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

accounts=1000
"$node" gen --genesis "$work/genesis.json" --out "$work/chain.rlp" --blocks 1 --txs 1 \
    --accounts "$accounts" --seed 1 2>/dev/null
common=(--accounts "$accounts" --seed 1 "$@")

rpc() {  # rpc URL JSON-BODY
    curl -sf -X POST -H 'content-type: application/json' --data "$2" "$1"
}

start_geth() {
    local dir=$work/geth port
    rm -rf "$dir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$geth" --dev --dev.period 0 --dev.gaslimit 1000000000 --miner.gaslimit 1000000000 \
        --datadir "$dir" --http --http.addr 127.0.0.1 --http.port "$port" --http.api eth,net,web3 \
        --authrpc.port 0 --txpool.globalslots 200000 --txpool.accountslots 5000 \
        --txpool.globalqueue 200000 --txpool.accountqueue 5000 --verbosity 1 \
        > "$work/geth.log" 2>&1 &
    geth_pid=$!
    geth_url="http://127.0.0.1:$port"
    for _ in $(seq 100); do
        rpc "$geth_url" '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' \
            > /dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "error: geth did not answer on $geth_url" >&2; tail -20 "$work/geth.log" >&2; exit 1
}

fund_geth() {
    python3 - "$geth_url" "$work/genesis.json" <<'EOF'
import json, sys, time, urllib.request
url, genesis = sys.argv[1], sys.argv[2]
def rpc(body):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=60))
dev = rpc({"jsonrpc": "2.0", "id": 1, "method": "eth_accounts", "params": []})["result"][0]
addresses = list(json.load(open(genesis))["accounts"].keys())
# Explicit nonces: geth runs a batch's calls concurrently, and each would take the same one.
nonce = int(rpc({"jsonrpc": "2.0", "id": 1, "method": "eth_getTransactionCount",
                 "params": [dev, "pending"]})["result"], 16)
calls = [{"jsonrpc": "2.0", "id": i, "method": "eth_sendTransaction",
          "params": [{"from": dev, "to": a, "value": hex(100 * 10**18), "nonce": hex(nonce + i)}]}
         for i, a in enumerate(addresses)]
for r in rpc(calls):
    if "error" in r: sys.exit(f"funding: {r['error']}")
for _ in range(600):
    b = rpc({"jsonrpc": "2.0", "id": 1, "method": "eth_getBalance", "params": [addresses[-1], "latest"]})
    if int(b["result"], 16) > 0: break
    time.sleep(0.1)
else:
    sys.exit("funding: not mined within a minute")
EOF
}

for r in $(seq "$rounds"); do
    echo "round $r/$rounds: barrel-node" >&2
    "$load" "${common[@]}" --block-time "$block_time" --json "$work/barrel-$r.json" > "$work/barrel-$r.txt"
    echo "round $r/$rounds: geth --dev" >&2
    start_geth
    fund_geth
    # --check-receipts 100: geth derives a whole block's receipts to answer one.
    "$load" "${common[@]}" --url "$geth_url" --gas-price 1000 --check-receipts 100 \
        --json "$work/geth-$r.json" \
        > "$work/geth-$r.txt"
    kill "$geth_pid"; wait "$geth_pid" 2>/dev/null || true; geth_pid=""
done

python3 - "$work" "$rounds" "$("$geth" version | sed -n 's/^Version: //p')" "$block_time" <<'EOF'
import json, statistics, sys
work, rounds, geth_version, block_time = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def runs(name):
    return [json.load(open(f"{work}/{name}-{r}.json"))["runs"][0] for r in range(1, rounds + 1)]
barrel, geth = runs("barrel"), runs("geth")
def med(rs, f): return statistics.median(f(x) for x in rs)
rows = [("end-to-end TPS", lambda x: x["end_to_end_tps"], "{:,.0f}"),
        ("submit TPS", lambda x: x["submit_tps"], "{:,.0f}"),
        ("latency p50 ms", lambda x: x["latency_ms"]["p50"], "{:.0f}"),
        ("latency p99 ms", lambda x: x["latency_ms"]["p99"], "{:.0f}"),
        ("x recovery ceiling", lambda x: x["ceiling_ratio"], "{:.2f}")]
print(f"| median of {rounds} rounds | barrel-node run --block-time {block_time} | geth --dev {geth_version} | barrel / geth |")
print("|---|---|---|---|")
for name, f, fmt in rows:
    b, g = med(barrel, f), med(geth, f)
    print(f"| {name} | {fmt.format(b)} | {fmt.format(g)} | {b / g:.2f} |")
print("per round, end-to-end TPS barrel / geth: " + ", ".join(
    f"{x['end_to_end_tps']:,.0f} / {y['end_to_end_tps']:,.0f}" for x, y in zip(barrel, geth)))
for name, rs in (("barrel", barrel), ("geth", geth)):
    bad = [r for r in rs if not r["checks"]["passed"]]
    if bad: print(f"warning: {name}: a run failed its checks: {bad[0]['checks']}")
EOF
