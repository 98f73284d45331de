// `barrel-node run`: the node service (docs/rpc.md). It only wires the library's parts together:
// the store, a pipeline with the sender cache, the pool (pool/), the sealer (seal/) on its own
// thread and the JSON-RPC service (rpc/). Data flows rpc → pool → seal → pipeline → store, and
// queries rpc → store.
//
// Lifecycle: the datadir is opened as its one writer (a second writer gets the store's "locked"
// error); the pool journal in the datadir is re-admitted, then appended to as the pool admits;
// SIGINT or SIGTERM stops intake (the HTTP server), lets the sealer finish the block in flight,
// rewrites the journal with the pool and closes the store (which flushes, so the next open is
// quick). After a SIGKILL the datadir holds whole blocks only, and the next start goes on from its
// head.

#include <barrel/block/sender_cache.hpp>
#include <barrel/cli/cli.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/seal/sealer.hpp>
#include <barrel/store/store.hpp>

#include "command.hpp"
#include "metrics/node_metrics.hpp"
#include "rpc/service.hpp"
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <mutex>
#include <ostream>
#include <sstream>
#include <thread>
#include <utility>

namespace barrel::cli {

namespace {

constexpr std::string_view kJournalFile = "transactions.rlp";
constexpr unsigned kMaxRpcThreads = 1024;
constexpr size_t kMaxTxpoolLifetime = 3'153'600'000;  // seconds

struct Endpoint {
    std::string address;
    uint16_t port{0};
};

Endpoint parse_endpoint(std::string_view text) {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0)
        fail("--http: expected ADDRESS:PORT, got '" + std::string{text} + "'");
    const auto port = parse_u64(text.substr(colon + 1));
    if (!port || *port > 65535)
        fail("--http: the port must be a number from 0 to 65535, got '" +
             std::string{text.substr(colon + 1)} + "'");
    return {std::string{text.substr(0, colon)}, static_cast<uint16_t>(*port)};
}

size_t size_option(const ParsedArgs& args, std::string_view name, size_t fallback, size_t low) {
    const auto v = args.value(name);
    if (!v) return fallback;
    const uint64_t n = parse_u64_option(name, *v);
    if (n < low) fail(std::string{name} + ": must be at least " + std::to_string(low));
    return static_cast<size_t>(n);
}

std::chrono::milliseconds ms_option(const ParsedArgs& args, std::string_view name,
                                    std::chrono::milliseconds fallback) {
    return std::chrono::milliseconds{
        size_option(args, name, static_cast<size_t>(fallback.count()), 1)};
}

/// `cache` counts only the verify stage's look-ups (admission inserts without looking up), so
/// its hit rate is that of the sealed blocks' senders.
void log_sealed(std::ostream& err, const seal::Sealed& s, const block::SenderCache::Stats& cache) {
    const auto& t = s.result.times;
    std::ostringstream line;
    line << std::fixed << std::setprecision(2) << "sealed block " << s.result.number << ": "
         << s.result.transactions << " txs, decode " << t.decode_ms << " ms, verify " << t.verify_ms
         << " ms, execute " << t.execute_ms << " ms, commit " << t.commit_ms << " ms; pool "
         << s.pool.pending << " pending, " << s.pool.queued << " queued; sender cache "
         << cache.hits << "/" << cache.hits + cache.misses << " hits; hash "
         << to_hex(s.result.hash) << "\n";
    err << line.str() << std::flush;
}

/// Blocks SIGINT and SIGTERM in this thread and every thread it starts from now on, so that
/// the main thread alone takes them, with sigwait.
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

int run_handler(Context& ctx, const ParsedArgs& args) {
    const sigset_t stop_signals = block_stop_signals();
    raise_open_files_limit();
    const std::string datadir{*args.value("--datadir")};
    const Endpoint endpoint = parse_endpoint(args.value("--http").value_or("127.0.0.1:8545"));

    pool::Config pool_config;
    pool_config.max_pending = size_option(args, "--txpool-max-pending", pool_config.max_pending, 1);
    pool_config.max_queued = size_option(args, "--txpool-max-queued", pool_config.max_queued, 1);
    pool_config.max_per_sender =
        size_option(args, "--txpool-max-per-sender", pool_config.max_per_sender, 1);
    pool_config.max_queued_per_sender =
        size_option(args, "--txpool-max-queued-per-sender", pool_config.max_queued_per_sender, 1);
    const size_t lifetime = size_option(
        args, "--txpool-lifetime", static_cast<size_t>(pool_config.queued_lifetime.count()), 1);
    if (lifetime > kMaxTxpoolLifetime)  // a century: beyond it, seconds as clock ticks overflow
        fail("--txpool-lifetime: must be at most " + std::to_string(kMaxTxpoolLifetime) + ", got " +
             std::to_string(lifetime));
    pool_config.queued_lifetime = std::chrono::seconds{static_cast<int64_t>(lifetime)};
    seal::Config seal_config;
    seal_config.block_time = ms_option(args, "--block-time", seal_config.block_time);
    seal_config.max_block_txs = size_option(args, "--max-block-txs", seal_config.max_block_txs, 1);
    rpc::HttpOptions http;
    http.address = endpoint.address;
    http.port = endpoint.port;
    http.max_body_bytes = size_option(args, "--rpc-max-body", http.max_body_bytes, 1);
    http.max_connections = size_option(args, "--rpc-max-connections", http.max_connections, 1);
    http.read_timeout = ms_option(args, "--rpc-read-timeout", http.read_timeout);
    http.idle_timeout = ms_option(args, "--rpc-idle-timeout", http.idle_timeout);
    http.header_timeout = ms_option(args, "--rpc-header-timeout", http.header_timeout);
    http.max_unsent_bytes = size_option(args, "--rpc-max-unsent", http.max_unsent_bytes, 1);
    // One per core by default: a request's serial parts (parsing, the pool's locked step, the
    // response) then overlap another request's parallel recovery instead of leaving a core idle
    // (docs/benchmarks.md, "The node under load").
    const size_t rpc_threads =
        size_option(args, "--rpc-threads", std::max(1u, std::thread::hardware_concurrency()), 1);
    if (rpc_threads > kMaxRpcThreads)
        fail("--rpc-threads: must be at most " + std::to_string(kMaxRpcThreads) + ", got " +
             std::to_string(rpc_threads));
    // As many threads read and write the connections as run their calls (rpc/http_server.hpp).
    http.threads = http.workers = static_cast<unsigned>(rpc_threads);
    rpc::Limits limits;
    limits.max_batch = size_option(args, "--rpc-max-batch", limits.max_batch, 1);
    limits.max_response_bytes =
        size_option(args, "--rpc-max-response", limits.max_response_bytes, 1);
    std::optional<Address> coinbase;
    if (const auto v = args.value("--coinbase")) {
        const auto a = address_from_hex(*v);
        if (!a)
            fail("--coinbase: " + (a.error() == HexError::wrong_length
                                       ? "expected an address (20 bytes, 40 hex digits), got '" +
                                             std::string{*v} + "'"
                                       : describe_hex_error(*v, a.error())));
        coinbase = *a;
    }

    auto opened = store::Store::open(datadir, {});
    if (!opened) fail(opened.error().message);
    std::unique_ptr<store::Store> store = std::move(opened).value();
    const chain::Genesis& chain = store->genesis();
    pool_config.chain_id = chain.config.chain_id;
    pool_config.base_fee = chain.config.base_fee;
    pool_config.block_gas_limit = chain.gas_limit;
    seal_config.coinbase = coinbase.value_or(chain.coinbase);

    // The cache holds every pooled transaction's sender, so a sealed block finds them all.
    block::SenderCache cache{std::max(block::SenderCache::kDefaultCapacity,
                                      pool_config.max_pending + pool_config.max_queued)};
    pipeline::Config pipeline_config;
    pipeline_config.sender_cache = &cache;
    pipeline::Pipeline pipeline{*store, pipeline_config};
    pool::Pool pool{pool_config, *store, &cache};
    metrics::NodeMetrics metrics{{.max_block_txs = seal_config.max_block_txs}};
    // Read once, here: Store::head is the writer's, and moves under a reader once the sealer runs.
    const store::Head start_head = store->head();
    metrics.set_head(start_head.number);
    // What the pool and the cache count themselves is read when /metrics is.
    metrics.set_sampler([&] {
        metrics.sample_pool(pool.status());
        metrics.sample_sender_cache(cache.stats());
        metrics.sample_store(store->write_failed());
    });

    const std::string journal_path = (std::filesystem::path{datadir} / kJournalFile).string();
    auto journal = pool::read_journal(journal_path, pool_config);
    if (!journal) fail(journal.error());
    size_t readmitted = 0;
    {
        const std::vector<BytesView> views(journal->transactions.begin(),
                                           journal->transactions.end());
        const auto results = pool.admit(views);
        metrics.on_admitted(results);
        for (const auto& r : results) readmitted += r.has_value() ? 1 : 0;
    }
    // From here on every admitted batch is appended to the journal as it is admitted, so a
    // SIGKILL loses none. A damaged tail would hide what is appended after it: such a journal
    // (or one cut at the read bound) is first rewritten with what was re-admitted.
    if (journal->damaged || journal->truncated)
        if (auto written = pool::write_journal(journal_path, pool.all()); !written)
            fail("the pool could not be journaled: " + written.error());
    auto journal_writer = pool::JournalWriter::open(journal_path);
    if (!journal_writer) fail(journal_writer.error());
    pool.journal_to(journal_writer->get(), journal->damaged || journal->truncated
                                               ? pool.status().pending + pool.status().queued
                                               : journal->transactions.size());

    std::mutex log_mutex;
    bool store_in_error = false;  // the sealer's thread alone: since a failed commit
    rpc::Events events;
    auto on_sealed = [&](const seal::Sealed& s) {
        metrics.on_sealed(s);
        events.publish_block(s.result.number, s.result.hash);
        std::lock_guard lock{log_mutex};
        if (std::exchange(store_in_error, false))
            ctx.err << "barrel-node run: the store resumed after its write error; sealing "
                       "goes on\n";
        log_sealed(ctx.err, s, cache.stats());
    };
    auto on_seal_error = [&](const pipeline::PipelineError& e) {
        metrics.on_seal_failed();
        std::lock_guard lock{log_mutex};
        ctx.err << "seal failed: " << pipeline::describe(e) << "\n";
        // A full disk: RocksDB refuses writes until it resumes, which the next commit tries.
        if (store->write_failed()) {
            store_in_error = true;
            ctx.err << "barrel-node run: the store is in a write error; retrying in "
                    << seal_config.retry_interval.count() << " ms\n";
        }
        ctx.err << std::flush;
    };
    auto on_dropped = [&](const seal::Dropped& d) {
        metrics.on_dropped(d);
        std::lock_guard lock{log_mutex};
        ctx.err << "sealer: dropped transaction " << to_hex(d.transaction) << " from the pool ("
                << pipeline::describe(d.error) << "); sealing the block without it\n"
                << std::flush;
    };
    seal::Sealer sealer{pipeline,  pool,          *store,        seal_config,
                        on_sealed, on_seal_error, seal::Clock{}, on_dropped};

    rpc::Node node{.store = *store,
                   .pool = pool,
                   .client_version = "barrel/v0.1.0",
                   .on_admitted = [&] { sealer.notify(); },
                   .events = &events,
                   .metrics = &metrics,
                   .allow_unprotected_txs = args.has("--rpc-allow-unprotected-txs")};
    rpc::Service service{node, limits, http};
    if (auto started = service.start(); !started) {
        pool.journal_to(nullptr, 0);
        fail(started.error());
    }
    std::thread sealing{[&] { sealer.run(); }};

    {
        std::lock_guard lock{log_mutex};
        ctx.err << "barrel-node run: chain " << chain.config.chain_id << ", head block "
                << start_head.number << " " << to_hex(start_head.hash) << "; " << readmitted
                << " of " << journal->transactions.size() << " journaled transactions re-admitted"
                << (journal->damaged ? " (the journal's damaged tail was dropped)" : "")
                << (journal->truncated ? " (more than the pool holds: the rest was dropped)" : "")
                << "\n"
                << "barrel-node run: JSON-RPC on http://" << http.address << ":" << service.port()
                << "\n"
                << std::flush;
    }

    int signal = 0;
    sigwait(&stop_signals, &signal);
    {
        std::lock_guard lock{log_mutex};
        ctx.err << "barrel-node run: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
                << ", stopping\n"
                << std::flush;
    }
    service.stop();  // no more requests: the pool only shrinks from here
    sealer.stop();
    sealing.join();
    // The appends end; the journal becomes what is worth keeping: the pool (bounded, nothing
    // expired, nothing its sender cannot pay), synced.
    pool.journal_to(nullptr, 0);
    const std::string append_error = (*journal_writer)->error();
    if (!append_error.empty())
        ctx.err << "barrel-node run: appending to the journal failed while running: "
                << append_error << "\n";
    const auto pooled = pool.all();
    if (auto written = pool::write_journal(journal_path, pooled); !written)
        fail("the pool could not be journaled: " + written.error());
    const store::Head h = store->head();
    store.reset();  // flushes, so the next open replays no log
    ctx.err << "barrel-node run: stopped at block " << h.number << "; " << pooled.size()
            << " pool transactions journaled\n"
            << std::flush;
    return kExitOk;
}

}  // namespace

