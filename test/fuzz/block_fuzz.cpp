// libFuzzer target for stage 1: decode_block, transaction_hashes, decode_tx_list and split_block
// on arbitrary bytes.
//
// Decoding is strict, so a block that decodes is the canonical encoding of what it decoded to:
// with an offset-indexed transaction list, encode_block(header, tx_encodings) gives back exactly
// the input; with a plain RLP list, [header, encode_plain_tx_list(tx_encodings)] does, and the
// block re-encoded with the offset index decodes to the same header and transactions. Every decoded
// transaction re-encodes to its slot, every hash is keccak256 of what it names, and every view
// points into the block's own bytes. Errors name themselves and carry an index exactly when they
// concern one transaction. Then the input is walked as a chain file with split_block, decoding each
// block. Serial only: the parallel path runs the same per-slot code (and is covered by the unit
// tests and TSan).
//
// Seed corpus: test/fuzz/corpus/block/ (scripts/make_fuzz_corpus.py block: small blocks of mixed
// official transactions, an empty block, plain-list blocks, a chain of three blocks).

#include <barrel/block/block.hpp>
#include <barrel/block/merkle.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/rlp/encode.hpp>

#include "fuzz_check.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace barrel;
using fuzz::same;
using fuzz::within;

constexpr const char* kFuzzTarget = "block_fuzz";  // names the target in FUZZ_CHECK reports
using block::BlockErrorCode;

namespace {

/// Whether the error kind is one that names a transaction index.
bool has_index(BlockErrorCode c) noexcept {
    return c == BlockErrorCode::offsets_not_increasing ||
           c == BlockErrorCode::offset_out_of_range || c == BlockErrorCode::slot_trailing_bytes ||
           c == BlockErrorCode::malformed_tx;
}

void check_error(const block::BlockError& e, BytesView input) {
    const std::string text = describe(e);
    FUZZ_CHECK(!text.empty() && text.find("unknown") == std::string::npos);
    FUZZ_CHECK(e.tx_index.has_value() == has_index(e.code));
    // Stage 1 never reports what only stage 2 can know.
    FUZZ_CHECK(e.code != BlockErrorCode::invalid_tx && e.code != BlockErrorCode::wrong_chain_id);
}

/// The invariants of any decoded block or list, against the bytes it was decoded from.
void check_decoded(const block::Block& b, BytesView input) {
    const size_t n = b.tx_encodings.size();
    FUZZ_CHECK(same(b.wire, input));
    FUZZ_CHECK(b.txs.size() == n && b.tx_hashes.size() == n && b.senders.empty());
    for (size_t i = 0; i < n; ++i) {
        const BytesView enc = b.tx_encodings[i];
        FUZZ_CHECK(!enc.empty());
        FUZZ_CHECK(within(enc, b.wire));
        FUZZ_CHECK(within(b.txs[i].data, enc));
        FUZZ_CHECK(b.tx_hashes[i] == keccak256(enc));
        FUZZ_CHECK(same(tx::encode(b.txs[i]), enc));  // transactions are canonical too
    }
    (void)block::merkle_root(b.tx_hashes);
}

/// True if the txs item of the wire block `input` (known to decode) is an RLP string, that is
/// an offset-indexed list rather than a plain list.
bool uses_index(BytesView input) {
    auto body = rlp::decode_list(input);
    if (!body) std::abort();
    BytesView rest = *body;
    if (!rlp::decode_list(rest)) std::abort();  // the header
    return !rest.empty() && rest[0] < 0xc0;
}

void fuzz_block(BytesView input) {
    auto decoded = block::decode_block(Bytes(input.begin(), input.end()), false);
    // The framing-only reading: on every input it either errs with an error that names itself,
    // or lists keccak256 of each slot; on a block that decodes, exactly decode's hashes.
    const auto hashes = block::transaction_hashes(input);
    if (!hashes) check_error(hashes.error(), input);
    if (!decoded) {
        check_error(decoded.error(), input);
        return;
    }
    const block::Block& b = *decoded;
    check_decoded(b, input);
    FUZZ_CHECK(hashes.has_value() && *hashes == b.tx_hashes);
    FUZZ_CHECK(b.header.has_value());
    FUZZ_CHECK(b.hash == block::hash_of(*b.header));

    const Bytes indexed = block::encode_block(*b.header, b.tx_encodings);
    if (uses_index(input)) {
        FUZZ_CHECK(same(indexed, input));
        return;
    }
    // A plain list is canonical too (go-ethereum's form exactly) ...
    Bytes payload = block::encode(*b.header);
    const Bytes plain = block::encode_plain_tx_list(b.tx_encodings);
    payload.insert(payload.end(), plain.begin(), plain.end());
    Bytes plain_block;
    rlp::encode_list(plain_block, payload);
    FUZZ_CHECK(same(plain_block, input));
    // ... and the same block in the indexed form decodes to the same thing.
    auto again = block::decode_block(indexed, false);
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(*again->header == *b.header && again->hash == b.hash);
    FUZZ_CHECK(again->tx_hashes == b.tx_hashes);
}

void fuzz_tx_list(BytesView input) {
    auto decoded = block::decode_tx_list(Bytes(input.begin(), input.end()), false);
    if (!decoded) {
        check_error(decoded.error(), input);
        return;
    }
    const block::Block& l = *decoded;
    check_decoded(l, input);
    FUZZ_CHECK(!l.header.has_value() && l.hash.is_zero());
    if (input[0] < 0xc0) {
        // An offset-indexed list in an RLP string: canonical, so it re-encodes to the input.
        Bytes payload;
        block::encode_indexed_txs(payload, l.tx_encodings);
        Bytes wrapped;
        rlp::encode(wrapped, BytesView{payload});
        FUZZ_CHECK(same(wrapped, input));
    } else {
        FUZZ_CHECK(same(block::encode_plain_tx_list(l.tx_encodings), input));
    }
}

void fuzz_chain(BytesView input) {
    BytesView rest = input;
    while (!rest.empty()) {
        const size_t before = rest.size();
        auto one = block::split_block(rest);
        if (!one) {
            check_error(one.error(), input);
            FUZZ_CHECK(one.error().code == BlockErrorCode::malformed_block);
            return;
        }
        FUZZ_CHECK(!one->empty() && one->size() + rest.size() == before);
        FUZZ_CHECK(one->data() + one->size() == rest.data());
        fuzz_block(*one);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const BytesView input{data, size};
    fuzz_block(input);
    fuzz_tx_list(input);
    fuzz_chain(input);
    return 0;
}
