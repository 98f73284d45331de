#include <barrel/state/state.hpp>

#include "core/keyed_hash.hpp"

#include <algorithm>
#include <string_view>

namespace barrel::state {

size_t StringHash::operator()(std::string_view s) const noexcept { return keyed_hash(s); }

std::string_view to_string(ReadErrorCode code) noexcept {
    switch (code) {
        case ReadErrorCode::io: return "io";
        case ReadErrorCode::corruption: return "corruption";
    }
    return "unknown";
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
