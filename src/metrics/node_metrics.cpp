#include "metrics/node_metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <array>
#include <mutex>

namespace barrel::metrics {

namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;

/// Every reason a pool rejects for, in RejectCode order (the codes are consecutive from 0).
constexpr size_t kRejectCodes = static_cast<size_t>(pool::RejectCode::unprotected) + 1;

Family<Counter>& counter_family(prometheus::Registry& r, const std::string& name,
                                const std::string& help) {
    return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}

Family<Gauge>& gauge_family(prometheus::Registry& r, const std::string& name,
                            const std::string& help) {
    return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}

Family<Histogram>& histogram_family(prometheus::Registry& r, const std::string& name,
                                    const std::string& help) {
    return prometheus::BuildHistogram().Name(name).Help(help).Register(r);
}

/// The one series of an unlabelled family.
Counter& counter(prometheus::Registry& r, const std::string& name, const std::string& help) {
    return counter_family(r, name, help).Add({});
}

Gauge& gauge(prometheus::Registry& r, const std::string& name, const std::string& help) {
    return gauge_family(r, name, help).Add({});
}

}  // namespace

std::vector<double> duration_buckets() {
    // Written out: computed steps (1e-4 * 2.5) would print as 0.0002500000000000001.
    return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
            0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
}

std::vector<double> block_transactions_buckets(size_t max_block_txs) {
    std::vector<double> out;
    constexpr size_t kSteps[] = {1, 2, 5};
    for (size_t decade = 1; decade < max_block_txs; decade *= 10)
        for (const size_t step : kSteps)
            if (step * decade < max_block_txs) out.push_back(static_cast<double>(step * decade));
    out.push_back(static_cast<double>(std::max<size_t>(max_block_txs, 1)));
    return out;
}

void count_call(const MethodCounters& method, bool ok) noexcept {
    if (!method.requests) return;
    method.requests->Increment();
    if (!ok) method.errors->Increment();
}

struct NodeMetrics::Impl {
    explicit Impl(const Options& options);
    /// The series of the labelled families known from the start: one per stage and reject
    /// reason, and the RPC families' unknown method, present at zero.
    void add_labelled_series();

    prometheus::Registry registry;

    // The sealer.
    Family<Histogram>& stage_duration;
    std::array<Histogram*, 4> stages{};  ///< decode, verify, execute, commit
    Counter& blocks_sealed;
    Counter& transactions_sealed;
    Gauge& head_block;
    Histogram& block_transactions;
    Counter& commit_bytes;
    Family<Counter>& sealer_dropped;  ///< by reason, each created at its first drop (rare)
    Counter& seal_failures;
    Gauge& store_write_error;

    // The pool.
    Family<Gauge>& pool_transactions;
    Gauge& pool_pending;
    Gauge& pool_queued;
    Counter& pool_admitted;
    std::array<Counter*, kRejectCodes> pool_rejected{};

    // The JSON-RPC service.
    Family<Counter>& rpc_requests;
    Family<Counter>& rpc_errors;
    Counter& http_requests;
    Counter& request_bytes;
    Histogram& request_duration;
    Gauge& connections;

    // The sender cache, and its totals when last sampled (it counts; the counters follow).
    Counter& cache_hits;
    Counter& cache_misses;
    block::SenderCache::Stats cache_seen;

    std::mutex cache_mutex;         ///< cache_seen, for renders at once
    std::function<void()> sampler;  ///< set before the metrics are served, then only read

    struct Consensus;
    std::unique_ptr<Consensus> consensus;  ///< set by enable_consensus, before serving
};

struct NodeMetrics::Impl::Consensus {
    explicit Consensus(prometheus::Registry& r);

    std::array<Histogram*, std::size(kAbciCalls)> calls{};
    Counter& proposals_rejected;
    Gauge& round;
    Gauge& height;
    Gauge& catching_up;
    Gauge& reachable;
    Gauge& peers;
    Gauge& validators;
    Gauge& voting_power;
    Gauge& own_power;
    Family<Counter>& handed;
    Counter& broadcast;
    Counter& refused;
    Counter& mempool_full;
    Counter& dropped;

