#include "node.hpp"

#include <barrel/core/endpoint.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/tx/transaction.hpp>
#include <barrel/version/version.hpp>

#include "command.hpp"
#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <utility>

namespace barrel::cli {

namespace {

constexpr std::string_view kJournalFile = "transactions.rlp";

/// Blocks SIGINT and SIGTERM in this thread and every thread it starts from now on, so that
/// the thread calling Node::wait alone takes them, with sigwait.
sigset_t block_stop_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    return set;
}

/// Raises the soft limit on open files to the hard one: each connection is a descriptor, and
/// a soft limit of 1,024 would leave the connection limit (512 by default) little headroom
/// against the store's files. A failure leaves the limit as it was.
void raise_open_files_limit() {
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
}

/// The node's own lines' module.
constexpr std::string_view kNodeModule = "node";

/// `cache` counts only the verify stage's look-ups (admission inserts without looking up), so
/// its hit rate is that of the sealed blocks' senders.
/// `what`: "sealed block" (the local sealer's), "committed height" (CometBFT's).
std::string sealed_line(std::string_view what, const seal::Sealed& s,
                        const block::SenderCache::Stats& cache) {
    const auto& t = s.result.times;
    std::ostringstream line;
    line << std::fixed << std::setprecision(2) << what << " " << s.result.number << ": "
         << s.result.transactions << " txs, decode " << t.decode_ms << " ms, verify " << t.verify_ms
         << " ms, execute " << t.execute_ms << " ms, commit " << t.commit_ms << " ms; pool "
         << s.pool.pending << " pending, " << s.pool.queued << " queued; sender cache "
         << cache.hits << "/" << cache.hits + cache.misses << " hits; hash "
         << to_hex(s.result.hash);
    return line.str();
}

/// The largest block the barrel_block_transactions histogram expects: the sealer's bound, or
/// under consensus this node's proposal bound, else as many transfers as the gas limit holds.
size_t histogram_block_txs(const NodeConfig& config, uint64_t gas_limit) {
    if (config.abci.empty()) return config.seal.max_block_txs;
    constexpr uint64_t kTransferGas = 21'000;
    return config.max_proposal_txs.value_or(
        static_cast<size_t>(std::max<uint64_t>(1, gas_limit / kTransferGas)));
}

}  // namespace

rpc::HttpOptions NodeConfig::default_http() {
    rpc::HttpOptions http;
    http.threads = http.workers = std::max(1u, std::thread::hardware_concurrency());
    return http;
}

Node::Node(NodeConfig config, std::ostream& log, sigset_t stop_signals)
    : m_config{std::move(config)},
      m_log{log, m_config.log_level, m_config.log_format},
      m_stop_signals{stop_signals},
      m_journal_path{(std::filesystem::path{m_config.datadir} / kJournalFile).string()} {}

Expected<std::unique_ptr<Node>, std::string> Node::open(NodeConfig config, std::ostream& log) {
    const sigset_t stop_signals = block_stop_signals();
    raise_open_files_limit();
    std::unique_ptr<Node> node{new Node{std::move(config), log, stop_signals}};
    if (auto opened = node->open_store(); !opened) return unexpected(opened.error());
    if (auto opened = node->open_journal(); !opened) return unexpected(opened.error());
    if (!node->m_config.abci.empty()) {
        if (node->m_config.snapshot_interval > 0) {
            const auto dir = std::filesystem::path{node->m_config.datadir} / "snapshots";
            auto snapshots =
                sync::Snapshots::open(dir, static_cast<size_t>(node->m_config.snapshot_keep));
            if (!snapshots) return unexpected("snapshots: " + snapshots.error().message);
            node->m_snapshots = std::move(snapshots).value();
        }
        node->make_application();
    } else if (node->m_config.local_sealer)
        node->make_sealer();
    return node;
}

