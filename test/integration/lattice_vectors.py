#!/usr/bin/env python3
"""The state commitment's vectors, computed by a second implementation.

docs/formats.md ("State commitment") fixes the layout: each entry's canonical encoding (the
write-set entry), its element (ChaCha20's 2,048-byte keystream under the key BLAKE3 derives from
the encoding), the lattice (the lane-wise sum mod 2^16 of 1,024 little-endian u16 lanes) and the
state root (BLAKE3 in derive-key mode over the lattice's bytes). Here the RLP is written out by
hand, BLAKE3 is PyPI's `blake3` (the Rust crate) and ChaCha20 is `cryptography`'s (OpenSSL's, but
driven through its own API): nothing of barrel's C++ is used. The script checks every case of
test/data/state_lattice.json, which the C++ tests check too (state_lattice_test.cpp), and that
docs/formats.md quotes each root.

    lattice_vectors.py [--vectors FILE] [--doc FILE]     exit 0: all agree; 1: a mismatch (named)
    lattice_vectors.py --print                           the vectors as this implementation sees them
"""
import argparse
import json
import sys
from pathlib import Path

try:
    import blake3
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
except ImportError as e:  # named, so that a missing module fails loudly rather than skipping
    sys.exit(f"lattice_vectors.py needs PyPI's blake3 and cryptography ({e}); "
             "scripts/deps.sh --test installs them")

ELEMENT_CONTEXT = "barrel 2026-11-28 state lattice element v1"
ROOT_CONTEXT = "barrel 2026-11-28 state lattice root v1"
LANES = 1024


def rlp_string(b: bytes) -> bytes:
    if len(b) == 1 and b[0] < 0x80:
        return b
    if len(b) < 56:
        return bytes([0x80 + len(b)]) + b
    n = len(b).to_bytes((len(b).bit_length() + 7) // 8, "big")
    return bytes([0xB7 + len(n)]) + n + b


def rlp_list(payload: bytes) -> bytes:
    if len(payload) < 56:
        return bytes([0xC0 + len(payload)]) + payload
    n = len(payload).to_bytes((len(payload).bit_length() + 7) // 8, "big")
    return bytes([0xF7 + len(n)]) + n + payload


def rlp_int(v: int) -> bytes:
    return rlp_string(v.to_bytes((v.bit_length() + 7) // 8, "big") if v else b"")


def account_entry(address: bytes, nonce: int, balance: int) -> bytes:
    return rlp_list(rlp_string(b"\x01" + address) + rlp_list(rlp_int(nonce) + rlp_int(balance)))


def user_entry(name: bytes, balance: int) -> bytes:
    return rlp_list(rlp_string(b"\x02" + name) + rlp_int(balance))


def element(encoded: bytes) -> list:
    key = blake3.blake3(encoded, derive_key_context=ELEMENT_CONTEXT).digest()
    # OpenSSL's 16-byte ChaCha20 IV: a 32-bit block counter (0) then a 96-bit nonce (0).
    stream = Cipher(algorithms.ChaCha20(key, b"\0" * 16), mode=None).encryptor()
    out = stream.update(b"\0" * (2 * LANES))
    return [int.from_bytes(out[2 * i:2 * i + 2], "little") for i in range(LANES)]


def lattice_bytes(lanes: list) -> bytes:
    return b"".join(v.to_bytes(2, "little") for v in lanes)


def evaluate(case: dict) -> dict:
    entries = []
    for a in sorted(case.get("accounts", []), key=lambda a: bytes.fromhex(a["address"][2:])):
        entries.append(account_entry(bytes.fromhex(a["address"][2:]), int(a["nonce"], 0),
                                     int(a["balance"], 0)))
    for u in sorted(case.get("users", []), key=lambda u: u["name"].encode()):
        entries.append(user_entry(u["name"].encode(), int(u["balance"], 0)))
    lanes = [0] * LANES
    for e in entries:
        lanes = [(x + y) & 0xFFFF for x, y in zip(lanes, element(e))]
    raw = lattice_bytes(lanes)
    return {
        "entries": ["0x" + e.hex() for e in entries],
        "lattice_first_16_bytes": "0x" + raw[:16].hex(),
        "state_root": "0x" + blake3.blake3(raw, derive_key_context=ROOT_CONTEXT).hexdigest(),
    }


def main() -> int:
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser()
    ap.add_argument("--vectors", default=here.parent / "data" / "state_lattice.json")
    ap.add_argument("--doc", default=here.parent.parent / "docs" / "formats.md")
    ap.add_argument("--print", action="store_true")
    args = ap.parse_args()
    cases = json.loads(Path(args.vectors).read_text())["cases"]
    if args.print:
        for c in cases:
            print(json.dumps({"name": c["name"], **evaluate(c)}, indent=1))
        return 0
    doc = Path(args.doc).read_text()
    failed = 0
    for c in cases:
        got = evaluate(c)
        for field in ("entries", "lattice_first_16_bytes", "state_root"):
            if got[field] != c[field]:
                print(f"{c['name']}: {field}: the vectors say {c[field]}, this implementation "
                      f"computes {got[field]}")
                failed += 1
        if c["state_root"] not in doc:
            print(f"{c['name']}: docs/formats.md does not quote the state root {c['state_root']}")
            failed += 1
    print(f"lattice_vectors.py: {len(cases)} cases, {failed} mismatches")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