    std::mutex mutex;   ///< seen, for renders at once
    EngineSample seen;  ///< the counts when last sampled
};

NodeMetrics::Impl::Consensus::Consensus(prometheus::Registry& r)
    : proposals_rejected{counter(r, "barrel_abci_proposals_rejected_total",
                                 "Proposals this node's ProcessProposal rejected.")},
      round{gauge(r, "barrel_consensus_round",
                  "The round the last committed height was decided in (0: its first proposal).")},
      height{gauge(r, "barrel_cometbft_height", "CometBFT's latest committed height.")},
      catching_up{gauge(r, "barrel_cometbft_catching_up",
                        "1 while CometBFT catches up with its network (block sync), else 0.")},
      reachable{gauge(r, "barrel_cometbft_reachable",
                      "1 if CometBFT's RPC answered the last poll, else 0.")},
      peers{gauge(r, "barrel_cometbft_peers", "Peers CometBFT is connected to.")},
      validators{gauge(r, "barrel_cometbft_validators", "Validators in the current set.")},
      voting_power{
          gauge(r, "barrel_cometbft_voting_power", "Voting power of the current validator set.")},
      own_power{gauge(r, "barrel_cometbft_own_voting_power",
                      "This node's voting power (0: not a validator).")},
      handed{counter_family(r, "barrel_cometbft_broadcast_transactions_total",
                            "Transactions admitted over JSON-RPC handed to CometBFT's mempool "
                            "(broadcast_tx_async): accepted, refused by CometBFT (already in its "
                            "cache, mempool full too long), refused for a full mempool and tried "
                            "again (mempool_full), or dropped unsent (queue full).")},
      broadcast{handed.Add({{"result", "accepted"}})},
      refused{handed.Add({{"result", "refused"}})},
      mempool_full{handed.Add({{"result", "mempool_full"}})},
      dropped{handed.Add({{"result", "dropped"}})} {
    auto& family = histogram_family(r, "barrel_abci_call_duration_seconds",
                                    "Time the application took to answer each ABCI call.");
    for (size_t i = 0; i < calls.size(); ++i)
        calls[i] = &family.Add({{"call", std::string{kAbciCalls[i]}}}, duration_buckets());
}

NodeMetrics::Impl::Impl(const Options& options)
    : stage_duration{histogram_family(
          registry, "barrel_stage_duration_seconds",
          "Time a sealed block spent in each stage of the pipeline, one observation per block.")},
      blocks_sealed{counter(registry, "barrel_blocks_sealed_total",
                            "Blocks sealed and committed by this node.")},
      transactions_sealed{counter(registry, "barrel_transactions_sealed_total",
                                  "Transactions in the blocks sealed by this node.")},
      head_block{gauge(registry, "barrel_head_block", "Number of the head block.")},
      block_transactions{
          histogram_family(registry, "barrel_block_transactions", "Transactions per sealed block.")
              .Add({}, block_transactions_buckets(options.max_block_txs))},
      commit_bytes{counter(registry, "barrel_commit_bytes_total",
                           "Bytes (keys and values) of the sealed blocks' RocksDB write "
                           "batches.")},
      sealer_dropped{counter_family(registry, "barrel_sealer_dropped_transactions_total",
                                    "Transactions that failed while their block was built (an "
                                    "invalidity the pool could not foresee), dropped from the "
                                    "pool; the block was sealed at once without them. By reason.")},
      seal_failures{counter(registry, "barrel_seal_failures_total",
                            "Blocks that could not be sealed for no transaction's fault "
                            "(the store could not commit: a full disk); retried.")},
      store_write_error{gauge(registry, "barrel_store_write_error",
                              "1 while the store is in a write error (a full disk: "
                              "RocksDB refuses writes until it resumes), else 0.")},
      pool_transactions{gauge_family(registry, "barrel_pool_transactions",
                                     "Transactions in the pool: pending (executable in nonce "
                                     "order) or queued (behind a nonce gap).")},
      pool_pending{pool_transactions.Add({{"state", "pending"}})},
      pool_queued{pool_transactions.Add({{"state", "queued"}})},
      pool_admitted{counter(registry, "barrel_pool_admitted_total",
                            "Transactions admitted to the pool (sent, or re-admitted from "
                            "the journal at start).")},
      rpc_requests{counter_family(registry, "barrel_rpc_requests_total",
                                  "JSON-RPC calls by method; each call of a batch counts.")},
      rpc_errors{counter_family(registry, "barrel_rpc_errors_total",
                                "JSON-RPC calls answered with an error, by method.")},
      http_requests{counter(registry, "barrel_rpc_http_requests_total",
                            "HTTP requests carrying a JSON-RPC body (a batch counts once).")},
      request_bytes{
          counter(registry, "barrel_rpc_request_bytes_total", "Bytes of JSON-RPC request bodies.")},
      request_duration{
          histogram_family(registry, "barrel_rpc_request_duration_seconds",
                           "Time to answer a JSON-RPC request body (parse, calls, response), "
                           "per HTTP request.")
              .Add({}, duration_buckets())},
      connections{gauge(registry, "barrel_rpc_connections", "HTTP connections open.")},
      cache_hits{counter(registry, "barrel_sender_cache_hits_total",
                         "Sender cache look-ups of the verify stage that hit.")},
      cache_misses{counter(registry, "barrel_sender_cache_misses_total",
                           "Sender cache look-ups of the verify stage that missed (the "
                           "sender was recovered again).")} {
    add_labelled_series();
}

