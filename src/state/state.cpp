#include <barrel/core/keccak.hpp>
#include <barrel/rlp/encode.hpp>
#include <barrel/state/state.hpp>

#include "core/keyed_hash.hpp"
#include "core/parallel.hpp"

#include <algorithm>
#include <string_view>

namespace barrel::state {

size_t StringHash::operator()(std::string_view s) const noexcept { return keyed_hash(s); }

namespace {
constexpr uint8_t kAccountKind = 0x01;
constexpr uint8_t kUserKind = 0x02;

/// Appends the write set's canonical encoding (docs/formats.md, "Write set and state root") to
/// one buffer, reusing scratch buffers: per-entry vectors and per-entry keccak updates cost more
/// than the hashing itself (docs/benchmarks.md, "Execute: hashing and the write set").
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

std::string_view to_string(ReadErrorCode code) noexcept {
    switch (code) {
        case ReadErrorCode::io: return "io";
        case ReadErrorCode::corruption: return "corruption";
    }
    return "unknown";
}

Hash hash_of(const WriteSet& writes, bool parallel) {
    // The sponge is serial by nature; the encoding is not. Entries are encoded in runs of
    // kRun, in parallel, and the runs are then fed to one sponge in order.
    constexpr size_t kRun = 256;
    const size_t total = writes.size();
    std::vector<Bytes> runs((total + kRun - 1) / kRun);
    for_each_index(runs.size(), parallel, [&](size_t r) {
        Bytes& encoding = runs[r];
        const size_t begin = r * kRun, end = std::min(total, begin + kRun);
        encoding.reserve((end - begin) * 80);
        EntryEncoder encoder{encoding};
        for (size_t e = begin; e < end; ++e) {
            if (e < writes.accounts.size()) {
                encoder.account(writes.accounts[e].first, writes.accounts[e].second);
            } else {
                const auto& [name, balance] = writes.users[e - writes.accounts.size()];
                encoder.user(name, balance);
            }
        }
    });
    return keccak256(runs);
}

Hash next_state_root(const Hash& parent_state_root, const WriteSet& writes, bool parallel) {
    // Nothing changed, nothing to commit to: an empty block keeps its parent's root, so a
    // consensus engine that makes a block whenever the app hash changes (CometBFT without empty
    // blocks) is not made to follow each empty block with another.
    if (writes.empty()) return parent_state_root;
    return keccak256(parent_state_root, hash_of(writes, parallel));
}

std::optional<Account> MemoryState::find_account(const Address& address) const {
    const auto it = m_accounts.find(address);
    if (it == m_accounts.end()) return std::nullopt;
    return it->second;
}

std::optional<u256> MemoryState::find_user(std::string_view name) const {
    const auto it = m_users.find(name);
    if (it == m_users.end()) return std::nullopt;
    return it->second;
}

void MemoryState::set_account(const Address& address, const Account& account) {
    m_accounts[address] = account;
}

void MemoryState::set_user(std::string_view name, const u256& balance) {
    m_users.insert_or_assign(std::string{name}, balance);
}

void MemoryState::apply(const WriteSet& writes) {
    for (const auto& [address, account] : writes.accounts) m_accounts[address] = account;
    for (const auto& [name, balance] : writes.users) m_users.insert_or_assign(name, balance);
}

}  // namespace barrel::state