Command run_command() {
    return {
        .name = "run",
        .summary = "Run the node: JSON-RPC for wallets, a transaction pool and a block sealer",
        .args = {},
        .options =
            {
                {"--datadir", "DIR", "The node's data directory (barrel-node init)", true},
                {"--http", "ADDR:PORT",
                 "Where to serve JSON-RPC (default 127.0.0.1:8545; port 0 "
                 "picks a free one)"},
                {"--block-time", "MS",
                 "Seal a block this often when transactions are pending "
                 "(default 1000)"},
                {"--max-block-txs", "N",
                 "Transactions per block; a full block is sealed at once "
                 "(default 2500)"},
                {"--coinbase", "ADDR", "Fee recipient (default: the genesis coinbase)"},
                {"--txpool-max-pending", "N", "Pending transactions held (default 65536)"},
                {"--txpool-max-queued", "N", "Queued transactions held (default 4096)"},
                {"--txpool-max-per-sender", "N", "Transactions of one sender (default 4096)"},
                {"--txpool-max-queued-per-sender", "N",
                 "Queued transactions of one sender (default 64)"},
                {"--txpool-lifetime", "S", "Seconds a queued transaction is kept (default 10800)"},
                {"--rpc-max-body", "BYTES", "Largest request body (default 5242880)"},
                {"--rpc-max-batch", "N", "Most calls in one batch (default 1000)"},
                {"--rpc-max-connections", "N", "Connections at once (default 512)"},
                {"--rpc-max-response", "BYTES",
                 "A batch's response size past which its calls get -32003 (default 25000000)"},
                {"--rpc-max-unsent", "BYTES",
                 "Bytes of large responses unsent at once, all clients (default 268435456)"},
                {"--rpc-threads", "N",
                 "Threads serving the connections, and as many running calls (default: one per "
                 "core)"},
                {"--rpc-header-timeout", "MS", "Time for a request's header (default 5000)"},
                {"--rpc-read-timeout", "MS", "Time for a whole request once begun (default 30000)"},
                {"--rpc-idle-timeout", "MS", "Keep-alive connection idle time (default 120000)"},
                {"--rpc-allow-unprotected-txs", "",
                 "Accept transactions without EIP-155 replay protection over RPC"},
            },
        .details =
            "Serves Ethereum JSON-RPC over HTTP (POST /; GET /metrics in Prometheus text format)\n"
            "for wallets and SDKs (docs/rpc.md lists the methods, with curl examples). Sent\n"
            "transactions enter the pool; a block is sealed every --block-time ms while any are\n"
            "pending, or at once when --max-block-txs are. A line per sealed block goes to\n"
            "stderr. Admitted transactions are appended to DIR/transactions.rlp as they are\n"
            "admitted (re-admitted at the next start, also after a SIGKILL). SIGINT or SIGTERM:\n"
            "stop taking requests, finish the block in flight, rewrite the journal with the\n"
            "pool, exit 0.",
        .handler = run_handler,
    };
}

}  // namespace barrel::cli