Expected<void, std::string> Node::open_store() {
    store::Options options;
    options.retain_blocks = m_config.retain_blocks;
    auto opened = store::Store::open(m_config.datadir, options);
    if (!opened) return unexpected(opened.error().message);
    m_store = std::move(opened).value();
    if (m_config.verify_state) {
        auto checked = check_state(*m_store, m_config.datadir);
        if (!checked) return unexpected(checked.error().message);
        log_line(log::Level::info, kNodeModule, *checked);
    }
    const chain::Genesis& chain = m_store->genesis();
    pool::Config& pool_config = m_config.pool;
    pool_config.chain_id = chain.config.chain_id;
    pool_config.base_fee = chain.config.base_fee;
    pool_config.block_gas_limit = chain.gas_limit;
    m_config.seal.coinbase = m_config.coinbase.value_or(chain.coinbase);

    // The cache holds every pooled transaction's sender, so a sealed block finds them all.
    m_cache = std::make_unique<block::SenderCache>(std::max(
        block::SenderCache::kDefaultCapacity, pool_config.max_pending + pool_config.max_queued));
    pipeline::Config pipeline_config;
    pipeline_config.sender_cache = m_cache.get();
    m_pipeline = std::make_unique<pipeline::Pipeline>(*m_store, pipeline_config);
    m_pool = std::make_unique<pool::Pool>(pool_config, *m_store, m_cache.get());
    m_metrics = std::make_unique<metrics::NodeMetrics>(
        metrics::Options{.max_block_txs = histogram_block_txs(m_config, chain.gas_limit)});
    // Read once, here: Store::head is the writer's, and moves under a reader once blocks commit.
    m_start_head = m_store->head();
    m_metrics->set_head(m_start_head.number);
    // What the pool and the cache count themselves is read when /metrics is.
    m_metrics->set_sampler([this] {
        m_metrics->sample_pool(m_pool->status());
        m_metrics->sample_sender_cache(m_cache->stats());
        m_metrics->sample_store(m_store->write_failed());
        if (m_comet) {
            const cometbft::EngineStatus e = m_comet->status();
            const cometbft::CometClient::Counts n = m_comet->counts();
            m_metrics->sample_engine({.reachable = e.reachable,
                                      .height = e.height,
                                      .catching_up = e.catching_up,
                                      .peers = e.peers,
                                      .validators = e.validators,
                                      .voting_power = e.voting_power,
                                      .own_power = e.own_power,
                                      .broadcast = n.broadcast,
                                      .refused = n.refused,
                                      .dropped = n.dropped,
                                      .mempool_full = n.mempool_full});
        }
    });
    return {};
}

Expected<void, std::string> Node::open_journal() {
    auto journal = pool::read_journal(m_journal_path, m_config.pool);
    if (!journal) return unexpected(journal.error());
    m_journaled = journal->transactions.size();
    size_t in_blocks = 0;
    {
        // Between two rewrites the journal is only appended to, so after a SIGKILL it holds
        // what blocks have taken since: each such transaction is known by its hash, in one
        // read, where admission would recover its sender to refuse it by its nonce. (One the
        // store cannot say of is admitted, and refused there.)
        std::vector<BytesView> views;
        std::vector<Hash> hashes;
        views.reserve(m_journaled);
        hashes.reserve(m_journaled);
        for (const Bytes& t : journal->transactions) {
            const Hash hash = tx::hash_of(t);
            if (const auto taken = m_store->took_transaction(hash); taken && *taken) {
                ++in_blocks;
                continue;
            }
            views.emplace_back(t);
            hashes.push_back(hash);
        }
        const auto results = m_pool->admit(views, pool::Origin::local, hashes);
        m_metrics->on_admitted(results);
        for (const auto& r : results) m_readmitted += r.has_value() ? 1 : 0;
    }
    m_journal_note =
        (in_blocks > 0 ? " (" + std::to_string(in_blocks) + " already in blocks)" : "") +
        std::string{journal->damaged ? " (the journal's damaged tail was dropped)" : ""} +
        (journal->truncated ? " (more than the pool holds: the rest was dropped)" : "");
    // From here on every admitted batch is appended to the journal as it is admitted, so a
    // SIGKILL loses none. A damaged tail would hide what is appended after it: such a journal
    // (or one cut at the read bound) is first rewritten with what was re-admitted.
    const bool rewrite = journal->damaged || journal->truncated;
    if (rewrite)
        if (auto written = pool::write_journal(m_journal_path, m_pool->local()); !written)
            return unexpected("the pool could not be journaled: " + written.error());
    auto writer = pool::JournalWriter::open(m_journal_path);
    if (!writer) return unexpected(writer.error());
    m_journal_writer = std::move(writer).value();
    const pool::Status status = m_pool->status();
    m_pool->journal_to(m_journal_writer.get(),
                       rewrite ? status.pending + status.queued : m_journaled);
    return {};
}

