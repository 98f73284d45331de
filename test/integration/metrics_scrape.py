#!/usr/bin/env python3
"""GET /metrics of a real `barrel-node run`, parsed by an independent parser.

Starts the node on a fresh datadir (a `barrel-node gen` genesis), sends the generated block's
signed transactions as one JSON-RPC batch with a malformed one, a call with bad parameters and
an unknown method, waits until the node has sealed them all, sends one of them again (now "nonce
too low"), then scrapes /metrics and parses it with prometheus_client's
text_string_to_metric_families (Debian's python3-prometheus-client). Checks every family of the
contract (docs/rpc.md, "/metrics"): its type and HELP text, `_total` on every counter, histogram
buckets cumulative up to +Inf with _count equal to the +Inf bucket, and values that match what
was done: blocks, transactions, admissions, rejections by reason, calls by method, requests and
their bytes.

Usage (ctest node_metrics_scrape): metrics_scrape.py --node build/release/src/barrel-node
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import node_harness  # noqa: E402 (test/node_harness.py)

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    sys.exit("error: prometheus_client is missing (Debian: python3-prometheus-client, "
             "which scripts/deps.sh installs) for " + sys.executable)

TXS = 20            # transactions of the generated block
MAX_BLOCK_TXS = 8   # so that the node seals them as several blocks
DEADLINE = 60.0     # seconds to wait for the node to start, and to seal (not a timing assertion)

# The contract: family name (as the parser names it: a counter without _total) -> type.
FAMILIES = {
    "barrel_stage_duration_seconds": "histogram",
    "barrel_blocks_sealed": "counter",
    "barrel_transactions_sealed": "counter",
    "barrel_head_block": "gauge",
    "barrel_block_transactions": "histogram",
    "barrel_commit_bytes": "counter",
    "barrel_seal_failures": "counter",
    "barrel_store_write_error": "gauge",
    "barrel_pool_transactions": "gauge",
    "barrel_pool_admitted": "counter",
    "barrel_pool_rejected": "counter",
    "barrel_rpc_requests": "counter",
    "barrel_rpc_errors": "counter",
    "barrel_rpc_http_requests": "counter",
    "barrel_rpc_request_bytes": "counter",
    "barrel_rpc_request_duration_seconds": "histogram",
    "barrel_rpc_connections": "gauge",
    "barrel_sender_cache_hits": "counter",
    "barrel_sender_cache_misses": "counter",
}
# pool::to_string of every RejectCode.
REJECT_REASONS = {
    "malformed", "oversized", "invalid", "invalid_sender", "exceeds_block_gas_limit",
    "fee_cap_below_base_fee", "already_known", "nonce_too_low", "nonce_too_high",
    "insufficient_funds",
    "replacement_underpriced", "account_limit", "pool_full", "state_unreadable",
    "unprotected",
}

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


class Node(node_harness.Node):
    """`barrel-node run` on a datadir (test/node_harness.py), and the JSON-RPC requests sent to it
    (counted)."""

    def __init__(self, binary, datadir):
        super().__init__(binary, datadir,
                         ["--block-time", "100", "--max-block-txs", str(MAX_BLOCK_TXS)])
        if not self.serving(DEADLINE):
            self.stop()
            sys.exit("error: barrel-node run did not serve:\n" + "".join(self.log))
        self.posts = 0
        self.post_bytes = 0

    def post(self, payload, timeout=DEADLINE):
        self.posts += 1
        self.post_bytes += len(json.dumps(payload).encode())
        return super().post(payload, timeout)

    def scrape(self):
        with urllib.request.urlopen(self.url + "/metrics", timeout=DEADLINE) as response:
            check(response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8",
                  "/metrics content type: " + str(response.headers["Content-Type"]))
            return response.read().decode()

    def stop(self, timeout=DEADLINE):
        return super().stop(timeout)


def call(method, params, id_):
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def generated_block(binary, work):
    """A genesis and one signed block: its raw transactions (the offset-indexed list of
    docs/formats.md, taken out of the block with `rlp decode`) and their hashes."""
    genesis, chain = os.path.join(work, "genesis.json"), os.path.join(work, "chain.rlp")
    subprocess.run([binary, "gen", "--genesis", genesis, "--out", chain, "--blocks", "1",
                    "--txs", str(TXS), "--accounts", "10"], check=True, stdout=subprocess.DEVNULL)
    with open(chain, "rb") as f:
        wire = f.read()
    items = json.loads(subprocess.run([binary, "rlp", "decode", "-"], input=wire.hex(), text=True,
                                      check=True, capture_output=True).stdout)
    payload = bytes.fromhex(items[1][2:])
    count = int.from_bytes(payload[0:4], "big")
    offsets = [int.from_bytes(payload[4 + 4 * i:8 + 4 * i], "big") for i in range(count + 1)]
    area = payload[4 + 4 * (count + 1):]
    raws = ["0x" + area[offsets[i]:offsets[i + 1]].hex() for i in range(count)]
    block = json.loads(subprocess.run([binary, "block", "inspect", chain], check=True,
                                      capture_output=True, text=True).stdout)
    hashes = [t["hash"] for t in block["transactions"]]
    return genesis, raws, hashes


def parse(text):
    """{family name: Metric} from prometheus_client, and the raw # TYPE lines by name."""
    families = {f.name: f for f in text_string_to_metric_families(text)}
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    return families, types


