#pragma once
// `barrel-node run`'s node as an object (docs/rpc.md is the user's view): the store opened as its
// one writer, a pipeline with the sender cache, the pool with its journal, the metrics, the
// JSON-RPC service (rpc/) and, as a part that can be left out, the local sealer (seal/) on its
// own thread. Data flows rpc → pool → seal → pipeline → store, and queries rpc → store.
//
// open → start → wait → stop. A node whose blocks come from consensus instead (`run --abci`,
// DESIGN.md "Network") is the same node with the ABCI application (abci/chain_app.hpp) in the
// sealer's place: CometBFT connects to the ABCI server and decides every block; each committed
// block is reported through on_committed(), as the sealer's are, so metrics, subscriptions and
// the log line are the same. Transactions admitted over JSON-RPC are handed to CometBFT's RPC
// (cometbft/rpc_client.hpp) to be gossiped.
//
// Lifecycle: the pool journal in the datadir is re-admitted at open, then appended to as the pool
// admits; stop() ends intake (the HTTP server), lets the sealer finish the block in flight,
// rewrites the journal with the pool and closes the store (which flushes, so the next open is
// quick). After a SIGKILL the datadir holds whole blocks only, and the next open goes on from its
// head.

#include <barrel/block/sender_cache.hpp>
#include <barrel/core/expected.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/seal/sealer.hpp>
#include <barrel/store/store.hpp>

#include "abci/chain_app.hpp"
#include "abci/server.hpp"
#include "cometbft/rpc_client.hpp"
#include "log/logger.hpp"
#include "metrics/node_metrics.hpp"
#include "rpc/events.hpp"
#include "rpc/service.hpp"
#include <signal.h>

#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace barrel::cli {

/// Everything `run` is configured with. Each default is the member's own (here or in the
/// library's configuration it is part of); `run`'s options bind straight into these.
struct NodeConfig {
    std::string datadir;
    /// store::Options::retain_blocks (`--retain-blocks`): 0 keeps every block.
    uint64_t retain_blocks{0};
    /// With `abci`: a state-sync snapshot after the commit of every multiple of this height
    /// (`--snapshot-interval`), in DATADIR/snapshots/; 0 takes none and serves none.
    uint64_t snapshot_interval{0};
    /// Snapshots kept (`--snapshot-keep`), the newest.
    uint64_t snapshot_keep{2};
    /// Its chain fields (chain id, base fee, block gas limit) come from the datadir's genesis.
    pool::Config pool;
    /// Its coinbase is `coinbase`, else the genesis coinbase.
    seal::Config seal;
    std::optional<Address> coinbase;
    rpc::HttpOptions http = default_http();
    rpc::Limits limits;
    bool allow_unprotected_txs{false};
    /// `--no-status-page`: http.status_page off (a flag can only turn a setting on).
    bool no_status_page{false};
    /// Off: no local sealer; blocks come from elsewhere, reported by on_committed() (a test's
    /// driver, or CometBFT when `abci` is set).
    bool local_sealer{true};
    /// Consensus from CometBFT: where the ABCI server listens (tcp://HOST:PORT, unix://PATH).
    /// Set: no local sealer.
    std::string abci;
    /// CometBFT's RPC (http://HOST:PORT), to hand admitted transactions to and to hear the
    /// network's state from; empty: neither (transactions reach other nodes only in this node's
    /// proposals).
    std::string cometbft_rpc;
    cometbft::ClientConfig cometbft;
    /// With `abci`: the most transactions this node proposes (`--max-block-txs` given); none:
    /// as many as the genesis gas limit and CometBFT's max_bytes allow.
    std::optional<size_t> max_proposal_txs;
    /// Before serving: sum the stored state's lattice afresh and refuse to start unless it is
    /// the head's state root (`--verify-state`, as `barrel-node verify`).
    bool verify_state{false};
    /// The log lines written (`--log-level`) and how (`--log-format`).
    log::Level log_level{log::Level::info};
    log::Format log_format{log::Format::text};

