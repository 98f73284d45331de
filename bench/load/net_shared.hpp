#pragma once
// Internal to the runs (net_load.cpp, net_watch.cpp, net_summary.cpp, load.cpp): what the
// connections, the watchers (one per node), the fault and the progress line share while the
// clock runs, and the senders and watchers themselves. A single-node run (load.cpp) is the same
// sender and watcher on one endpoint.

#include "net_load.hpp"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace barrel::load::net {

using Clock = std::chrono::steady_clock;

inline double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

/// What one node's watcher saw, per transaction and per height.
struct NodeSeen {
    explicit NodeSeen(size_t n) : mined_time(n), mined_count(n, 0), mined_height(n, 0) {}
    // Written by the node's watcher only; read after it is joined.
    std::vector<Clock::time_point> mined_time;
    std::vector<uint32_t> mined_count;
    std::vector<uint64_t> mined_height;
    std::map<uint64_t, std::string> block_hash;  ///< per height seen
    std::map<uint64_t, Clock::time_point> height_time;
    /// The watcher's requests, the heads pushed to it, the subscriptions it opened.
    size_t asks{0}, heads_pushed{0}, subscriptions{0};
    std::atomic<size_t> mined{0};  ///< transactions of the run seen mined (first time)
    std::atomic<uint64_t> height{0};
};

enum Outcome : uint8_t { kUnanswered = 0, kAccepted = 1, kRejected = 2 };

struct Shared {
    Shared(size_t n, size_t nodes) : send_time(n), outcome(n, kUnanswered), sent_to(n, 0) {
        for (size_t k = 0; k < nodes; ++k) seen.push_back(std::make_unique<NodeSeen>(n));
    }

    // Per transaction, written by its connection (a batch sent again overwrites them).
    std::vector<Clock::time_point> send_time;
    std::vector<uint8_t> outcome;
    std::vector<uint8_t> sent_to;  ///< the node that accepted it
    std::vector<std::unique_ptr<NodeSeen>> seen;

    std::mutex mutex;
    std::condition_variable changed;   ///< the window's, and the fault's wait
    std::condition_variable finished;  ///< the progress line's
    size_t dispatched{0};              ///< guarded by mutex
    std::atomic<size_t> answered{0}, accepted{0}, rejected{0}, claimed{0}, senders_left{0};
    std::atomic<bool> stop{false};
    std::atomic<int64_t> last_move_ns{0};  ///< Clock time of the last send or block seen
    std::exception_ptr error;              ///< guarded by mutex

    void moved() { last_move_ns.store(Clock::now().time_since_epoch().count()); }
    bool stalled(std::chrono::seconds limit) const {
        return Clock::now().time_since_epoch().count() - last_move_ns.load() >
               std::chrono::nanoseconds{limit}.count();
    }
    size_t mined_max() const {
        size_t m = 0;
        for (const auto& s : seen) m = std::max(m, s->mined.load());
        return m;
    }
    size_t mined_min() const {
        size_t m = SIZE_MAX;
        for (const auto& s : seen) m = std::min(m, s->mined.load());
        return m;
    }
    /// The run's end: the waits end, and `done` (the progress line's) is set.
    void end(std::atomic<bool>& done) {
        std::lock_guard lock{mutex};
        stop.store(true);
        done.store(true);
        changed.notify_all();
        finished.notify_all();
    }
    void fail_with(std::exception_ptr e) {
        std::lock_guard lock{mutex};
        if (!error) error = e;
        stop.store(true);
        changed.notify_all();
    }
};

/// What one connection's sends saw.
struct SenderStats {
    std::map<std::string, size_t> rejections;  ///< by the node's message, up to its first ": "
    std::optional<Clock::time_point> first_send;
    Clock::time_point last_answer{};
};

/// The sender: a thread per connection of w's schedule, each sending its batches in order when
/// pacing (config.rate) and the window allow, connection c to urls[via, or else c mod N]; a
/// connection whose node fails moves to the next URL and sends its batch again there, until
/// config.stall. Each marks itself done in sh.senders_left; `stats` gets one entry per
/// connection. The caller joins the threads. `opened`, if given, holds each connection opened
/// already (before the clock), to its first URL.
std::vector<std::thread> start_senders(const Config& config, const NetWorkload& w,
                                       const std::vector<HttpUrl>& urls, std::optional<size_t> via,
                                       Clock::time_point t0, Shared& sh,
                                       std::vector<SenderStats>& stats,
                                       std::vector<std::unique_ptr<HttpConnection>> opened = {});

/// Where each node is sent to and watched for `app`: its JSON-RPC (barrel) or CometBFT's RPC.
std::vector<HttpUrl> app_urls(const std::vector<NetNode>& nodes, App app);

/// Watches node `k` at `url` from height `from` until every accepted transaction is in a block
/// there (after the sends are done), the run stops, or nothing moves for config.stall. A node
/// that does not answer (killed) is asked again every poll. `opened`: a connection to `url`
/// opened already (before the clock), if any.
void watch_node(const Config& config, const NetWorkload& w, const HttpUrl& url, size_t k,
                uint64_t from, Shared& sh, std::unique_ptr<HttpConnection> opened = nullptr);

/// After the run: the checks and the figures, into `r`.
void summarise(const NetWorkload& w, const Shared& sh, Clock::time_point t0, NetRunResult& r);

/// r.catch_up_s: from r.restarted_at_s to the first height the killed node (r.killed_node) saw
/// before any other node saw the next one: when it had caught up with the others.
void catch_up(const Shared& sh, Clock::time_point t0, NetRunResult& r);

/// Heights and rounds (CometBFT's /commit on `node`), for the heights holding the run's.
void read_rounds(const NetNode& node, NetRunResult& r);

/// barrel_abci_proposals_rejected_total summed over the nodes that answer.
std::optional<double> proposals_rejected(const std::vector<NetNode>& nodes);

}  // namespace barrel::load::net