void NodeMetrics::Impl::add_labelled_series() {
    constexpr const char* kStages[] = {"decode", "verify", "execute", "commit"};
    for (size_t i = 0; i < stages.size(); ++i)
        stages[i] = &stage_duration.Add({{"stage", kStages[i]}}, duration_buckets());
    auto& rejected = counter_family(registry, "barrel_pool_rejected_total",
                                    "Transactions the pool refused, by reason.");
    for (size_t i = 0; i < kRejectCodes; ++i)
        pool_rejected[i] = &rejected.Add(
            {{"reason", std::string{pool::to_string(static_cast<pool::RejectCode>(i))}}});
    // Present from the start, at zero, like every labelled series the node knows of.
    (void)rpc_requests.Add({{"method", std::string{kUnknownMethod}}});
    (void)rpc_errors.Add({{"method", std::string{kUnknownMethod}}});
}

NodeMetrics::NodeMetrics(const Options& options) : m_impl{std::make_unique<Impl>(options)} {}

NodeMetrics::~NodeMetrics() = default;

void NodeMetrics::on_sealed(const seal::Sealed& sealed) {
    Impl& m = *m_impl;
    const pipeline::BlockResult& r = sealed.result;
    m.blocks_sealed.Increment();
    m.transactions_sealed.Increment(static_cast<double>(r.transactions));
    m.block_transactions.Observe(static_cast<double>(r.transactions));
    m.commit_bytes.Increment(static_cast<double>(r.commit_bytes));
    const double ms[] = {r.times.decode_ms, r.times.verify_ms, r.times.execute_ms,
                         r.times.commit_ms};
    for (size_t i = 0; i < m.stages.size(); ++i) m.stages[i]->Observe(ms[i] / 1000);
    m.head_block.Set(static_cast<double>(r.number));
}

void NodeMetrics::set_head(uint64_t number) { m_impl->head_block.Set(static_cast<double>(number)); }

void NodeMetrics::on_dropped(const seal::Dropped& dropped) {
    // Add finds the series under the family's lock: a drop is rare, and its reasons few (the
    // exec and block error codes).
    m_impl->sealer_dropped.Add({{"reason", dropped.reason}}).Increment();
}

void NodeMetrics::on_seal_failed() { m_impl->seal_failures.Increment(); }

void NodeMetrics::sample_store(bool write_failed) {
    m_impl->store_write_error.Set(write_failed ? 1 : 0);
}

void NodeMetrics::on_admitted(std::span<const pool::AdmitResult> results) {
    Impl& m = *m_impl;
    size_t admitted = 0;
    for (const pool::AdmitResult& r : results) {
        if (r) {
            ++admitted;
            continue;
        }
        const auto code = static_cast<size_t>(r.error().code);
        if (code < kRejectCodes) m.pool_rejected[code]->Increment();
    }
    if (admitted > 0) m.pool_admitted.Increment(static_cast<double>(admitted));
}

