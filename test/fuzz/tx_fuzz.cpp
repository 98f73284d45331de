// libFuzzer target for the transaction decoder.
//
// Decoding is strict, so an input that decodes is the canonical encoding of what it decoded to:
// encode() must give back exactly the input, and decoding that again must give the same
// transaction. Whatever decodes is then run through the stateless checks and the signing hash
// (secp256k1 recovery is left out: at ~50 µs a call it would dominate every run). Any violation
// aborts.
//
// Seed corpus: test/fuzz/corpus/tx_fuzz/ (scripts/make_fuzz_corpus.py: every txbytes of the
// official TransactionTests).

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/tx/transaction.hpp>

#include "fuzz_check.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace barrel;
using fuzz::same;
using fuzz::within;

constexpr const char* kFuzzTarget = "tx_fuzz";  // names the target in FUZZ_CHECK reports

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const BytesView input{data, size};
    const auto decoded = tx::decode(input);
    if (!decoded) {
        // Every error names itself (no "unknown" from a code decode made up).
        const auto text = tx::describe(decoded.error());
        FUZZ_CHECK(!text.empty() && text.find("unknown") == std::string::npos);
        return 0;
    }
    const tx::Transaction& t = *decoded;

    // Structural invariants of a decoded transaction.
    FUZZ_CHECK(within(t.data, input));  // calldata is a view into the input
    FUZZ_CHECK(t.type == tx::TxType::legacy || t.chain_id.has_value());
    if (t.type != tx::TxType::dynamic_fee)
        FUZZ_CHECK(t.max_priority_fee_per_gas == t.max_fee_per_gas);
    if (t.type == tx::TxType::legacy) FUZZ_CHECK(t.access_list.empty());

    // Canonical: re-encoding reproduces the input byte for byte, and decodes to the same value.
    const Bytes again = tx::encode(t);
    FUZZ_CHECK(same(again, input));
    const auto redecoded = tx::decode(again);
    FUZZ_CHECK(redecoded.has_value() && *redecoded == t);

    FUZZ_CHECK(tx::hash_of(input) == keccak256(input));
    (void)tx::signing_hash(t);
    const uint64_t gas = tx::intrinsic_gas(t);
    FUZZ_CHECK(gas >= 21'000);
    const auto valid = tx::validate(t, t.chain_id.value_or(1));
    if (valid) {
        FUZZ_CHECK(gas <= t.gas_limit);
        FUZZ_CHECK(t.max_priority_fee_per_gas <= t.max_fee_per_gas);
    } else {
        const auto text = tx::describe(valid.error());
        FUZZ_CHECK(!text.empty() && text.find("unknown") == std::string::npos);
    }
    return 0;
}
