#pragma once
// One load run against a network (`barrel-load --network`): the transactions sent over C
// connections spread over the nodes (connection c to node c % N, or all to one), every node
// watched by a thread of its own until each transaction is in a committed block there, then the
// checks (each mined exactly once on every node, the same block hash at every height everywhere)
// and the figures (net_report.hpp). barrel's transfers go through each node's JSON-RPC
// (eth_sendRawTransaction, watched with eth_getBlockByNumber); for CometBFT's kvstore, the same
// number of transactions of the same sizes go through each node's CometBFT RPC
// (broadcast_tx_async, watched with `block`). A node may be SIGKILLed and restarted mid-run: a
// connection whose node fails moves to the next node and sends its batch again there.

#include "load.hpp"
#include "network.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace barrel::load {

/// What one app's run sends, and how its transactions are told in a block.
struct NetWorkload {
    App app{App::barrel};
    const Workload* base{nullptr};  ///< the schedule, the transfers' hashes and sizes, the ceiling
    /// kvstore: per connection, per batch, the broadcast_tx_async batch; barrel: base->bodies.
    std::vector<std::vector<std::string>> kv_bodies;
    std::vector<std::string> kv_base64;  ///< kvstore: each transaction as CometBFT shows it
    std::unordered_map<std::string_view, uint32_t> kv_index;  ///< into kv_base64

    const std::vector<std::vector<std::string>>& bodies() const {
        return app == App::barrel ? base->bodies : kv_bodies;
    }
    size_t size() const { return base->hashes.size(); }
};

/// kvstore's transaction `i` of `size` bytes: a unique key "k" and i in 12 digits, '=', and a
/// value of "abc…z" repeated to the size (kvstore takes "key=value" with one '=' and no ':';
/// docs/network.md, "A kvstore transaction"). At least 15 bytes.
std::string kv_transaction(size_t i, size_t size);

/// The kvstore workload beside `base`: transaction i as long as base's transfer i.
NetWorkload kv_workload(const Workload& base);
NetWorkload barrel_workload(const Workload& base);

/// CometBFT's end-to-end perturbations (docs/network.md, "Perturbations"): a node SIGKILLed
/// and started again; its two processes SIGSTOPped and SIGCONTed; its links cut and joined
/// again; the validators split in two halves that share no link, then healed.
enum class Perturbation { kill, pause, disconnect, partition };

/// "kill", "pause", "disconnect", "partition", and back (nullopt for anything else).
std::string_view perturbation_name(Perturbation p) noexcept;
std::optional<Perturbation> parse_perturbation(std::string_view name) noexcept;

/// A perturbation mid-run: which, of which nodes, when, and for how long.
struct FaultPlan {
    std::optional<Perturbation> kind;
    /// The node perturbed (kill, pause, disconnect), or the one a partition's catch-up is
    /// measured on (the last of `side`).
    std::optional<size_t> node;
    std::vector<size_t> side;                    ///< a partition's nodes cut off from the rest
    std::chrono::milliseconds kill_after{0};     ///< from the first send to the perturbation
    std::chrono::milliseconds restart_after{0};  ///< from then to its end
};

struct NetConfig {
    Config load;                ///< txs, batch, connections, rate, window, poll, stall, threads
    std::optional<size_t> via;  ///< every connection to this node
    FaultPlan fault;
};

/// A node's processes' CPU seconds over the run and RSS at its end (MiB); per process kind.
/// The RSS when half of the transactions were mined on every node too, if the process then is
/// the one at the end (not one killed since): its growth over the second half of the run.
struct NodeUsage {
    std::optional<double> barrel_cpu_s, cometbft_cpu_s, barrel_rss_mib, cometbft_rss_mib;
    std::optional<double> barrel_rss_mid_mib, cometbft_rss_mid_mib;
    /// The watcher's load on the node: blocks asked for (each a request, found or not), the
    /// new heads the node pushed, the subscriptions to them opened (0: it was polled).
    std::optional<double> watcher_asks, heads_pushed, subscriptions;
};

struct NetRunResult {
    App app{App::barrel};
    size_t validators{0};
    size_t txs{0}, accepted{0}, rejected{0}, known{0};
    std::map<std::string, size_t> rejections;
    /// Over all nodes: accepted transactions some node never mined; transactions a node mined
    /// more than once; heights whose block hash differs between nodes.
    size_t not_mined{0}, mined_twice{0}, hash_mismatches{0}, heights_compared{0};
    double submit_seconds{0}, end_to_end_seconds{0}, submit_tps{0}, end_to_end_tps{0};
    /// Send to mined, on the node that accepted it and on the last node to mine it.
    std::array<double, 4> latency_sent_ms{}, latency_slowest_ms{};  ///< p50, p95, p99, max
    uint64_t first_height{0}, last_height{0};  ///< heights holding the run's transactions
    size_t heights_used{0}, heights_past_round_0{0};
    double mean_round{0};
    uint64_t max_round{0};
    std::optional<double> proposals_rejected;  ///< barrel's /metrics, summed over the nodes
    std::vector<NodeUsage> nodes;
    double ceiling_tps{0}, ceiling_per_node_tps{0}, ceiling_ratio{0};
    double recovery_cpu_us{0};  ///< one recovery's CPU time on one thread, median of the passes
    double generator_cpu_s{0};
    /// The fault: which, when (seconds from the first send; "killed" and "restarted" name the
    /// start and end of any perturbation), and the perturbed node's catch-up.
    std::optional<Perturbation> perturbation;
    std::optional<double> killed_at_s, restarted_at_s, catch_up_s;
    std::optional<size_t> killed_node;
    /// Every 100 ms from the first send: seconds, answered, mined on every node, mined on the
    /// node furthest ahead (the network's progress while one node is down).
    std::vector<std::array<double, 4>> timeline;
    /// The run's transactions per height (each counted once, at the height it was mined).
    std::map<uint64_t, size_t> txs_at_height;
    /// With --join: a full node that joined after the run, by block sync.
    struct Join {
        double to_answer_s{0};  ///< `testnet join` until its RPC answers
        double to_first_s{0};   ///< join until the first height seen applied
        double replay_s{0};     ///< from that height to the run's last
        uint64_t from_height{0}, to_height{0};
        size_t replayed{0};  ///< the run's transactions in heights from_height+1..to_height
        double replay_tps{0};
    };
    std::optional<Join> join;

    bool passed() const {
        return accepted == txs && not_mined == 0 && mined_twice == 0 && hash_mismatches == 0;
    }
};

/// Runs `workload` against `net`'s nodes.
NetRunResult run_network_load(const NetConfig& config, const NetWorkload& workload, Network& net);

}  // namespace barrel::load
