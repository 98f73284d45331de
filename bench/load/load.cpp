#include "load.hpp"

#include <barrel/core/hex.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/gen/transfer.hpp>
#include <barrel/gen/workload.hpp>
#include <barrel/tx/transaction.hpp>

#include "common/args.hpp"
#include "common/stats.hpp"
#include "core/parallel.hpp"
#include "net_shared.hpp"
#include "node_process.hpp"
#include "ticker.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <iostream>
#include <mutex>
#include <thread>

namespace barrel::load {

using Clock = std::chrono::steady_clock;

namespace {
constexpr uint64_t kGwei = 1'000'000'000;
constexpr uint64_t kTransferGas = 21'000;

using bench::fail;

using net::seconds;

}  // namespace

std::vector<Address> sender_addresses(uint64_t seed, size_t senders) {
    std::vector<Address> out(senders);
    for_each_index(senders, true, [&](size_t s) {
        // A generated key is a valid secret (gen re-hashes until it is).
        out[s] = *tx::address_of(gen::account_key(seed, s));
    });
    return out;
}

Workload prepare(const Config& config, uint64_t seed, uint64_t chain_id,
                 const std::vector<Address>& recipients, std::vector<uint64_t> start_nonces) {
    Workload w;
    w.senders = sender_addresses(seed, config.senders);
    w.start_nonces = std::move(start_nonces);
    std::vector<Hash> keys(config.senders);
    for_each_index(config.senders, true, [&](size_t s) { keys[s] = gen::account_key(seed, s); });

    const size_t n = config.txs;
    std::vector<tx::Transaction> txs(n);
    std::vector<std::string> raw(n);
    w.hashes.resize(n);
    w.sizes.resize(n);
    for_each_index(n, true, [&](size_t i) {
        const size_t s = sender_of(i, config.senders);
        const Address& to = recipients[i % recipients.size()];
        // A generated key is a valid secret (gen re-hashes until it is): signing cannot fail.
        txs[i] = gen::sign_transfer(
            {.key = keys[s],
             .to = to == w.senders[s] ? recipients[(i + 1) % recipients.size()] : to,
             .nonce = w.start_nonces[s] + nonce_offset_of(i, config.senders),
             .type = tx::TxType::legacy,
             .chain_id = chain_id,
             .fee_cap = u256{config.gas_price_gwei} * kGwei,
             .gas = kTransferGas,
             .value = kGwei});
        const Bytes encoding = tx::encode(txs[i]);
        w.hashes[i] = tx::hash_of(encoding);
        w.sizes[i] = static_cast<uint32_t>(encoding.size());
        raw[i] = to_hex(encoding);
    });
    for (const auto& t : txs)
        if (!w.recover_loop.add(t)) break;
    w.index_of = HashIndex{w.hashes};

    w.schedule = make_schedule(n, config.senders, config.batch, config.connections);
    w.bodies = batch_bodies(w.schedule, [&](uint32_t i) {
        return R"("method":"eth_sendRawTransaction","params":[")" + raw[i] + "\"]";
    });
    return w;
}

namespace {

/// Samples the timeline every 100 ms and prints a progress line every second and once more at
/// the end, until `done`.
void watch_progress(const Config& config, size_t n, Clock::time_point t0, net::Shared& sh,
                    std::optional<pid_t> node_pid, const std::atomic<bool>& done,
                    RunResult& result) {
    size_t mined_a_second_ago = 0;
    auto print = [&](double t, size_t answered, size_t mined) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "barrel-load: %s%s%.0f s: sent %zu/%zu (%zu rejected), mined %zu, %zu "
                      "TPS mined in the last second\n",
                      config.label.c_str(), config.label.empty() ? "" : ": ", t, answered, n,
                      sh.rejected.load(), mined, mined - mined_a_second_ago);
        std::cerr << line << std::flush;
        mined_a_second_ago = mined;
    };
    tick_every_100ms(sh.mutex, sh.finished, done, t0, [&](size_t tick) {
        const double t = seconds(Clock::now() - t0);
        const size_t answered = sh.answered.load(), mined = sh.seen[0]->mined.load();
        result.timeline.push_back({t, static_cast<double>(answered), static_cast<double>(mined)});
        if (tick % 10 != 0) return;
        if (node_pid)
            if (const auto r = process_rss_mib(*node_pid)) {
                // The soak's baseline: the first sample once the node has warmed up.
                if (t >= 60 && !result.node_rss_mib_first_minute)
                    result.node_rss_mib_first_minute = *r;
                result.node_rss_mib_end = *r;
            }
        print(t, answered, mined);
    });
    const double t = seconds(Clock::now() - t0);
    const size_t answered = sh.answered.load(), mined = sh.seen[0]->mined.load();
    result.timeline.push_back({t, static_cast<double>(answered), static_cast<double>(mined)});
    if (node_pid)
        if (const auto r = process_rss_mib(*node_pid)) result.node_rss_mib_end = *r;
    print(t, answered, mined);
}