    /// One thread per core reads and writes the connections, and as many run their calls: a
    /// request's serial parts (parsing, the pool's locked step, the response) then overlap
    /// another request's parallel recovery instead of leaving a core idle (docs/benchmarks.md,
    /// "The node under load").
    static rpc::HttpOptions default_http();
};

class Node {
public:
    /// Opens the datadir and the pool, re-admitting the journal; serves nothing yet. First
    /// blocks SIGINT and SIGTERM in the calling thread, so that every thread started from here
    /// on (the store's too) leaves them to wait(). Lines go to `log`, at the config's level and
    /// in its format.
    static Expected<std::unique_ptr<Node>, std::string> open(NodeConfig config, std::ostream& log);

    /// Stops what stop() was not called for (after a failed start: nothing is rewritten).
    ~Node();
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    /// Serves JSON-RPC and starts the local sealer (if configured); logs where it serves.
    Expected<void, std::string> start();

    /// Until SIGINT or SIGTERM; returns which.
    int wait();

    /// Stops intake, then the sealer once its block is committed, rewrites the journal with the
    /// pool and closes the store. An error if the journal could not be written.
    Expected<void, std::string> stop();

    /// A block was committed (the sealer's callback; a consensus driver calls it itself):
    /// metrics, subscriptions, the log line.
    void on_committed(const seal::Sealed& s);

    store::Store& store() noexcept { return *m_store; }
    pool::Pool& pool() noexcept { return *m_pool; }
    pipeline::Pipeline& pipeline() noexcept { return *m_pipeline; }
    rpc::Events& events() noexcept { return m_events; }
    metrics::NodeMetrics& metrics() noexcept { return *m_metrics; }

private:
    Node(NodeConfig config, std::ostream& log, sigset_t stop_signals);
    Expected<void, std::string> open_store();
    Expected<void, std::string> open_journal();
    void make_sealer();
    void make_application();
    /// Starts the ABCI server and the CometBFT client (run --abci).
    Expected<void, std::string> start_consensus();
    rpc::NetworkStatus network_status() const;
    /// A line of `module` at `level` (what the parts hand the node: "abci: …" is module abci).
    void log_line(log::Level level, std::string_view module, std::string_view message);
    /// A line a part wrote with its module in front ("abci: connection 3 …"), at `level`.
    void log_part_line(log::Level level, std::string_view line);
    void on_seal_error(const pipeline::PipelineError& e);
    void on_dropped(const seal::Dropped& d);
    /// Ends the sealer's thread and the journal's appends (idempotent).
    void halt();

    NodeConfig m_config;
    log::Logger m_log;
    std::mutex m_store_error_mutex;  ///< m_store_in_error and its lines, in order
    sigset_t m_stop_signals;
    std::string m_journal_path;
    bool m_store_in_error{false};  ///< since a failed commit

    std::unique_ptr<store::Store> m_store;
    store::Head m_start_head;
    std::unique_ptr<block::SenderCache> m_cache;
    std::unique_ptr<pipeline::Pipeline> m_pipeline;
    std::unique_ptr<pool::Pool> m_pool;
    std::unique_ptr<metrics::NodeMetrics> m_metrics;
    std::unique_ptr<pool::JournalWriter> m_journal_writer;
    size_t m_journaled{0};   ///< transactions in the journal read at open
    size_t m_readmitted{0};  ///< of which the pool admitted
    std::string m_journal_note;
    rpc::Events m_events;
    std::unique_ptr<seal::Sealer> m_sealer;
    std::thread m_sealing;
    std::unique_ptr<sync::Snapshots> m_snapshots;  ///< before m_app, which writes into it
    std::unique_ptr<abci::ChainApp> m_app;
    std::unique_ptr<cometbft::CometClient> m_comet;
    std::unique_ptr<abci::Server> m_abci;
    std::unique_ptr<rpc::Node> m_rpc_node;
    std::unique_ptr<rpc::Service> m_service;
};

}  // namespace barrel::cli
