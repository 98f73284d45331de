#pragma once
/// @file
/// The store's caches of state values in front of RocksDB, and the epoch protocol that keeps a
/// read miss's fill from putting back a value a commit has just replaced (docs/architecture.md,
/// "Stage 4"). Internal to the store.

#include <barrel/core/bytes.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/state/state.hpp>

#include "core/keyed_hash.hpp"
#include "core/seqlock_cache.hpp"
#include "store/sharded_cache.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace barrel::store {

/// Orders the state caches' read-miss fills against commits. A fill must not put back a value
/// that a commit has just replaced: a reader that fetched a key from RocksDB before a commit's
/// write but stored it after the commit's write-through would leave the old value cached for
/// good. A commit therefore makes the epoch odd from before its write until after its
/// write-through, and a fill stores only if the epoch is still the even value the reader saw
/// before fetching, checked under the lock that the write-through of the same key also takes.
/// One commit at a time (the store's contract).
class CommitEpoch {
public:
    /// What a reader notes before fetching from RocksDB.
    uint64_t now() const noexcept { return m_epoch.load(std::memory_order_acquire); }
    /// Whether a value fetched at `seen` may still be cached: no commit was under way then or
    /// since.
    bool unchanged_since(uint64_t seen) const noexcept { return seen % 2 == 0 && now() == seen; }
    void begin() noexcept { m_epoch.fetch_add(1, std::memory_order_acq_rel); }
    void end() noexcept { m_epoch.fetch_add(1, std::memory_order_acq_rel); }

private:
    std::atomic<uint64_t> m_epoch{0};
};

/// Holds a commit's epoch odd for its lifetime: from before the write until after the
/// write-through, on every path out of the commit.
class CommitInProgress {
public:
    explicit CommitInProgress(CommitEpoch& epoch) noexcept : m_epoch{epoch} { m_epoch.begin(); }
    ~CommitInProgress() { m_epoch.end(); }
    CommitInProgress(const CommitInProgress&) = delete;
    CommitInProgress& operator=(const CommitInProgress&) = delete;

private:
    CommitEpoch& m_epoch;
};

/// DagTransfer user → balance (nullopt: known absent), bounded (Options::user_cache_entries),
/// written through on commit and filled on a read miss (CommitEpoch).
using UserCache = ShardedCache<std::string, std::optional<u256>, state::StringHash>;

/// The store's cache of account values (present or absent), bounded, read without locks
/// (core/seqlock_cache.hpp), written through on commit and filled on a read miss (CommitEpoch).
class AccountCache {
public:
    explicit AccountCache(size_t bytes) : m_cache{bytes} {}

    std::optional<std::optional<state::Account>> find(const Address& a) const noexcept {
        const auto found = m_cache.find(a.bytes, hash(a));
        if (!found) return std::nullopt;
        if (found->flag) return std::optional<state::Account>{};  // cached as absent
        return unpack(found->value);
    }

    /// Caches a value fetched from RocksDB when the epoch was `seen`, unless a commit began since.
    void fill(const Address& a, const std::optional<state::Account>& v, const CommitEpoch& epoch,
              uint64_t seen) noexcept {
        m_cache.put_if(a.bytes, hash(a), pack(v), !v.has_value(),
                       [&] { return epoch.unchanged_since(seen); });
    }
    void put(const Address& a, const std::optional<state::Account>& v) noexcept {
        m_cache.put(a.bytes, hash(a), pack(v), !v.has_value());
    }
    void clear() noexcept { m_cache.clear(); }

private:
    using Cache = SeqlockCache<20, 40>;  // address → nonce (8 bytes) and balance (32)

    static uint64_t hash(const Address& a) noexcept { return keyed_hash(as_chars(a.view())); }
    static Cache::Value pack(const std::optional<state::Account>& v) noexcept {
        Cache::Value out{};
        if (!v) return out;
        std::memcpy(out.data(), &v->nonce, 8);
        const auto limbs = to_limbs(v->balance);
        std::memcpy(out.data() + 8, limbs.data(), 32);
        return out;
    }
    static state::Account unpack(const Cache::Value& value) noexcept {
        state::Account a;
        std::memcpy(&a.nonce, value.data(), 8);
        std::array<uint64_t, 4> limbs;
        std::memcpy(limbs.data(), value.data() + 8, 32);
        a.balance = from_limbs(limbs);
        return a;
    }

    Cache m_cache;
};

}  // namespace barrel::store
