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

// The misses stay out of line so that the hits, most reads after a commit, inline the cache
// lookup into a small body (BM_state_reads, bench/micro/store_bench.cpp).

[[gnu::noinline]] state::ReadResult<state::Account> account_from_disk(Store::Impl& impl,
                                                                      const Address& address) {
    const uint64_t seen = impl.epoch.now();
    auto v = impl.get(kAccounts, address_key(address));
    if (!v) return unexpected(read_error(v.error()));
    std::optional<state::Account> a;
    if (*v) {
        a = parse_account_document(**v);
        if (!a)
            return unexpected(state::ReadError{
                state::ReadErrorCode::corruption,
                "the stored account document of " + to_hex(address) + " does not parse"});
    }
    impl.accounts->fill(address, a, impl.epoch, seen);
    return a;
}

[[gnu::noinline]] state::ReadResult<u256> user_from_disk(Store::Impl& impl,
                                                         const std::string& key) {
    const uint64_t seen = impl.epoch.now();
    auto v = impl.get(kUsers, key);
    if (!v) return unexpected(read_error(v.error()));
    std::optional<u256> b;
    if (*v) {
        b = parse_user_document(**v);
        if (!b)
            return unexpected(state::ReadError{
                state::ReadErrorCode::corruption,
                "the stored document of user " + to_hex(as_bytes(key)) + " does not parse"});
    }
    impl.users->put_if(key, b, [&] { return impl.epoch.unchanged_since(seen); });
    return b;
}

}  // namespace

state::ReadResult<state::Account> Store::account(const Address& address) const {
    if (auto cached = m_impl->accounts->find(address)) return *cached;
    return account_from_disk(*m_impl, address);
}

state::ReadResult<u256> Store::user(std::string_view name) const {
    std::string key{name};
    if (auto cached = m_impl->users->find(key)) return *cached;
    return user_from_disk(*m_impl, key);
}

}  // namespace barrel::store