void Node::make_sealer() {
    m_sealer = std::make_unique<seal::Sealer>(
        *m_pipeline, *m_pool, *m_store, m_config.seal,
        [this](const seal::Sealed& s) { on_committed(s); },
        [this](const pipeline::PipelineError& e) { on_seal_error(e); }, seal::Clock{},
        [this](const seal::Dropped& d) { on_dropped(d); });
}

void Node::make_application() {
    m_metrics->enable_consensus();
    abci::Observer observer{
        .on_committed = [this](const seal::Sealed& s) { on_committed(s); },
        .on_rejected =
            [this](uint64_t height, std::string_view reason) {
                m_metrics->on_proposal_rejected();
                log_line(log::Level::warn, "abci",
                         "rejected a proposal at height " + std::to_string(height) + ": " +
                             std::string{reason});
            },
        .on_finalized = [this](uint64_t, int32_t round) { m_metrics->set_round(round); },
        .on_checked =
            [this](std::string_view call, uint64_t height, size_t transactions, size_t cached) {
                // Only blocks with transactions: an idle network makes an empty block per
                // timeout_commit.
                if (transactions == 0) return;
                log_line(log::Level::info, "abci",
                         std::string{call} + " height " + std::to_string(height) + ": " +
                             std::to_string(transactions) + " txs, senders cached " +
                             std::to_string(cached) + "/" + std::to_string(transactions));
            },
        .on_dropped = [this](const seal::Dropped& d) { on_dropped(d); },
        .on_state_sync =
            [this](std::string_view line) {
                log_line(log::Level::info, "abci", "state sync: " + std::string{line});
            },
    };
    m_app = std::make_unique<abci::ChainApp>(
        *m_store, *m_pipeline, *m_pool,
        abci::ChainConfig{
            .max_proposal_txs = m_config.max_proposal_txs.value_or(SIZE_MAX),
            .coinbase = m_config.seal.coinbase,
            .version = version::client_version(),
            .retain_blocks = m_config.retain_blocks,
            .snapshots = m_snapshots.get(),
            .snapshot_interval = m_config.snapshot_interval,
            .snapshot_hooks =
                {.written =
                     [this](const Expected<sync::Descriptor, sync::SnapshotError>& taken) {
                         if (taken)
                             log_line(log::Level::info, "abci",
                                      "snapshot of block " + std::to_string(taken->height) + ", " +
                                          std::to_string(taken->chunks) + " chunks");
                         else
                             log_line(log::Level::error, "abci",
                                      "snapshot failed: " + taken.error().message);
                     }}},
        std::move(observer));
}

