#pragma once
// What the node announces to the RPC layer as it happens: a block committed, transactions
// admitted to the pool. Filters (eth_newBlockFilter, eth_newPendingTransactionFilter) and
// WebSocket subscriptions (eth_subscribe newHeads / newPendingTransactions) listen here, so
// neither polls the store or the pool for what changed.
//
// Publishers (the sealer's commit callback, the RPC workers after an admission) call a
// listener on their own thread: a listener must only record what it is told (append to a
// bounded buffer, wake a writer) and never block or call back into Events.

#include <barrel/core/bytes.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace barrel::rpc {

class Events {
public:
    struct Listener {
        /// A block was committed: it is readable from any snapshot taken from now on. Blocks
        /// are announced in order, each once.
        std::function<void(uint64_t number, const Hash& hash)> on_block{};
        /// Transactions were admitted to the pool (replacements included), in admission order.
        std::function<void(std::span<const Hash> hashes)> on_pending{};
    };

    /// Removes its listener when destroyed (after which the listener is never called again,
    /// and no call of it is in progress).
    class Subscription {
    public:
        Subscription() = default;
        Subscription(Subscription&& other) noexcept { *this = std::move(other); }
        Subscription& operator=(Subscription&& other) noexcept;
        ~Subscription() { reset(); }
        void reset();
        explicit operator bool() const noexcept { return m_events != nullptr; }

    private:
        friend class Events;
        Subscription(Events* events, uint64_t id) : m_events{events}, m_id{id} {}
        Events* m_events{nullptr};
        uint64_t m_id{0};
    };

    /// The listener is called for everything published after listen() returns.
    [[nodiscard]] Subscription listen(Listener listener);

    void publish_block(uint64_t number, const Hash& hash);
    void publish_pending(std::span<const Hash> hashes);

    size_t listeners() const;

private:
    struct Entry {
        uint64_t id;
        Listener listener;
    };
    void remove(uint64_t id);

    /// Held while a listener runs and while one is removed: removal waits for calls in
    /// progress, so a listener never runs after its Subscription is gone. Publishers are the
    /// sealer and the RPC workers, and listeners only record, so the hold is short.
    mutable std::mutex m_mutex;
    std::vector<Entry> m_entries;
    uint64_t m_next_id{1};
};

}  // namespace barrel::rpc
