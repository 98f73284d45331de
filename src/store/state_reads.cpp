// The store as a StateReader: the caches first, RocksDB on a miss, and a miss's value cached only
// if no commit overtook the read (state_cache.hpp, CommitEpoch). A read that fails is returned
// as a ReadError: it happens inside the execute stage, which turns it into its own error.

#include <barrel/core/hex.hpp>
#include <barrel/store/documents.hpp>

#include "store_impl.hpp"

namespace barrel::store {

namespace {

/// A store error on the read path as the state's error: only corruption stays corruption.
state::ReadError read_error(const StoreError& e) {
    return {e.code == StoreErrorCode::corruption ? state::ReadErrorCode::corruption
                                                 : state::ReadErrorCode::io,
            "state read: " + e.message};
}

}  // namespace

state::ReadResult<state::Account> Store::account(const Address& address) const {
    if (auto cached = m_impl->accounts->find(address)) return *cached;
    const uint64_t seen = m_impl->epoch.now();
    auto v = m_impl->get(kAccounts, address_key(address));
    if (!v) return unexpected(read_error(v.error()));
    std::optional<state::Account> a;
    if (*v) {
        a = parse_account_document(**v);
        if (!a)
            return unexpected(state::ReadError{
                state::ReadErrorCode::corruption,
                "the stored account document of " + to_hex(address) + " does not parse"});
    }
    m_impl->accounts->fill(address, a, m_impl->epoch, seen);
    return a;
}

state::ReadResult<u256> Store::user(std::string_view name) const {
    const std::string key{name};
    if (auto cached = m_impl->users->find(key)) return *cached;
    const uint64_t seen = m_impl->epoch.now();
    auto v = m_impl->get(kUsers, key);
    if (!v) return unexpected(read_error(v.error()));
    std::optional<u256> b;
    if (*v) {
        b = parse_user_document(**v);
        if (!b)
            return unexpected(state::ReadError{
                state::ReadErrorCode::corruption,
                "the stored document of user " + to_hex(as_bytes(name)) + " does not parse"});
    }
    m_impl->users->put_if(key, b, [&] { return m_impl->epoch.unchanged_since(seen); });
    return b;
}

}  // namespace barrel::store
