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


# Fuzzer stem -> seed generator. Add one function per new fuzzer.
TARGETS = {
    "rlp": rlp_seeds,
    "tx": tx_seeds,
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