Expected<void, std::string> Node::start_consensus() {
    if (!m_config.cometbft_rpc.empty()) {
        auto endpoint = cometbft::parse_rpc_url(m_config.cometbft_rpc);
        if (!endpoint) return unexpected(endpoint.error());
        m_comet = std::make_unique<cometbft::CometClient>(
            std::move(endpoint).value(), m_config.cometbft,
            [this](std::string_view line) { log_part_line(log::Level::info, line); });
        m_comet->start();
        // What the journal brought back is known to no other node yet (CometBFT's mempool is
        // not persisted): handed over like a new admission.
        const auto pooled = m_pool->all();
        std::vector<BytesView> encodings;
        encodings.reserve(pooled.size());
        for (const pool::TxPtr& t : pooled) encodings.emplace_back(t->encoding);
        m_comet->broadcast(encodings);
    }
    auto server = abci::Server::start(
        abci::ServerConfig{
            .address = m_config.abci,
            .on_call = [this](std::string_view call,
                              double ms) { m_metrics->on_abci_call(call, ms / 1000); }},
        *m_app, [this](std::string_view line) { log_part_line(log::Level::info, line); });
    if (!server) return unexpected(server.error());
    m_abci = std::move(server).value();
    log_line(log::Level::info, kNodeModule,
             "ABCI application on " + m_abci->address() +
                 (m_comet ? "; transactions handed to CometBFT at " + m_config.cometbft_rpc : ""));
    return {};
}

rpc::NetworkStatus Node::network_status() const {
    const cometbft::EngineStatus e = m_comet->status();
    rpc::NetworkStatus status{.peers = e.peers,
                              .catching_up = e.catching_up,
                              .starting_height = m_start_head.number,
                              .highest_height = e.height};
    if (const auto r = m_app ? m_app->restore_progress() : std::nullopt)
        status.restoring = rpc::NetworkStatus::Restore{r->height, r->chunks, r->applied};
    return status;
}

void Node::log_line(log::Level level, std::string_view module, std::string_view message) {
    m_log.write(level, module, message);
}

void Node::log_part_line(log::Level level, std::string_view line) {
    const size_t colon = line.find(": ");
    if (colon == std::string_view::npos)
        log_line(level, kNodeModule, line);
    else
        log_line(level, line.substr(0, colon), line.substr(colon + 2));
}

void Node::on_committed(const seal::Sealed& s) {
    m_metrics->on_sealed(s);
    m_events.publish_block(s.result.number, s.result.hash);
    const block::SenderCache::Stats cache = m_cache->stats();
    const auto& t = s.result.times;
    std::lock_guard lock{m_store_error_mutex};
    if (std::exchange(m_store_in_error, false))
        log_line(log::Level::info, kNodeModule,
                 "the store resumed after its write error; sealing goes on");
    if (!m_log.enabled(log::Level::info)) return;
    // The text's fields again as JSON members, for a log shipper to read without parsing text.
    m_log.write(log::Level::info, kNodeModule,
                sealed_line(m_app ? "committed height" : "sealed block", s, cache),
                {{"height", uint64_t{s.result.number}},
                 {"txs", uint64_t{s.result.transactions}},
                 {"decode_ms", t.decode_ms},
                 {"verify_ms", t.verify_ms},
                 {"execute_ms", t.execute_ms},
                 {"commit_ms", t.commit_ms},
                 {"pool_pending", uint64_t{s.pool.pending}},
                 {"pool_queued", uint64_t{s.pool.queued}},
                 {"sender_cache_hits", uint64_t{cache.hits}},
                 {"sender_cache_lookups", uint64_t{cache.hits + cache.misses}},
                 {"hash", to_hex(s.result.hash)}});
}

void Node::on_seal_error(const pipeline::PipelineError& e) {
    m_metrics->on_seal_failed();
    std::lock_guard lock{m_store_error_mutex};
    log_line(log::Level::error, kNodeModule, "seal failed: " + pipeline::describe(e));
    // A full disk: RocksDB refuses writes until it resumes, which the next commit tries.
    if (m_store->write_failed()) {
        m_store_in_error = true;
        log_line(log::Level::warn, kNodeModule,
                 "the store is in a write error; retrying in " +
                     std::to_string(m_config.seal.retry_interval.count()) + " ms");
    }
}

void Node::on_dropped(const seal::Dropped& d) {
    m_metrics->on_dropped(d);
    log_line(log::Level::warn, "seal",
             "dropped transaction " + to_hex(d.transaction) + " from the pool (" +
                 pipeline::describe(d.error) + "); sealing the block without it");
}

