#!/usr/bin/env python3
"""Writes the seed corpora of barrel's libFuzzer targets from the official test vectors.

A fuzzer test/fuzz/<stem>_fuzz.cpp reads its seeds from test/fuzz/corpus/<stem>/ (the layout
test/CMakeLists.txt uses). Each stem has one function here that yields (file name, bytes) seeds.
Files are (re)written, never deleted, so regression inputs committed beside the generated seeds
(named regression-*) survive a rerun.

    scripts/make_fuzz_corpus.py              # every target
    scripts/make_fuzz_corpus.py rlp          # only these (rlp_fuzz works too)
"""

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "test" / "data" / "ethereum-tests"
CORPUS_DIR = ROOT / "test" / "fuzz" / "corpus"

MAX_DEPTH = 256  # barrel::rlp::kMaxDepth


def from_hex(text):
    """Fixture hex: optional 0x, either case, "" is the empty input."""
    if text[:2] in ("0x", "0X"):
        text = text[2:]
    return bytes.fromhex(text)


def safe_name(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def load_cases(relative_path):
    with open(DATA_DIR / relative_path, encoding="utf-8") as f:
        return json.load(f)


def rlp_list_header(payload_length):
    if payload_length < 56:
        return bytes([0xC0 + payload_length])
    length = payload_length.to_bytes((payload_length.bit_length() + 7) // 8, "big")
    return bytes([0xF7 + len(length)]) + length


def nested_lists(depth, innermost=b""):
    headers = []
    length = len(innermost)
    for _ in range(depth):
        header = rlp_list_header(length)
        headers.append(header)
        length += len(header)
    return b"".join(reversed(headers)) + innermost


def rlp_seeds():
    """test/fuzz/rlp_fuzz.cpp: every `out` of RLPTests (valid and invalid), plus depth and integer-limit edges."""
    for name, case in load_cases("RLPTests/rlptest.json").items():
        yield f"rlptest-{name}", from_hex(case["out"])
    for name, case in load_cases("RLPTests/invalidRLPTest.json").items():
        yield f"invalid-{name}", from_hex(case["out"])
    for name, case in load_cases("RLPTests/RandomRLPTests/example.json").items():
        yield f"random-{name}", from_hex(case["out"])

    yield "edge-depth-max", nested_lists(MAX_DEPTH)
    yield "edge-depth-max-plus-1", nested_lists(MAX_DEPTH + 1)
    yield "edge-depth-max-string", nested_lists(MAX_DEPTH, b"\x83abc")
    yield "edge-u64-max", b"\x88" + b"\xff" * 8
    yield "edge-u64-max-plus-1", b"\x89\x01" + b"\x00" * 8
    yield "edge-u256-max", b"\xa0" + b"\xff" * 32
    yield "edge-u256-max-plus-1", b"\xa1\x01" + b"\x00" * 32
    yield "edge-address", b"\x94" + bytes(range(20))
    yield "edge-string-55", b"\xb7" + b"s" * 55
    yield "edge-string-56", b"\xb8\x38" + b"s" * 56
    yield "edge-list-55", b"\xf7" + b"\x01" * 55
    yield "edge-list-56", b"\xf8\x38" + b"\x01" * 56


def tx_seeds():
    """test/fuzz/tx_fuzz.cpp: every txbytes of TransactionTests (valid and invalid, legacy and typed)."""
    root = DATA_DIR / "TransactionTests"
    for path in sorted(root.rglob("*.json")):
        with open(path, encoding="utf-8") as f:
            cases = json.load(f)
        for case in cases.values():
            # Named by folder and file stem: the test keys inside are not unique upstream.
            yield f"{path.parent.name}-{path.stem}", from_hex(case["txbytes"])


def rlp_string(payload):
    """RLP of a byte string."""
    if len(payload) == 1 and payload[0] < 0x80:
        return payload
    if len(payload) < 56:
        return bytes([0x80 + len(payload)]) + payload
    length = len(payload).to_bytes((len(payload).bit_length() + 7) // 8, "big")
    return bytes([0xB7 + len(length)]) + length + payload


def rlp_uint(value):
    return rlp_string(value.to_bytes((value.bit_length() + 7) // 8, "big"))


def rlp_list(encoded_items):
    payload = b"".join(encoded_items)
    return rlp_list_header(len(payload)) + payload


def block_header(number, chain_id=1):
    """RLP of a block header [parent_hash, number, timestamp, coinbase, gas_limit, gas_used,
    txs_root, receipts_root, state_root, chain_id] (docs/formats.md)."""
    return rlp_list([
        rlp_string(bytes([number]) * 32),
        rlp_uint(number),
        rlp_uint(1_700_000_000 + 12 * number),
        rlp_string(bytes(range(0xD0, 0xE4))),
        rlp_uint(30_000_000),
        rlp_uint(21_000 * number),
        rlp_string(b"\x40" * 32),
        rlp_string(b"\x70" * 32),
        rlp_string(b"\xa0" * 32),
        rlp_uint(chain_id),
    ])


def offset_indexed(txs):
    """The offset-indexed transaction list: u32 BE count, count+1 u32 BE offsets, the objects."""
    offsets = [0]
    for t in txs:
        offsets.append(offsets[-1] + len(t))
    return (len(txs).to_bytes(4, "big") + b"".join(o.to_bytes(4, "big") for o in offsets)
            + b"".join(txs))


def plain_tx_list(txs):
    """go-ethereum's RLP of []*types.Transaction: legacy as lists, typed envelopes as strings."""
    return rlp_list([t if t[0] >= 0xC0 else rlp_string(t) for t in txs])


def wire_block(number, txs, plain=False):
    txs_item = plain_tx_list(txs) if plain else rlp_string(offset_indexed(txs))
    return rlp_list([block_header(number), txs_item])


def valid_transactions():
    """Official transactions valid under Cancun, by kind: legacy lists, type 1, type 2."""
    kinds = {"legacy": [], 1: [], 2: []}
    root = DATA_DIR / "TransactionTests"
    for path in sorted(root.rglob("*.json")):
        with open(path, encoding="utf-8") as f:
            cases = json.load(f)
        for case in cases.values():
            result = case["result"].get("Cancun", {"exception": "absent"})
            if "exception" in result:
                continue
            tx = from_hex(case["txbytes"])
            kind = "legacy" if tx[0] >= 0xC0 else tx[0]
            if kind in kinds:
                kinds[kind].append(tx)
    if not kinds[1] or not kinds[2] or len(kinds["legacy"]) < 4:
        raise SystemExit("block: TransactionTests lack valid legacy/type-1/type-2 transactions")
    return kinds


def block_seeds():
    """test/fuzz/block_fuzz.cpp: small wire blocks of official transactions (indexed and plain
    lists, mixed types), an empty block, bare transaction lists and a chain of three blocks."""
    kinds = valid_transactions()
    legacy = kinds["legacy"][:4]
    mixed = [legacy[0], kinds[1][0], legacy[1], kinds[2][0]]
    blocks = {
        "empty": wire_block(0, []),
        "one-legacy": wire_block(1, legacy[:1]),
        "one-type1": wire_block(2, kinds[1][:1]),
        "one-type2": wire_block(3, kinds[2][:1]),
        "mixed-4": wire_block(4, mixed),
        "mixed-8": wire_block(5, mixed + legacy[2:4] + [kinds[2][0], kinds[1][0]]),
        "plain-mixed-4": wire_block(6, mixed, plain=True),
        "plain-empty": wire_block(7, [], plain=True),
    }
    for name, data in blocks.items():
        yield f"block-{name}", data
    yield "chain-3", blocks["mixed-4"] + blocks["empty"] + blocks["plain-mixed-4"]
    yield "txlist-plain-mixed-4", plain_tx_list(mixed)
    yield "txlist-indexed-mixed-4", rlp_string(offset_indexed(mixed))
    yield "txlist-indexed-empty", rlp_string(offset_indexed([]))
    # Index edges: a count far beyond the bytes, and non-increasing offsets.
    yield "edge-count-ffffffff", rlp_list([block_header(8), rlp_string(b"\xff" * 4 + bytes(8))])
    two = offset_indexed(mixed[:2])
    yield "edge-offsets-equal", rlp_list([block_header(9), rlp_string(two[:8] + two[4:8] + two[12:])])


# Fuzzer stem -> seed generator. Add one function per new fuzzer.
TARGETS = {
    "rlp": rlp_seeds,
    "tx": tx_seeds,
    "block": block_seeds,
}


def write_corpus(target, out_root):
    out_dir = out_root / target
    out_dir.mkdir(parents=True, exist_ok=True)
    seen = set()
    for name, data in TARGETS[target]():
        file_name = safe_name(name)
        if file_name in seen:
            raise SystemExit(f"{target}: duplicate seed name {file_name}")
        seen.add(file_name)
        (out_dir / file_name).write_bytes(data)
    return len(seen)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", help=f"default: all of {', '.join(TARGETS)}")
    parser.add_argument("--out", type=Path, default=CORPUS_DIR, help="corpus root directory")
    args = parser.parse_args(argv)

    targets = [t.removesuffix("_fuzz") for t in args.targets]
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        parser.error(f"unknown target(s): {', '.join(unknown)}")
    for target in targets or TARGETS:
        count = write_corpus(target, args.out)
        print(f"{target}: {count} seeds in {args.out / target}")


if __name__ == "__main__":
    main(sys.argv[1:])
