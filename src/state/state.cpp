#include <barrel/core/keccak.hpp>
#include <barrel/rlp/encode.hpp>
#include <barrel/state/state.hpp>

#include <string_view>

namespace barrel::state {

namespace {
constexpr uint8_t kAccountKind = 0x01;
constexpr uint8_t kUserKind = 0x02;

/// Appends the write set's canonical encoding (docs/formats.md, "Write set and state root") to
/// one buffer, reusing scratch buffers: per-entry vectors and per-entry keccak updates cost more
/// than the hashing itself (docs/benchmarks.md, "Execute").
class EntryEncoder {
public:
    explicit EntryEncoder(Bytes& out) : m_out{out} {}

    /// RLP([kind ‖ key, value]); `value` is already encoded.
    void entry(uint8_t kind, BytesView key, BytesView value) {
        m_key.assign(1, kind);
        m_key.insert(m_key.end(), key.begin(), key.end());
        m_payload.clear();
        rlp::encode(m_payload, BytesView{m_key});
        m_payload.insert(m_payload.end(), value.begin(), value.end());
        rlp::encode_list(m_out, m_payload);
    }
    void account(const Address& address, const Account& account) {
        m_value_payload.clear();
        rlp::encode(m_value_payload, account.nonce);
        rlp::encode(m_value_payload, account.balance);
        m_value.clear();
        rlp::encode_list(m_value, m_value_payload);
        entry(kAccountKind, address.view(), m_value);
    }
    void user(std::string_view name, const u256& balance) {
        m_value.clear();
        rlp::encode(m_value, balance);
        entry(kUserKind, as_bytes(name), m_value);
    }

private:
    Bytes& m_out;
    Bytes m_key, m_payload, m_value, m_value_payload;
};
}  // namespace

Hash hash_of(const WriteSet& writes) {
    Bytes encoding;
    encoding.reserve(writes.accounts.size() * 72 + writes.users.size() * 80);
    EntryEncoder encoder{encoding};
    for (const auto& [address, account] : writes.accounts) encoder.account(address, account);
    for (const auto& [name, balance] : writes.users) encoder.user(name, balance);
    return keccak256(encoding);
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
