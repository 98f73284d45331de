#pragma once
// The node's client of its own CometBFT's RPC (`--cometbft-rpc http://HOST:PORT`): it hands the
// transactions JSON-RPC admitted to CometBFT's mempool (batched `broadcast_tx_async`, so that
// gossip carries them to every node, whose pools admit them through CheckTx), and keeps what
// CometBFT says of the network (`status`, `net_info`, `validators`) for eth_syncing,
// net_peerCount and /metrics.
//
// One thread does both over one keep-alive connection. Transactions wait in a bounded queue:
// while CometBFT is unreachable they stay in barrel's pool (this node still proposes them) and
// the oldest beyond the bound are not handed over (a line in the log says how many). One that
// CometBFT refuses because its mempool is full is handed over again after the next poll (up to
// kMaxFullRetries times): a node whose mempool filled under a burst would otherwise never
// gossip it, and only its own proposals would carry it.

#include <barrel/core/bytes.hpp>
#include <barrel/core/endpoint.hpp>
#include <barrel/core/expected.hpp>

#include "http/client.hpp"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace barrel::cometbft {

/// CometBFT's RPC address, from `http://HOST:PORT` (a path is not allowed: CometBFT serves at /).
Expected<HostPort, std::string> parse_rpc_url(std::string_view url);

/// What CometBFT last said of its network.
struct EngineStatus {
    bool reachable{false};  ///< the last poll was answered
    uint64_t height{0};     ///< its latest committed height
    bool catching_up{false};
    size_t peers{0};
    size_t validators{0};
    int64_t voting_power{0};        ///< of all validators
    std::string validator_address;  ///< this node's (hex), empty if unknown
    int64_t own_power{0};           ///< this node's voting power (0: not a validator)
};

/// Times a transaction refused for a full mempool is handed over again before it counts as
/// refused: a minute of polls at the default interval.
inline constexpr uint32_t kMaxFullRetries = 60;

struct ClientConfig {
    /// Transactions per HTTP request (a JSON-RPC batch). CometBFT refuses batches larger than
    /// its `rpc.max_request_batch_size` (10 by default; `testnet init` raises it to 100).
    size_t batch{10};
    /// Transactions waiting to be handed over at most.
    size_t max_queued{65'536};
    std::chrono::milliseconds poll_interval{1000};
    std::chrono::milliseconds timeout{5000};  ///< per HTTP exchange
};

class CometClient {
public:
    using Log = std::function<void(std::string_view line)>;

    CometClient(HostPort endpoint, ClientConfig config, Log log);
    ~CometClient();  ///< stop()
    CometClient(const CometClient&) = delete;
    CometClient& operator=(const CometClient&) = delete;

    void start();
    /// Ends the thread; what is still queued is not handed over (it stays in barrel's pool).
    void stop();

    /// Queues encodings to hand over, each kept as the base64 text its call carries (its one
    /// copy). Thread-safe, never blocks on the network.
    void broadcast(std::span<const BytesView> encodings);

    EngineStatus status() const;

    struct Counts {
        uint64_t broadcast{0};  ///< handed over and accepted by CometBFT's RPC
        uint64_t refused{0};    ///< answered with an error (already in its cache; full, given up)
        uint64_t dropped{0};    ///< never handed over: the queue was full
        /// Refusals for a full mempool, each followed by another attempt (a transaction may
        /// count several times).
        uint64_t mempool_full{0};
    };
    Counts counts() const;

private:
    void run();
    struct Queued {
        std::string base64;        ///< the encoding as broadcast_tx_async's `tx` takes it
        uint32_t full_retries{0};  ///< refusals for a full mempool so far
    };
    /// One batch handed over; false if CometBFT could not be reached. What its mempool was too
    /// full for is left in `batch`, in order, to be tried again.
    bool send_batch(std::vector<Queued>& batch);
    /// Puts `batch` back in front of the queue, in order, and keeps the queue's bound.
    void requeue(std::vector<Queued>& batch);
    void poll_status();
    /// POSTs `body` to CometBFT's RPC over the kept connection: the response body, or why not.
    Expected<std::string, std::string> post(std::string_view body);
    void note_unreachable(const std::string& why);

    HostPort m_endpoint;
    ClientConfig m_config;
    Log m_log;

    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping{false};
    std::deque<Queued> m_queue;
    EngineStatus m_status;
    Counts m_counts;
    bool m_unreachable_logged{false};

    http::Client m_http;  ///< the thread's alone
    std::thread m_thread;
};

}  // namespace barrel::cometbft
