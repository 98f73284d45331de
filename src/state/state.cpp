#include <barrel/core/keccak.hpp>
#include <barrel/rlp/encode.hpp>
#include <barrel/state/state.hpp>

#include <cryptopp/keccak.h>

namespace barrel::state {

namespace {
constexpr uint8_t kAccountKind = 0x01;
constexpr uint8_t kUserKind = 0x02;

/// RLP([kind ‖ key, value]) appended to `out`; `value` is already encoded.
void encode_entry(Bytes& out, uint8_t kind, BytesView key, BytesView value) {
    Bytes k;
    k.reserve(1 + key.size());
    k.push_back(kind);
    k.insert(k.end(), key.begin(), key.end());
    Bytes payload;
    rlp::encode(payload, BytesView{k});
    payload.insert(payload.end(), value.begin(), value.end());
    rlp::encode_list(out, payload);
}
}  // namespace

Hash hash_of(const WriteSet& writes) {
    CryptoPP::Keccak_256 k;
    Bytes entry;
    for (const auto& [address, account] : writes.accounts) {
        entry.clear();
        Bytes value_payload;
        rlp::encode(value_payload, account.nonce);
        rlp::encode(value_payload, account.balance);
        Bytes value;
        rlp::encode_list(value, value_payload);
        encode_entry(entry, kAccountKind, address, value);
        k.Update(entry.data(), entry.size());
    }
    for (const auto& [name, balance] : writes.users) {
        entry.clear();
        Bytes value;
        rlp::encode(value, balance);
        encode_entry(entry, kUserKind, as_bytes(name), value);
        k.Update(entry.data(), entry.size());
    }
    Hash out;
    k.Final(out.data());
    return out;
}

Hash next_state_root(const Hash& parent_state_root, const WriteSet& writes) {
    return keccak256(parent_state_root, hash_of(writes));
}

std::optional<Account> MemoryState::account(const Address& address) const {
    const auto it = m_accounts.find(address);
    if (it == m_accounts.end()) return std::nullopt;
    return it->second;
}

std::optional<u256> MemoryState::user(std::string_view name) const {
    const auto it = m_users.find(name);
    if (it == m_users.end()) return std::nullopt;
    return it->second;
}

void MemoryState::set_account(const Address& address, const Account& account) { m_accounts[address] = account; }

void MemoryState::set_user(std::string_view name, const u256& balance) {
    m_users.insert_or_assign(std::string{name}, balance);
}

void MemoryState::apply(const WriteSet& writes) {
    for (const auto& [address, account] : writes.accounts) m_accounts[address] = account;
    for (const auto& [name, balance] : writes.users) m_users.insert_or_assign(name, balance);
}

}  // namespace barrel::state
