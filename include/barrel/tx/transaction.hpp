#pragma once
/// @file
/// Ethereum transactions: legacy (with and without EIP-155), EIP-2930 (type 1) and EIP-1559
/// (type 2) in EIP-2718 envelopes. Decoding is strict and allocation-light: calldata is a view
/// into the encoding it was decoded from, so the encoding must outlive the Transaction.

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/rlp/decode.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace barrel::tx {

enum class TxType : uint8_t {
    legacy = 0,
    access_list = 1,  ///< EIP-2930
    dynamic_fee = 2,  ///< EIP-1559
};

struct AccessListEntry {
    Address address;
    std::vector<Hash> storage_keys;
    friend bool operator==(const AccessListEntry&, const AccessListEntry&) = default;
};

struct Transaction {
    TxType type{TxType::legacy};
    /// Absent only for a legacy transaction signed before EIP-155 (v = 27 or 28).
    std::optional<uint64_t> chain_id;
    uint64_t nonce{0};
    /// For legacy and type-1 transactions both fee fields hold the gas price.
    u256 max_priority_fee_per_gas;
    u256 max_fee_per_gas;
    uint64_t gas_limit{0};
    /// Absent for contract creation.
    std::optional<Address> to;
    u256 value;
    /// Calldata (init code for a creation): a view, see the file comment.
    BytesView data;
    std::vector<AccessListEntry> access_list;
    /// The signature: recovery id (y parity) and the (r, s) scalars.
    bool y_parity{false};
    u256 r;
    u256 s;

    const u256& gas_price() const noexcept { return max_fee_per_gas; }
    bool is_creation() const noexcept { return !to.has_value(); }

    friend bool operator==(const Transaction& a, const Transaction& b) noexcept {
        return a.type == b.type && a.chain_id == b.chain_id && a.nonce == b.nonce &&
               a.max_priority_fee_per_gas == b.max_priority_fee_per_gas &&
               a.max_fee_per_gas == b.max_fee_per_gas && a.gas_limit == b.gas_limit &&
               a.to == b.to && a.value == b.value &&
               std::equal(a.data.begin(), a.data.end(), b.data.begin(), b.data.end()) &&
               a.access_list == b.access_list && a.y_parity == b.y_parity && a.r == b.r &&
               a.s == b.s;
    }
};

/// Which part of a transaction an error concerns.
enum class Field : uint8_t {
    none,
    envelope,  ///< the outer list / type byte
    chain_id,
    nonce,
    gas_price,
    max_priority_fee_per_gas,
    max_fee_per_gas,
    gas_limit,
    to,
    value,
    data,
    access_list,
    v,
    r,
    s,
};

enum class [[nodiscard]] TxErrorCode : uint8_t{
    malformed_rlp,           ///< the field's RLP is malformed: see TxError::rlp
    unsupported_type,        ///< an envelope type other than 1 or 2
    too_few_fields,          ///< the transaction list ends before all fields were read
    too_many_fields,         ///< the transaction list has more items than the type defines
    invalid_v,               ///< legacy v not in {27, 28} or ≥ 35; typed y parity not 0 or 1
    invalid_signature,       ///< r or s is zero or not below the curve order
    high_s,                  ///< s above n/2 (EIP-2)
    recovery_failed,         ///< secp256k1 found no public key for the signature
    wrong_chain_id,          ///< signed for another chain
    nonce_too_big,           ///< nonce ≥ 2^64 − 1 (EIP-2681)
    intrinsic_gas_too_low,   ///< gas limit below the intrinsic gas
    fee_cap_overflow,        ///< gas_limit × max fee per gas does not fit 256 bits
    priority_fee_above_cap,  ///< max priority fee per gas above max fee per gas (EIP-1559)
    init_code_too_large,     ///< creation init code above 49,152 bytes (EIP-3860)
};

struct TxError {
    TxErrorCode code{TxErrorCode::malformed_rlp};
    Field field{Field::none};
    /// Meaningful only when code == malformed_rlp; every other error leaves it value-initialised,
    /// so == compares errors exactly.
    rlp::DecodingError rlp{};

    friend bool operator==(const TxError&, const TxError&) = default;
};

std::string_view to_string(TxErrorCode code) noexcept;
std::string_view to_string(Field field) noexcept;
/// One line naming what was wrong, e.g. "nonce: leading_zero" or "high_s".
std::string describe(const TxError& error);

/// Decodes exactly one transaction encoding (a legacy RLP list or type ‖ RLP list) that spans
/// the whole input. Checks the encoding only; see validate() for the stateless rules.
Expected<Transaction, TxError> decode(BytesView encoding);

/// The canonical network encoding (envelope for typed transactions, not wrapped in a string).
/// A typed transaction must carry a chain id.
void encode(Bytes& out, const Transaction& tx);
Bytes encode(const Transaction& tx);

/// keccak256 of the encoding: the transaction hash.
Hash hash_of(BytesView encoding) noexcept;

/// The hash the sender signs (EIP-155 for legacy with a chain id; type ‖ RLP of the unsigned
/// fields for typed transactions).
Hash signing_hash(const Transaction& tx);
/// The bytes whose keccak256 is signing_hash(tx), in `out` (replacing what it held).
void signing_payload(Bytes& out, const Transaction& tx);

/// Intrinsic gas under Shanghai/Cancun rules: 21,000 (+32,000 and 2 per init-code word for a
/// creation), 4 per zero and 16 per non-zero calldata byte, 2,400 per access-list address and
/// 1,900 per storage key.
uint64_t intrinsic_gas(const Transaction& tx) noexcept;

/// The price per gas the sender pays in a block of base fee `base_fee`: the gas price of a legacy
/// or access-list transaction; min(max fee, base fee + max priority fee) for EIP-1559 (the max fee
/// when the sum does not fit 256 bits).
u256 effective_gas_price(const Transaction& tx, const u256& base_fee) noexcept;
/// What the block's coinbase earns per gas: the effective gas price above the base fee, or 0.
u256 effective_tip(const Transaction& tx, const u256& base_fee) noexcept;

/// Maximum init code size for creation transactions (EIP-3860).
inline constexpr size_t kMaxInitCodeSize = 49'152;

/// The stateless validity checks of a transaction (everything that does not need state):
/// signature ranges and EIP-2 low s, chain id, nonce < 2^64 − 1, intrinsic gas, gas limit ×
/// fee cap overflow, priority fee ≤ fee cap, init code size.
Expected<void, TxError> validate(const Transaction& tx, uint64_t chain_id) noexcept;

/// Recovers the sender from the signature over `sighash` (= signing_hash(tx)). Thread-safe:
/// all threads share one read-only secp256k1 context.
Expected<Address, TxError> recover_sender(const Transaction& tx, const Hash& sighash) noexcept;

/// out[i] = recover_sender(*txs[i], signing_hash(*txs[i])) for every i below the shorter of the
/// two, with the same results; the keccak256 of the signing payloads and of the recovered keys
/// run four at a time (keccak256_many), which takes ~0.6 us per transaction off three one-by-one
/// hashes. For a loop body that recovers a few transactions together.
void recover_senders(std::span<const Transaction* const> txs,
                     std::span<Expected<Address, TxError>> out);

/// The address of a secp256k1 private key (for tests and workload generation).
std::optional<Address> address_of(const Hash& private_key) noexcept;

/// Signs tx in place (sets y_parity, r, s) with a low-s RFC 6979 signature. Returns false if
/// the key is not a valid secp256k1 secret.
bool sign(Transaction& tx, const Hash& private_key) noexcept;

}  // namespace barrel::tx

struct secp256k1_context_struct;

namespace barrel::tx {
/// The one secp256k1 context of the process: created and randomised once, then only read, which
/// libsecp256k1 documents as safe from any number of threads.
const secp256k1_context_struct* shared_secp256k1_context() noexcept;
}  // namespace barrel::tx