def sample(families, family, name=None, **labels):
    """The value of one sample (name defaults to the family's own series)."""
    f = families[family]
    name = name or (family + "_total" if f.type == "counter" else family)
    found = [s.value for s in f.samples if s.name == name and s.labels == labels]
    check(len(found) == 1, f"one sample {name}{labels}, found {len(found)}")
    return found[0] if found else math.nan


def check_shapes(families, types, text):
    for name, kind in FAMILIES.items():
        check(name in families, f"family {name} present")
        if name not in families:
            continue
        f = families[name]
        check(f.type == kind, f"{name} is a {kind}, not {f.type}")
        check(len(f.documentation) > 10, f"{name} has HELP text")
        if kind == "counter":
            # The parser adds _total to a counter that lacks it: check the text itself.
            check(types.get(name + "_total") == "counter", f"# TYPE {name}_total counter")
            check(all(s.name == name + "_total" for s in f.samples), f"{name}: _total samples")
            check(re.search(rf"^{name}_total(\{{.*\}})? ", text, re.M) is not None,
                  f"{name}_total sample lines")
        if kind == "histogram":
            check_histogram(f)


def check_histogram(f):
    series = {}
    for s in f.samples:
        key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
        series.setdefault(key, {"buckets": [], "count": None, "sum": None})
        if s.name == f.name + "_bucket":
            series[key]["buckets"].append((float(s.labels["le"]), s.value))
        elif s.name == f.name + "_count":
            series[key]["count"] = s.value
        elif s.name == f.name + "_sum":
            series[key]["sum"] = s.value
    check(len(series) > 0, f"{f.name}: samples")
    for key, h in series.items():
        where = f"{f.name}{dict(key)}"
        bounds = [le for le, _ in h["buckets"]]
        counts = [v for _, v in h["buckets"]]
        check(len(bounds) >= 2 and bounds == sorted(bounds), f"{where}: buckets in order")
        check(bounds and bounds[-1] == math.inf, f"{where}: the last bucket is +Inf")
        check(all(a <= b for a, b in zip(counts, counts[1:])), f"{where}: cumulative buckets")
        check(counts and h["count"] == counts[-1], f"{where}: _count is the +Inf bucket")
        check(h["sum"] is not None and h["sum"] >= 0, f"{where}: _sum")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node", required=True, help="the barrel-node binary")
    binary = parser.parse_args().node

    with tempfile.TemporaryDirectory(prefix="barrel-metrics-") as work:
        genesis, raws, hashes = generated_block(binary, work)
        datadir = os.path.join(work, "d")
        subprocess.run([binary, "init", "--datadir", datadir, "--genesis", genesis], check=True,
                       stdout=subprocess.DEVNULL)
        node = Node(binary, datadir)
        try:
            run(node, raws, hashes)
        finally:
            code = node.stop()
        check(code == 0, f"barrel-node run exits 0 on SIGTERM, not {code}")

    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("metrics_scrape: every family of the contract present and consistent")