void NodeMetrics::sample_pool(const pool::Status& status) {
    m_impl->pool_pending.Set(static_cast<double>(status.pending));
    m_impl->pool_queued.Set(static_cast<double>(status.queued));
}

void NodeMetrics::sample_sender_cache(const block::SenderCache::Stats& stats) {
    Impl& m = *m_impl;
    std::lock_guard lock{m.cache_mutex};
    // The cache's totals only grow; a counter follows them by their growth since last time.
    if (stats.hits > m.cache_seen.hits)
        m.cache_hits.Increment(static_cast<double>(stats.hits - m.cache_seen.hits));
    if (stats.misses > m.cache_seen.misses)
        m.cache_misses.Increment(static_cast<double>(stats.misses - m.cache_seen.misses));
    m.cache_seen = stats;
}

MethodCounters NodeMetrics::method(std::string_view method) {
    const prometheus::Labels labels{{"method", std::string{method}}};
    return {&m_impl->rpc_requests.Add(labels), &m_impl->rpc_errors.Add(labels)};
}

void NodeMetrics::on_http_request(size_t body_bytes, double seconds) {
    m_impl->http_requests.Increment();
    m_impl->request_bytes.Increment(static_cast<double>(body_bytes));
    m_impl->request_duration.Observe(seconds);
}

void NodeMetrics::set_connections(size_t open) {
    m_impl->connections.Set(static_cast<double>(open));
}

void NodeMetrics::enable_consensus() {
    if (!m_impl->consensus) m_impl->consensus = std::make_unique<Impl::Consensus>(m_impl->registry);
}

void NodeMetrics::on_abci_call(std::string_view call, double seconds) {
    if (!m_impl->consensus) return;
    const auto* it = std::find(std::begin(kAbciCalls), std::end(kAbciCalls), call);
    if (it != std::end(kAbciCalls))
        m_impl->consensus->calls[static_cast<size_t>(it - std::begin(kAbciCalls))]->Observe(
            seconds);
}

void NodeMetrics::on_proposal_rejected() {
    if (m_impl->consensus) m_impl->consensus->proposals_rejected.Increment();
}

void NodeMetrics::set_round(int64_t round) {
    if (m_impl->consensus) m_impl->consensus->round.Set(static_cast<double>(round));
}

void NodeMetrics::sample_engine(const EngineSample& sample) {
    if (!m_impl->consensus) return;
    Impl::Consensus& c = *m_impl->consensus;
    c.height.Set(static_cast<double>(sample.height));
    c.catching_up.Set(sample.catching_up ? 1 : 0);
    c.reachable.Set(sample.reachable ? 1 : 0);
    c.peers.Set(static_cast<double>(sample.peers));
    c.validators.Set(static_cast<double>(sample.validators));
    c.voting_power.Set(static_cast<double>(sample.voting_power));
    c.own_power.Set(static_cast<double>(sample.own_power));
    std::lock_guard lock{c.mutex};
    // Cumulative counts, followed by their growth since the last sample.
    const auto follow = [](Counter& counter, uint64_t now, uint64_t& seen) {
        if (now > seen) counter.Increment(static_cast<double>(now - seen));
        seen = std::max(seen, now);
    };
    follow(c.broadcast, sample.broadcast, c.seen.broadcast);
    follow(c.refused, sample.refused, c.seen.refused);
    follow(c.dropped, sample.dropped, c.seen.dropped);
    follow(c.mempool_full, sample.mempool_full, c.seen.mempool_full);
}

void NodeMetrics::set_sampler(std::function<void()> sampler) {
    m_impl->sampler = std::move(sampler);
}

std::string NodeMetrics::render() {
    if (m_impl->sampler) m_impl->sampler();
    auto families = m_impl->registry.Collect();
    // In name and label order (the registry keeps neither): related families side by side, and
    // a scrape that diffs cleanly against the last one.
    std::sort(families.begin(), families.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    for (auto& family : families)
        std::sort(family.metric.begin(), family.metric.end(),
                  [](const auto& a, const auto& b) { return a.label < b.label; });
    return prometheus::TextSerializer{}.Serialize(families);
}

}  // namespace barrel::metrics
