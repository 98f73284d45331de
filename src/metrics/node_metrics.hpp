#pragma once
// The node's metrics (GET /metrics, Prometheus text format 0.0.4; docs/rpc.md lists them): one
// prometheus-cpp registry holding every family, fed by small typed calls from the sealer's
// callback, the pool's admissions and the JSON-RPC service, and rendered by prometheus-cpp's
// TextSerializer. Internal to the node (not in barrel::barrel), so that the library's consumers
// do not need prometheus-cpp.
//
// The hot paths only touch atomics: every labelled child (a stage, a rejection reason, an RPC
// method) is created once, up front, and kept by pointer; no call looks a label up in a map
// under the registry's lock. What the node already counts elsewhere (the pool's size, the
// sender cache's look-ups) is sampled when the metrics are rendered, not on every change.

#include <barrel/block/sender_cache.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/seal/sealer.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace prometheus {
class Counter;
}

namespace barrel::metrics {

/// The two counters of one JSON-RPC method (or of "unknown"), looked up once by
/// NodeMetrics::method and kept by the caller. Null pointers (no metrics) count nothing.
struct MethodCounters {
    prometheus::Counter* requests{nullptr};
    prometheus::Counter* errors{nullptr};
};

/// Counts one call of a method: a request, and an error unless `ok`.
void count_call(const MethodCounters& method, bool ok) noexcept;

/// The label of calls to methods the node does not have (and of request objects that are not
/// calls), so that a client cannot create series by inventing method names.
inline constexpr std::string_view kUnknownMethod = "unknown";

struct Options {
    /// The sealer's block size: the last finite bucket of barrel_block_transactions, so that
    /// full blocks are told apart from nearly full ones.
    size_t max_block_txs{2500};
};

/// Histogram buckets of barrel_stage_duration_seconds and barrel_rpc_request_duration_seconds:
/// 100 µs to 10 s in 1-2.5-5 steps.
std::vector<double> duration_buckets();
/// Buckets of barrel_block_transactions: 1-2-5 steps below `max_block_txs`, then it.
std::vector<double> block_transactions_buckets(size_t max_block_txs);

/// What the node's consensus engine (CometBFT) last said, and what was handed to it: sampled
/// into barrel_cometbft_* (cumulative counts, as the client counts them).
struct EngineSample {
    bool reachable{false};
    uint64_t height{0};
    bool catching_up{false};
    size_t peers{0};
    size_t validators{0};
    int64_t voting_power{0};
    int64_t own_power{0};
    uint64_t broadcast{0};
    uint64_t refused{0};
    uint64_t dropped{0};
    uint64_t mempool_full{0};  ///< refusals for a full mempool, each tried again
};

/// The ABCI calls timed by barrel_abci_call_duration_seconds, one series each.
inline constexpr std::string_view kAbciCalls[] = {"info",
                                                  "init_chain",
                                                  "query",
                                                  "check_tx",
                                                  "prepare_proposal",
                                                  "process_proposal",
                                                  "extend_vote",
                                                  "verify_vote_extension",
                                                  "finalize_block",
                                                  "commit",
                                                  "list_snapshots",
                                                  "offer_snapshot",
                                                  "load_snapshot_chunk",
                                                  "apply_snapshot_chunk"};

class NodeMetrics {
public:
    explicit NodeMetrics(const Options& options = {});
    ~NodeMetrics();
    NodeMetrics(const NodeMetrics&) = delete;
    NodeMetrics& operator=(const NodeMetrics&) = delete;

    // ---- The sealer ------------------------------------------------------------------------
    /// A block was sealed and committed: blocks, transactions, per-stage durations, commit
    /// bytes and the head. Called from the sealer's thread.
    void on_sealed(const seal::Sealed& sealed);
    /// The head block (at start; on_sealed moves it after that).
    void set_head(uint64_t number);
    /// A transaction failed while its block was built and left the pool
    /// (barrel_sealer_dropped_transactions_total, by reason).
    void on_dropped(const seal::Dropped& dropped);
    /// A block could not be sealed for no transaction's fault (the store's: a full disk).
    void on_seal_failed();
    /// Whether the store is in a write error (store::Store::write_failed); from the sampler.
    void sample_store(bool write_failed);

    // ---- The pool --------------------------------------------------------------------------
    /// The results of one pool::Pool::admit: admissions, and rejections by reason.
    void on_admitted(std::span<const pool::AdmitResult> results);
    /// The pool's size, and the verify stage's sender-cache look-ups so far (cumulative, as
    /// SenderCache::stats counts them); from the sampler.
    void sample_pool(const pool::Status& status);
    void sample_sender_cache(const block::SenderCache::Stats& stats);

    // ---- The JSON-RPC service --------------------------------------------------------------
    /// The counters of `method`, created now if they were not (thread-safe, but takes the
    /// registry's lock: call it once per method and keep the result).
    MethodCounters method(std::string_view method);
    /// One HTTP request carrying a JSON-RPC body, and the time taken to answer it.
    void on_http_request(size_t body_bytes, double seconds);
    void set_connections(size_t open);

    // ---- Consensus (run --abci) -----------------------------------------------------------
    /// Registers the consensus families (a lone sealer's scrape has none). Before the others
    /// below, which do nothing until then; call once, before the metrics are served.
    void enable_consensus();
    /// One ABCI call (a kAbciCalls name) and the application's time on it.
    void on_abci_call(std::string_view call, double seconds);
    void on_proposal_rejected();
    /// The round the last height was decided in (0: the first proposal was accepted).
    void set_round(int64_t round);
    void sample_engine(const EngineSample& sample);

    // ---- Rendering -------------------------------------------------------------------------
    /// Called at the start of every render(), to sample what the node counts elsewhere (it
    /// calls sample_pool and sample_sender_cache). Set once, before the metrics are served.
    void set_sampler(std::function<void()> sampler);
    /// Every family in Prometheus text format 0.0.4.
    std::string render();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace barrel::metrics