/// The node's /metrics, or no samples when it serves none there (go-ethereum serves its metrics
/// on a port of their own): its stage times and cache hit rate are then reported as n/a.
MetricsText scrape_metrics(HttpConnection& conn) {
    try {
        return MetricsText::parse(conn.get("/metrics"));
    } catch (const bench::Failure&) {
        return MetricsText::parse("");
    }
}

/// Per-stage time and the sender-cache hit rate between two scrapes of /metrics.
void read_metrics(const MetricsText& before, const MetricsText& after, RunResult& r) {
    auto delta = [&](std::string_view name,
                     std::vector<std::pair<std::string_view, std::string_view>> labels = {})
        -> std::optional<double> {
        const auto a = after.value(name, labels);
        if (!a) return std::nullopt;
        return *a - before.value(name, labels).value_or(0);
    };
    for (size_t s = 0; s < kStages.size(); ++s) {
        const auto sum = delta("barrel_stage_duration_seconds_sum", {{"stage", kStages[s]}});
        const auto count = delta("barrel_stage_duration_seconds_count", {{"stage", kStages[s]}});
        if (sum && count && *count > 0) r.stage_ms_per_block[s] = *sum * 1e3 / *count;
        if (sum && r.mined > 0) r.stage_us_per_tx[s] = *sum * 1e6 / static_cast<double>(r.mined);
    }
    const auto hits = delta("barrel_sender_cache_hits_total");
    const auto misses = delta("barrel_sender_cache_misses_total");
    if (hits && misses && *hits + *misses > 0) r.sender_cache_hit_rate = *hits / (*hits + *misses);
}

/// The checks after the clock: each sender's nonce, each transaction's receipt.
void check_chain(const Config& config, const Workload& w, HttpConnection& conn,
                 const net::NodeSeen& seen, RunResult& r) {
    std::vector<uint64_t> expected = w.start_nonces;
    for (size_t i = 0; i < w.hashes.size(); ++i)
        if (seen.mined_count[i] > 0) ++expected[sender_of(i, config.senders)];
    // Batches as large as the sends' (which the node took), within the node's default bound.
    const size_t chunk = std::clamp<size_t>(config.batch, 100, 1000);
    for (size_t s0 = 0; s0 < w.senders.size(); s0 += chunk) {
        std::vector<nlohmann::json> params;
        for (size_t s = s0; s < std::min(s0 + chunk, w.senders.size()); ++s)
            params.push_back(nlohmann::json::array({to_hex(w.senders[s]), "latest"}));
        const auto nonces = conn.call_batch("eth_getTransactionCount", params);
        for (size_t k = 0; k < nonces.size(); ++k)
            if (quantity(nonces[k], "eth_getTransactionCount") != expected[s0 + k]) ++r.bad_nonces;
    }
    r.nonces_ok = r.bad_nonces == 0;

    std::vector<uint32_t> mined;
    for (size_t i = 0; i < w.hashes.size(); ++i)
        if (seen.mined_count[i] > 0) mined.push_back(static_cast<uint32_t>(i));
    if (config.receipt_stride > 1) {
        size_t kept = 0;
        for (size_t k = 0; k < mined.size(); k += config.receipt_stride) mined[kept++] = mined[k];
        mined.resize(kept);
    }
    for (size_t k0 = 0; k0 < mined.size(); k0 += chunk) {
        std::vector<nlohmann::json> params;
        for (size_t k = k0; k < std::min(k0 + chunk, mined.size()); ++k)
            params.push_back(nlohmann::json::array({to_hex(w.hashes[mined[k]])}));
        const auto receipts = conn.call_batch("eth_getTransactionReceipt", params);
        for (size_t k = 0; k < receipts.size(); ++k) {
            const auto& rc = receipts[k];
            const bool ok =
                rc.is_object() && rc.value("status", "") == "0x1" && rc.contains("blockNumber") &&
                quantity(rc["blockNumber"], "blockNumber") == seen.mined_height[mined[k0 + k]];
            r.bad_receipts += ok ? 0 : 1;
        }
    }
    r.receipts_ok = r.bad_receipts == 0;
}

