#include <barrel/core/keccak.hpp>
#include <barrel/tx/transaction.hpp>

#include <secp256k1.h>
#include <secp256k1_recovery.h>

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

Expected<Address, TxError> recover_sender(const Transaction& tx, const Hash& sighash) noexcept {
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
    return address_of_pubkey(pubkey);
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
