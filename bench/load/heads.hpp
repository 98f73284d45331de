#pragma once
// What wakes a watcher (net_watch.cpp) when its node has a new block: the node's own push of
// new heads over a WebSocket, as a client that follows a chain uses it. Polling the next height
// every few milliseconds costs the node a request, two thread wake-ups and a snapshot of its
// store each time (about 200 a second per node at 5 ms), which a load run would count as the
// node's cost per transaction; a subscription costs it one message per block.
//
// - Ethereum (barrel-node, go-ethereum, anvil): eth_subscribe ["newHeads"] on the JSON-RPC URL,
//   upgraded to a WebSocket on the same port.
// - CometBFT (the kvstore runs): subscribe to tm.event='NewBlockHeader' at its RPC's /websocket.
//
// A node that has no subscription to give (an HTTP-only endpoint refuses the upgrade), or that
// does not answer (killed, paused, restarting), is polled: wait() then only sleeps, and a closed
// subscription is opened again after kReopenAfter. A head is only a wake-up: the watcher asks
// for the block by height either way, so a missed notification costs latency, never a block.

#include <barrel/core/endpoint.hpp>

#include <chrono>
#include <memory>

namespace barrel::load {

class HeadSignal {
public:
    enum class Protocol { ethereum, cometbft };

    /// Subscribes now (before a clock starts, where the caller can): `url` is the node's
    /// JSON-RPC (ethereum) or CometBFT RPC (cometbft) URL.
    HeadSignal(const HttpUrl& url, Protocol protocol);
    ~HeadSignal();
    HeadSignal(const HeadSignal&) = delete;
    HeadSignal& operator=(const HeadSignal&) = delete;

    /// Returns when a new head arrives (true) or after `timeout` (false). Without a
    /// subscription, sleeps `poll` and returns false, after trying to open one again if the last
    /// try, or the loss of the last one, is kReopenAfter old.
    bool wait(std::chrono::milliseconds timeout, std::chrono::milliseconds poll);

    /// Whether heads are pushed now.
    bool subscribed() const noexcept;
    /// Heads received since the start; the subscriptions' confirmations are not counted.
    size_t heads() const noexcept;
    /// Subscriptions opened since the start (a node restarted is subscribed to again).
    size_t subscriptions() const noexcept;

    /// How long an attempt to subscribe (connect, upgrade, subscribe, its answer) may take.
    static constexpr std::chrono::milliseconds kOpenTimeout{2000};
    /// How often a node without a subscription is asked for one again.
    static constexpr std::chrono::milliseconds kReopenAfter{500};

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace barrel::load