def run(node, raws, hashes):
    # One batch: the block's transactions, a malformed one (rejected by the pool), one call
    # with bad parameters (an error before the pool) and a method the node does not have.
    batch = [call("eth_sendRawTransaction", [raw], i) for i, raw in enumerate(raws)]
    batch += [call("eth_sendRawTransaction", ["0x00"], 100),
              call("eth_sendRawTransaction", [], 101),
              call("eth_nope", [], 102)]
    answers = {a["id"]: a for a in node.post(batch)}
    check([answers[i].get("result") for i in range(len(raws))] == hashes,
          "every transaction admitted, with its hash")
    check(all("error" in answers[i] for i in (100, 101, 102)), "three errors")

    # Sealed: every transaction counted (on_sealed runs after the pool let them go).
    deadline = time.monotonic() + DEADLINE
    while True:
        families, _ = parse(node.scrape())
        if sample(families, "barrel_transactions_sealed") >= TXS:
            break
        if time.monotonic() > deadline:
            sys.exit("error: the node did not seal the transactions:\n" + "".join(node.log))
        time.sleep(0.05)

    # Mined: sent again, the pool refuses it for its nonce.
    again = node.post(call("eth_sendRawTransaction", [raws[0]], 1))
    check("nonce too low" in again.get("error", {}).get("message", ""),
          f"a mined transaction sent again is nonce too low: {again}")
    head = int(node.post(call("eth_blockNumber", [], 2))["result"], 16)

    text = node.scrape()
    families, types = parse(text)
    check_shapes(families, types, text)
    if failures:
        return

    def value(family, name=None, **labels):
        return sample(families, family, name, **labels)

    def expect(got, want, what):
        check(got == want, f"{what}: {got}, expected {want}")

    blocks = value("barrel_blocks_sealed")
    check(blocks >= math.ceil(TXS / MAX_BLOCK_TXS), f"{blocks} blocks for {TXS} transactions")
    expect(blocks, head, "blocks sealed = the head (a fresh datadir)")
    expect(value("barrel_head_block"), head, "head block")
    expect(value("barrel_transactions_sealed"), TXS, "transactions sealed")
    expect(value("barrel_block_transactions", "barrel_block_transactions_count"), blocks,
           "block_transactions count")
    expect(value("barrel_block_transactions", "barrel_block_transactions_sum"), TXS,
           "block_transactions sum")
    expect(value("barrel_block_transactions", "barrel_block_transactions_bucket",
                 le=str(MAX_BLOCK_TXS)), blocks, "every block within --max-block-txs")
    for stage in ("decode", "verify", "execute", "commit"):
        expect(value("barrel_stage_duration_seconds", "barrel_stage_duration_seconds_count",
                     stage=stage), blocks, f"{stage} observations")
    raw_bytes = sum(len(r) // 2 - 1 for r in raws)
    check(value("barrel_commit_bytes") > raw_bytes,
          f"commit bytes {value('barrel_commit_bytes')} > the transactions' {raw_bytes}")

    # Nothing failed (test/fault/faults.py's node case makes these move).
    expect(value("barrel_seal_failures"), 0, "seal failures")
    expect(value("barrel_store_write_error"), 0, "store write error")

    expect(value("barrel_pool_transactions", state="pending"), 0, "pending")
    expect(value("barrel_pool_transactions", state="queued"), 0, "queued")
    expect(value("barrel_pool_admitted"), TXS, "admitted")
    rejected = {s.labels["reason"]: s.value for s in families["barrel_pool_rejected"].samples}
    expect(set(rejected), REJECT_REASONS, "rejection reasons")
    expect({r: v for r, v in rejected.items() if v}, {"malformed": 1, "nonce_too_low": 1},
           "rejections")

    expect(value("barrel_rpc_requests", method="eth_sendRawTransaction"), TXS + 3, "sends")
    expect(value("barrel_rpc_errors", method="eth_sendRawTransaction"), 3, "send errors")
    expect(value("barrel_rpc_requests", method="eth_blockNumber"), 1, "eth_blockNumber calls")
    expect(value("barrel_rpc_errors", method="eth_blockNumber"), 0, "eth_blockNumber errors")
    expect(value("barrel_rpc_requests", method="unknown"), 1, "unknown method calls")
    expect(value("barrel_rpc_errors", method="unknown"), 1, "unknown method errors")
    expect(value("barrel_rpc_http_requests"), node.posts, "HTTP requests")
    expect(value("barrel_rpc_request_bytes"), node.post_bytes, "request bytes")
    expect(value("barrel_rpc_request_duration_seconds",
                 "barrel_rpc_request_duration_seconds_count"), node.posts, "request durations")
    check(value("barrel_rpc_connections") >= 1, "the scrape's own connection is open")

    # Every sealed sender was in the cache: recovered once, at admission.
    expect(value("barrel_sender_cache_hits"), TXS, "sender cache hits")
    expect(value("barrel_sender_cache_misses"), 0, "sender cache misses")


if __name__ == "__main__":
    main()
