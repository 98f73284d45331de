#!/usr/bin/env bash
# A late node's join, block sync against state sync, on one chain with 100,000 transfers of
# history (docs/benchmarks.md, "A late node: state sync against block sync"). Needs a built
# build/release (barrel-node, barrel-load) and cometbft; works in /tmp/jx; prints the times.
set -euo pipefail
B=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/release
N=$B/src/barrel-node
export PATH=$PATH:$(go env GOPATH)/bin
mkdir -p /tmp/jx && cd /tmp/jx
rm -rf net g.json chain.rlp
$N gen --genesis g.json --out chain.rlp --blocks 1 --txs 1 --accounts 10000 --seed 1 > /dev/null
$N testnet init --dir net --validators 4 --genesis g.json --base-port 28000 --timeout-commit 500 \
   --snapshot-interval 50 --node-arg --txpool-max-pending --node-arg 200000 > init.txt
$N testnet start --dir net --timeout 120 > start.txt
url=$(python3 -c 'import json;print(json.load(open("net/testnet.json"))["nodes"][0]["json_rpc"])')
t0=$(date +%s)
$B/bench/barrel-load --url "$url" --txs 100000 --senders 500 --rate 2000 --stall-timeout 180 --check-receipts 100 > load.txt 2>&1 || true
t1=$(date +%s)
echo "load: $((t1-t0)) s" > result.txt
height() { curl -s -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' "$1" | python3 -c 'import json,sys;print(int(json.load(sys.stdin)["result"],16))'; }
H=$(height "$url")
echo "history: head $H after the load" >> result.txt
sleep 2
# Block sync (node 4) then state sync (node 5), each timed from its join command to the head H.
for mode in block state; do
  s=$(date +%s.%N)
  if [ $mode = block ]; then $N testnet join --dir net --timeout 300 > join-$mode.txt; else $N testnet join --dir net --state-sync --timeout 300 > join-$mode.txt; fi
  idx=$(python3 -c 'import json;print(len(json.load(open("net/testnet.json"))["nodes"])-1)')
  jurl=$(python3 -c "import json;print(json.load(open('net/testnet.json'))['nodes'][$idx]['json_rpc'])")
  while :; do h=$(height "$jurl" 2>/dev/null || echo 0); [ "$h" -ge "$H" ] && break; sleep 0.2; done
  e=$(date +%s.%N)
  echo "$mode sync: node $idx reached height $H in $(python3 -c "print(round($e-$s,1))") s" >> result.txt
  $N testnet stop --dir net --node $idx > /dev/null
done
du -sh net/node0/barrel net/node4/barrel net/node5/barrel >> result.txt
$N testnet stop --dir net > /dev/null
$N verify --datadir net/node5/barrel >> result.txt 2>&1 || true
$N verify --datadir net/node0/barrel >> result.txt 2>&1 || true
cat result.txt