/// Latency percentiles, throughput and the counts, from the per-transaction columns.
void summarise_run(const net::Shared& sh, const std::vector<net::SenderStats>& stats,
                   RunResult& r) {
    std::optional<Clock::time_point> first, last_answer, last_mined;
    for (const auto& s : stats) {
        if (!s.first_send) continue;
        if (!first || *s.first_send < *first) first = s.first_send;
        if (!last_answer || s.last_answer > *last_answer) last_answer = s.last_answer;
        for (const auto& [message, count] : s.rejections) r.rejections[message] += count;
    }
    const net::NodeSeen& seen = *sh.seen[0];
    std::vector<double> latencies;
    std::vector<uint64_t> heights;
    for (size_t i = 0; i < r.txs; ++i) {
        if (sh.outcome[i] == net::kRejected) ++r.rejected;
        if (seen.mined_count[i] > 1) ++r.mined_twice;
        if (seen.mined_count[i] == 0) continue;
        ++r.mined;
        heights.push_back(seen.mined_height[i]);
        latencies.push_back(
            std::chrono::duration<double, std::milli>(seen.mined_time[i] - sh.send_time[i])
                .count());
        if (!last_mined || seen.mined_time[i] > *last_mined) last_mined = seen.mined_time[i];
    }
    std::sort(heights.begin(), heights.end());
    r.blocks = static_cast<size_t>(std::unique(heights.begin(), heights.end()) - heights.begin());
    r.accepted = r.txs - r.rejected;
    r.not_mined = r.accepted > r.mined ? r.accepted - r.mined : 0;
    std::sort(latencies.begin(), latencies.end());
    r.latency_p50_ms = bench::percentile_of_sorted(latencies, 0.50);
    r.latency_p95_ms = bench::percentile_of_sorted(latencies, 0.95);
    r.latency_p99_ms = bench::percentile_of_sorted(latencies, 0.99);
    r.latency_max_ms = latencies.empty() ? 0 : latencies.back();
    if (first && last_answer) {
        r.submit_seconds = seconds(*last_answer - *first);
        if (r.submit_seconds > 0) r.submit_tps = static_cast<double>(r.txs) / r.submit_seconds;
    }
    if (first && last_mined) {
        r.end_to_end_seconds = seconds(*last_mined - *first);
        if (r.end_to_end_seconds > 0)
            r.end_to_end_tps = static_cast<double>(r.mined) / r.end_to_end_seconds;
    }
}

}  // namespace

RunResult run_load(const Config& config, const Workload& w, const HttpUrl& url, uint64_t start_head,
                   std::optional<pid_t> node_pid) {
    RunResult result;
    result.txs = w.hashes.size();
    HttpConnection poller{url};
    const MetricsText metrics_before = scrape_metrics(poller);

    // The ceiling before and after the load, on an idle node, its median over both: a drift in
    // the machine's speed during the run moves it as it moves the run.
    bench::RecoverRates ceiling;
    ceiling.sample(w.recover_loop, config.ceiling_threads);

    // The network run's sender and watcher, on one endpoint, their connections opened before
    // the clock.
    const NetWorkload nw = barrel_workload(w);
    const std::vector<HttpUrl> urls{url};
    std::vector<std::unique_ptr<HttpConnection>> connections;
    for (size_t c = 0; c < w.schedule.size(); ++c)
        connections.push_back(std::make_unique<HttpConnection>(url));
    auto watcher = std::make_unique<HttpConnection>(url);
    net::Shared sh{result.txs, 1};
    std::vector<net::SenderStats> stats;
    const auto node_cpu_before = node_pid ? process_cpu_seconds(*node_pid) : std::nullopt;
    const double self_cpu_before = self_cpu_seconds();
    const auto t0 = Clock::now();
    sh.moved();
    auto senders =
        net::start_senders(config, nw, urls, std::nullopt, t0, sh, stats, std::move(connections));
    std::atomic<bool> done{false};
    std::thread progress{
        [&] { watch_progress(config, result.txs, t0, sh, node_pid, done, result); }};
    try {
        net::watch_node(config, nw, url, 0, start_head + 1, sh, std::move(watcher));
    } catch (...) {
        sh.fail_with(std::current_exception());
    }
    sh.end(done);
    for (auto& t : senders) t.join();
    progress.join();
    if (sh.error) std::rethrow_exception(sh.error);
    const double self_cpu = self_cpu_seconds() - self_cpu_before;
    const auto node_cpu_after = node_pid ? process_cpu_seconds(*node_pid) : std::nullopt;

    summarise_run(sh, stats, result);
    if (result.mined > 0) {
        const double per_tx = 1e6 / static_cast<double>(result.mined);
        result.generator_cpu_us_per_tx = self_cpu * per_tx;
        if (node_cpu_before && node_cpu_after)
            result.node_cpu_us_per_tx = (*node_cpu_after - *node_cpu_before) * per_tx;
    }
    read_metrics(metrics_before, scrape_metrics(poller), result);
    check_chain(config, w, poller, *sh.seen[0], result);

    ceiling.sample(w.recover_loop, config.ceiling_threads);
    result.ceiling_tps = bench::median(ceiling.all_threads);
    result.ceiling_ratio = result.ceiling_tps > 0 ? result.end_to_end_tps / result.ceiling_tps : 0;
    return result;
}

}  // namespace barrel::load