Expected<void, std::string> Node::start() {
    // CometBFT's client first: admissions hand it what they admit from the first request on.
    if (m_app)
        if (auto started = start_consensus(); !started) return started;
    seal::Sealer* sealer = m_sealer.get();
    cometbft::CometClient* comet = m_comet.get();
    m_rpc_node = std::make_unique<rpc::Node>(rpc::Node{
        .store = *m_store,
        .pool = *m_pool,
        .client_version = version::client_version(),
        .on_admitted =
            [this, sealer, comet](std::span<const BytesView> admitted) {
                if (sealer != nullptr) sealer->notify();
                if (comet != nullptr) comet->broadcast(admitted);
                if (m_log.enabled(log::Level::debug))
                    log_line(log::Level::debug, "pool",
                             "admitted " + std::to_string(admitted.size()) +
                                 " transactions sent over JSON-RPC");
            },
        .network = comet ? std::function<rpc::NetworkStatus()>{[this] { return network_status(); }}
                         : std::function<rpc::NetworkStatus()>{},
        .events = &m_events,
        .metrics = m_metrics.get(),
        .allow_unprotected_txs = m_config.allow_unprotected_txs});
    m_service = std::make_unique<rpc::Service>(*m_rpc_node, m_config.limits, m_config.http);
    if (auto started = m_service->start(); !started) return started;
    if (m_sealer) m_sealing = std::thread{[sealer] { sealer->run(); }};

    const chain::Genesis& chain = m_store->genesis();
    log_line(log::Level::info, kNodeModule,
             "chain " + std::to_string(chain.config.chain_id) + ", head block " +
                 std::to_string(m_start_head.number) + " " + to_hex(m_start_head.hash) + "; " +
                 std::to_string(m_readmitted) + " of " + std::to_string(m_journaled) +
                 " journaled transactions re-admitted" + m_journal_note);
    log_line(log::Level::info, kNodeModule,
             "JSON-RPC on http://" + HostPort{m_config.http.address, m_service->port()}.text());
    return {};
}

int Node::wait() {
    int signal = 0;
    sigwait(&m_stop_signals, &signal);
    log_line(log::Level::info, kNodeModule,
             std::string{signal == SIGINT ? "SIGINT" : "SIGTERM"} + ", stopping");
    return signal;
}

void Node::halt() {
    if (m_service) m_service->stop();  // no more requests: the pool only shrinks from here
    // CometBFT loses its application: it stops too (testnet stop stops both anyway). A call in
    // progress (a Commit) finishes first; the store's commit is atomic either way.
    if (m_abci) m_abci->stop();
    if (m_comet) m_comet->stop();
    if (m_sealer) m_sealer->stop();
    if (m_sealing.joinable()) m_sealing.join();
    if (m_pool) m_pool->journal_to(nullptr, 0);
}

Expected<void, std::string> Node::stop() {
    halt();
    // The appends have ended; the journal becomes what is worth keeping: the pool (bounded,
    // nothing expired, nothing its sender cannot pay), synced.
    const std::string append_error = m_journal_writer->error();
    if (!append_error.empty())
        log_line(log::Level::error, kNodeModule,
                 "appending to the journal failed while running: " + append_error);
    const auto pooled = m_pool->local();  // what peers gossiped, they hand again
    if (auto written = pool::write_journal(m_journal_path, pooled); !written)
        return unexpected("the pool could not be journaled: " + written.error());
    const store::Head h = m_store->head();
    m_store.reset();  // flushes, so the next open replays no log
    log_line(log::Level::info, kNodeModule,
             "stopped at block " + std::to_string(h.number) + "; " + std::to_string(pooled.size()) +
                 " pool transactions journaled");
    return {};
}

// The members go in reverse order: the service and the sealer before the pool, the store last.
Node::~Node() { halt(); }

}  // namespace barrel::cli
