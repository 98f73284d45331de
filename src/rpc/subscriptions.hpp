#pragma once
// A WebSocket connection's JSON-RPC side: its messages run through Methods with the connection
// as their Subscriber, and its subscriptions (eth_subscribe: newHeads, newPendingTransactions,
// logs) turn the node's Events into go-ethereum's notifications:
//   {"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":ID,"result":...}}
//
// The Events listener runs on the publisher's thread (the sealer, an RPC worker): it only
// records what it is told and wakes the connection, whose worker then reads the headers and
// writes the notifications. Blocks are announced in order, each once, so what is recorded of
// them is a range of numbers: however many are committed while the connection is busy, each
// gets its newHeads notification, in order, and the record does not grow. Announced
// transactions are recorded one by one, up to a bound past which the connection is dropped.

#include "rpc/events.hpp"
#include "rpc/http_server.hpp"
#include "rpc/methods.hpp"
#include "rpc/subscriber.hpp"

#include <atomic>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace barrel::rpc {

struct SubscriptionLimits {
    /// Subscriptions one connection may hold at once (go-ethereum has no bound); one more is
    /// refused with -32000 "too many subscriptions (limit N)".
    size_t max_per_connection{128};
    /// Announced transactions not yet notified (the connection's work has not run since)
    /// past which the connection is dropped, 32 bytes each.
    size_t max_pending_backlog{64 * 1024};
    /// Blocks whose newHeads notifications one work writes; more are left to the next work,
    /// so a connection behind by many blocks takes its turns like any other.
    size_t blocks_per_work{64};
};

class Subscriptions final : public WsHandler, public Subscriber {
public:
    /// `connection` outlives it (it is the connection's handler).
    Subscriptions(Methods& methods, Node& node, WsConnection& connection,
                  const SubscriptionLimits& limits);
    ~Subscriptions() override;  ///< stops listening first

    std::unique_ptr<WsWork> begin_message(std::string text) override;
    std::unique_ptr<WsWork> begin_notify() override;

    /// params: [kind, kind's arguments...]. newHeads takes none; newPendingTransactions an
    /// optional false (full transactions are not sent); logs a filter object.
    Expected<std::string, Error> subscribe(const json& params) override;
    bool unsubscribe(std::string_view id) override;

    /// The notifications of what was announced since the last call, oldest first (run by
    /// begin_notify's work; wakes the connection again when blocks are left for later).
    std::vector<std::string> notifications();

private:
    enum class Kind : uint8_t { new_heads, pending_transactions, logs };
    struct Subscription {
        std::string id;
        Kind kind;
        /// The number of blocks (transactions) announced before it: it is notified of the
        /// ones after.
        uint64_t blocks_since;
        uint64_t pending_since;
    };
    /// What the listener recorded, under m_mutex.
    struct Record {
        uint64_t blocks_seen{0};  ///< blocks announced while listening
        uint64_t first_block{0};  ///< the number of the first not yet notified
        uint64_t blocks{0};       ///< how many are not yet notified (the last: blocks_seen)
        uint64_t pending_seen{0};
        std::vector<Hash> pending;  ///< the last pending.size() of pending_seen
        bool overflow{false};
    };

    /// The kind eth_subscribe's params name, its arguments checked.
    static Expected<Kind, Error> kind_of(const json& params);
    void on_block(uint64_t number);
    void on_pending(std::span<const Hash> hashes);
    std::string new_id() const;
    void head_notifications(std::vector<std::string>& out);
    void pending_notifications(std::vector<std::string>& out);

    Methods& m_methods;
    Node& m_node;
    WsConnection& m_connection;
    SubscriptionLimits m_limits;
    /// The connection's works alone (one at a time).
    std::vector<Subscription> m_subscriptions;
    std::atomic<size_t> m_pending_subscriptions{0};
    std::mutex m_mutex;
    Record m_record;
    /// Last: it is removed first, so no listener runs while the rest is destroyed.
    Events::Subscription m_listening;
};

}  // namespace barrel::rpc
