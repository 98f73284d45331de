#include <barrel/core/keccak.hpp>
#include <barrel/tx/transaction.hpp>

#include <secp256k1.h>
#include <secp256k1_recovery.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <random>

namespace barrel::tx {

namespace {

secp256k1_context* make_context() noexcept {
    secp256k1_context* ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
    if (ctx == nullptr) std::abort();
    // Randomisation blinds signing against side channels; it is the context's only mutation and
    // happens here, before any other thread can see the context.
    std::random_device rd;
    uint8_t seed[32];
    for (auto& b : seed) b = static_cast<uint8_t>(rd());
    if (secp256k1_context_randomize(ctx, seed) != 1) std::abort();
    return ctx;
}

Address address_of_pubkey(const secp256k1_pubkey& pubkey) noexcept {
    uint8_t serialized[65];
    size_t len = sizeof serialized;
    secp256k1_ec_pubkey_serialize(secp256k1_context_static, serialized, &len, &pubkey,
                                  SECP256K1_EC_UNCOMPRESSED);
    const Hash h = keccak256(BytesView{serialized + 1, 64});
    return Address::from_view(h.view().subspan(12));
}

}  // namespace

const secp256k1_context_struct* shared_secp256k1_context() noexcept {
    static const secp256k1_context* const ctx = make_context();
    return ctx;
}

namespace {

/// The public key that signed `sighash` with tx's (y_parity, r, s).
Expected<secp256k1_pubkey, TxError> recover_key(const Transaction& tx,
                                                const Hash& sighash) noexcept {
    uint8_t compact[64];
    store_be32(tx.r, compact);
    store_be32(tx.s, compact + 32);
    const auto* ctx = shared_secp256k1_context();
    secp256k1_ecdsa_recoverable_signature sig;
    if (secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, &sig, compact,
                                                            tx.y_parity ? 1 : 0) != 1)
        return unexpected(TxError{TxErrorCode::invalid_signature, Field::none, {}});
    secp256k1_pubkey pubkey;
    if (secp256k1_ecdsa_recover(ctx, &pubkey, &sig, sighash.data()) != 1)
        return unexpected(TxError{TxErrorCode::recovery_failed, Field::none, {}});
    return pubkey;
}

}  // namespace

Expected<Address, TxError> recover_sender(const Transaction& tx, const Hash& sighash) noexcept {
    const auto key = recover_key(tx, sighash);
    if (!key) return unexpected(key.error());
    return address_of_pubkey(*key);
}

void recover_senders(std::span<const Transaction* const> txs,
                     std::span<Expected<Address, TxError>> out) {
    // In runs of four, keccak256_many's width: each run's payloads and keys stay on the stack
    // but for the payloads' bytes, whose buffers the runs reuse.
    constexpr size_t kRun = 4;
    const size_t n = std::min(txs.size(), out.size());
    std::array<Bytes, kRun> payloads;
    for (size_t begin = 0; begin < n; begin += kRun) {
        const size_t count = std::min(kRun, n - begin);
        std::array<BytesView, kRun> views;
        std::array<Hash, kRun> sighashes;
        for (size_t k = 0; k < count; ++k) {
            signing_payload(payloads[k], *txs[begin + k]);
            views[k] = payloads[k];
        }
        keccak256_many(std::span{views}.first(count), sighashes);
        // The recovered keys (uncompressed; hashed without their 0x04 prefix) of the signatures
        // that recover, packed from the front; `from[j]` is the transaction key j belongs to.
        std::array<std::array<uint8_t, 65>, kRun> keys;
        std::array<size_t, kRun> from;
        size_t recovered = 0;
        for (size_t k = 0; k < count; ++k) {
            const auto key = recover_key(*txs[begin + k], sighashes[k]);
            if (!key) {
                out[begin + k] = unexpected(key.error());
                continue;
            }
            size_t len = keys[recovered].size();
            secp256k1_ec_pubkey_serialize(secp256k1_context_static, keys[recovered].data(), &len,
                                          &*key, SECP256K1_EC_UNCOMPRESSED);
            views[recovered] = BytesView{keys[recovered].data() + 1, 64};
            from[recovered++] = begin + k;
        }
        std::array<Hash, kRun> key_hashes;
        keccak256_many(std::span{views}.first(recovered), key_hashes);
        for (size_t j = 0; j < recovered; ++j)
            out[from[j]] = Address::from_view(key_hashes[j].view().subspan(12));
    }
}

std::optional<Address> address_of(const Hash& private_key) noexcept {
    secp256k1_pubkey pubkey;
    if (secp256k1_ec_pubkey_create(shared_secp256k1_context(), &pubkey, private_key.data()) != 1)
        return std::nullopt;
    return address_of_pubkey(pubkey);
}

bool sign(Transaction& tx, const Hash& private_key) noexcept {
    const Hash sighash = signing_hash(tx);
    secp256k1_ecdsa_recoverable_signature sig;
    const auto* ctx = shared_secp256k1_context();
    if (secp256k1_ecdsa_sign_recoverable(ctx, &sig, sighash.data(), private_key.data(), nullptr,
                                         nullptr) != 1)
        return false;
    uint8_t compact[64];
    int recid = 0;
    secp256k1_ecdsa_recoverable_signature_serialize_compact(ctx, compact, &recid, &sig);
    tx.r = load_be({compact, 32});
    tx.s = load_be({compact + 32, 32});
    tx.y_parity = recid == 1;
    return true;
}

}  // namespace barrel::tx
