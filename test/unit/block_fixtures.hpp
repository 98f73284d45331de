#pragma once
/// @file
/// Deterministic signed transactions and blocks for the block tests (and the block
/// micro-benchmark): every kind of transaction barrel accepts, each signed by its own key, with
/// the signer's address known up front so tests can check recovery against it.

#include <barrel/block/block.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/tx/transaction.hpp>

#include <cstdlib>
#include <string>
#include <vector>

namespace barrel::test {

/// The transaction kinds of a mixed block, in the order mixed_txs() cycles through them.
enum class TxKind : uint8_t {
    legacy_pre155,  ///< v = 27/28, no chain id
    legacy_155,     ///< v = chain_id * 2 + 35/36
    access_list,    ///< type 1 with one access-list entry
    dynamic_fee,    ///< type 2 with calldata
};
inline constexpr size_t kTxKinds = 4;

/// A valid secp256k1 secret derived from (domain, index): keccak256 of both, which is below the
/// curve order with overwhelming probability (checked).
inline Hash private_key(uint64_t index, uint64_t domain = 0) {
    uint8_t seed[16];
    for (int i = 0; i < 8; ++i) {
        seed[i] = static_cast<uint8_t>(domain >> (56 - 8 * i));
        seed[8 + i] = static_cast<uint8_t>(index >> (56 - 8 * i));
    }
    const Hash key = keccak256(BytesView{seed, sizeof seed});
    if (!tx::address_of(key)) std::abort();
    return key;
}

inline Address address_of_key(const Hash& key) {
    auto a = tx::address_of(key);
    if (!a) std::abort();
    return *a;
}

/// Calldata shared by the transactions that carry some (Transaction::data is a view).
inline BytesView sample_calldata() {
    static const Bytes data{0xa9, 0x05, 0x9c, 0xbb, 0x00, 0x00, 0x01, 0x02, 0x03};
    return data;
}

/// An unsigned transaction of the given kind; `salt` varies recipient and value so that no two
/// transactions of a fixture are equal.
inline tx::Transaction unsigned_tx(TxKind kind, uint64_t chain_id, uint64_t nonce, uint64_t salt) {
    tx::Transaction t;
    t.nonce = nonce;
    t.gas_limit = 100'000;
    Address to;
    for (size_t i = 0; i < 8; ++i) to[12 + i] = static_cast<uint8_t>(salt >> (56 - 8 * i));
    to[0] = 0x42;
    t.to = to;
    t.value = u256{1'000'000'000} * (salt + 1);
    switch (kind) {
        case TxKind::legacy_pre155:
            t.type = tx::TxType::legacy;
            t.max_fee_per_gas = t.max_priority_fee_per_gas = 20'000'000'000ULL;
            break;
        case TxKind::legacy_155:
            t.type = tx::TxType::legacy;
            t.chain_id = chain_id;
            t.max_fee_per_gas = t.max_priority_fee_per_gas = 20'000'000'000ULL;
            break;
        case TxKind::access_list: {
            t.type = tx::TxType::access_list;
            t.chain_id = chain_id;
            t.max_fee_per_gas = t.max_priority_fee_per_gas = 10'000'000'000ULL;
            tx::AccessListEntry e;
            e.address = to;
            Hash key;
            key[31] = static_cast<uint8_t>(salt);
            e.storage_keys.push_back(key);
            t.access_list.push_back(e);
            break;
        }
        case TxKind::dynamic_fee:
            t.type = tx::TxType::dynamic_fee;
            t.chain_id = chain_id;
            t.max_priority_fee_per_gas = 1'000'000'000ULL;
            t.max_fee_per_gas = 30'000'000'000ULL;
            t.data = sample_calldata();
            break;
    }
    return t;
}

/// Signs and encodes.
inline Bytes sign_and_encode(tx::Transaction t, const Hash& key) {
    if (!tx::sign(t, key)) std::abort();
    return tx::encode(t);
}

/// Signed transactions with their senders; `views()` gives what the block encoders take.
struct TxSet {
    std::vector<Bytes> encodings;
    std::vector<Address> senders;
    std::vector<Hash> keys;

    std::vector<BytesView> views() const {
        std::vector<BytesView> v;
        v.reserve(encodings.size());
        for (const auto& e : encodings) v.emplace_back(e);
        return v;
    }
    size_t size() const noexcept { return encodings.size(); }
};

/// n valid transactions cycling through all kinds, transaction i signed by key (i, domain).
inline TxSet mixed_txs(size_t n, uint64_t chain_id = 1, uint64_t domain = 1) {
    TxSet s;
    for (size_t i = 0; i < n; ++i) {
        const Hash key = private_key(i, domain);
        const auto kind = static_cast<TxKind>(i % kTxKinds);
        s.encodings.push_back(sign_and_encode(unsigned_tx(kind, chain_id, i / kTxKinds, i), key));
        s.senders.push_back(address_of_key(key));
        s.keys.push_back(key);
    }
    return s;
}

/// n EIP-155 legacy value transfers (21,000 gas, no calldata) from n distinct keys: the
/// benchmark block of the design brief.
inline TxSet transfer_txs(size_t n, uint64_t chain_id = 1, uint64_t domain = 7) {
    TxSet s;
    for (size_t i = 0; i < n; ++i) {
        const Hash key = private_key(i, domain);
        tx::Transaction t = unsigned_tx(TxKind::legacy_155, chain_id, 0, i);
        t.gas_limit = 21'000;
        s.encodings.push_back(sign_and_encode(t, key));
        s.senders.push_back(address_of_key(key));
        s.keys.push_back(key);
    }
    return s;
}

/// A header with every field distinct and non-zero, so that a field mix-up shows.
inline block::Header sample_header(uint64_t chain_id = 1, uint64_t number = 7) {
    block::Header h;
    for (size_t i = 0; i < 32; ++i) {
        h.parent_hash[i] = static_cast<uint8_t>(0x10 + i);
        h.txs_root[i] = static_cast<uint8_t>(0x40 + i);
        h.receipts_root[i] = static_cast<uint8_t>(0x70 + i);
        h.state_root[i] = static_cast<uint8_t>(0xa0 + i);
    }
    for (size_t i = 0; i < 20; ++i) h.coinbase[i] = static_cast<uint8_t>(0xd0 + i);
    h.number = number;
    h.timestamp = 1'700'000'000;
    h.gas_limit = 30'000'000;
    h.gas_used = 21'000;
    h.chain_id = chain_id;
    return h;
}

}  // namespace barrel::test
