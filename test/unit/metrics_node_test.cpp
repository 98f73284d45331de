// The node's metrics module: events in, exact series out in the rendered text (the names and
// labels are a contract with dashboards and with barrel-bench, docs/rpc.md "/metrics").

#include "metrics/node_metrics.hpp"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace barrel::metrics {
namespace {

using ::testing::HasSubstr;

/// `series value` as a whole line of `text`.
::testing::Matcher<std::string> has_line(const std::string& series, const std::string& value) {
    return HasSubstr("\n" + series + " " + value + "\n");
}

seal::Sealed sealed_block(uint64_t number, size_t txs, size_t commit_bytes) {
    seal::Sealed s;
    s.result.number = number;
    s.result.transactions = txs;
    s.result.commit_bytes = commit_bytes;
    s.result.times = {.decode_ms = 0.3, .verify_ms = 2, .execute_ms = 40, .commit_ms = 1500};
    return s;
}

pool::AdmitResult admitted() { return pool::Admitted{}; }
pool::AdmitResult rejected(pool::RejectCode code) {
    return unexpected(pool::Rejection{code, "why"});
}

TEST(metrics_node, a_sealed_block_counts_blocks_transactions_stages_and_bytes) {
    NodeMetrics m{{.max_block_txs = 100}};
    m.set_head(6);
    m.on_sealed(sealed_block(7, 3, 1000));
    m.on_sealed(sealed_block(8, 100, 24));
    const std::string text = m.render();
    EXPECT_THAT(text, has_line("barrel_blocks_sealed_total", "2"));
    EXPECT_THAT(text, has_line("barrel_transactions_sealed_total", "103"));
    EXPECT_THAT(text, has_line("barrel_commit_bytes_total", "1024"));
    EXPECT_THAT(text, has_line("barrel_head_block", "8"));
    // 3 and 100 transactions: buckets 1-2-5 up to the block size, which is the last.
    EXPECT_THAT(text, has_line("barrel_block_transactions_bucket{le=\"2\"}", "0"));
    EXPECT_THAT(text, has_line("barrel_block_transactions_bucket{le=\"5\"}", "1"));
    EXPECT_THAT(text, has_line("barrel_block_transactions_bucket{le=\"50\"}", "1"));
    EXPECT_THAT(text, has_line("barrel_block_transactions_bucket{le=\"100\"}", "2"));
    EXPECT_THAT(text, has_line("barrel_block_transactions_bucket{le=\"+Inf\"}", "2"));
    EXPECT_THAT(text, has_line("barrel_block_transactions_sum", "103"));
    // Each stage once per block, in seconds.
    for (const char* stage : {"decode", "verify", "execute", "commit"})
        EXPECT_THAT(text, has_line(std::string{"barrel_stage_duration_seconds_count{stage=\""} +
                                       stage + "\"}",
                                   "2"));
    EXPECT_THAT(
        text,
        has_line("barrel_stage_duration_seconds_bucket{stage=\"decode\",le=\"0.00025\"}", "0"));
    EXPECT_THAT(
        text,
        has_line("barrel_stage_duration_seconds_bucket{stage=\"decode\",le=\"0.0005\"}", "2"));
    EXPECT_THAT(text,
                has_line("barrel_stage_duration_seconds_bucket{stage=\"commit\",le=\"1\"}", "0"));
    EXPECT_THAT(text,
                has_line("barrel_stage_duration_seconds_bucket{stage=\"commit\",le=\"2.5\"}", "2"));
    EXPECT_THAT(text, has_line("barrel_stage_duration_seconds_sum{stage=\"commit\"}", "3"));
}

TEST(metrics_node, admissions_and_rejections_by_reason) {
    NodeMetrics m;
    const std::vector<pool::AdmitResult> batch = {
        admitted(), rejected(pool::RejectCode::nonce_too_low), admitted(),
        rejected(pool::RejectCode::malformed), rejected(pool::RejectCode::malformed)};
    m.on_admitted(batch);
    const std::vector<pool::AdmitResult> one = {rejected(pool::RejectCode::pool_full)};
    m.on_admitted(one);
    const std::string text = m.render();
    EXPECT_THAT(text, has_line("barrel_pool_admitted_total", "2"));
    EXPECT_THAT(text, has_line("barrel_pool_rejected_total{reason=\"nonce_too_low\"}", "1"));
    EXPECT_THAT(text, has_line("barrel_pool_rejected_total{reason=\"malformed\"}", "2"));
    EXPECT_THAT(text, has_line("barrel_pool_rejected_total{reason=\"pool_full\"}", "1"));
    // Every reason is a series from the start, named by pool::to_string.
    for (auto code = pool::RejectCode::malformed; code <= pool::RejectCode::unprotected;
         code = static_cast<pool::RejectCode>(static_cast<int>(code) + 1))
        EXPECT_THAT(text, HasSubstr("barrel_pool_rejected_total{reason=\"" +
                                    std::string{pool::to_string(code)} + "\"}"));
    EXPECT_THAT(text, has_line("barrel_pool_rejected_total{reason=\"already_known\"}", "0"));
}

TEST(metrics_node, calls_and_errors_by_method) {
    NodeMetrics m;
    const MethodCounters chain_id = m.method("eth_chainId");
    const MethodCounters send = m.method("eth_sendRawTransaction");
    // The same series, however often it is looked up.
    EXPECT_EQ(m.method("eth_chainId").requests, chain_id.requests);
    count_call(chain_id, true);
    count_call(chain_id, true);
    count_call(send, true);
    count_call(send, false);
    count_call(MethodCounters{}, false);  // no metrics: counts nothing, and does not fail
    const std::string text = m.render();
    EXPECT_THAT(text, has_line("barrel_rpc_requests_total{method=\"eth_chainId\"}", "2"));
    EXPECT_THAT(text, has_line("barrel_rpc_errors_total{method=\"eth_chainId\"}", "0"));
    EXPECT_THAT(text,
                has_line("barrel_rpc_requests_total{method=\"eth_sendRawTransaction\"}", "2"));
    EXPECT_THAT(text, has_line("barrel_rpc_errors_total{method=\"eth_sendRawTransaction\"}", "1"));
    EXPECT_THAT(text, has_line("barrel_rpc_requests_total{method=\"unknown\"}", "0"));
}

TEST(metrics_node, http_requests_bytes_durations_and_connections) {
    NodeMetrics m;
    m.on_http_request(100, 0.002);
    m.on_http_request(28, 0.0004);
    m.set_connections(3);
    const std::string text = m.render();
    EXPECT_THAT(text, has_line("barrel_rpc_http_requests_total", "2"));
    EXPECT_THAT(text, has_line("barrel_rpc_request_bytes_total", "128"));
    EXPECT_THAT(text, has_line("barrel_rpc_connections", "3"));
    EXPECT_THAT(text, has_line("barrel_rpc_request_duration_seconds_count", "2"));
    EXPECT_THAT(text, has_line("barrel_rpc_request_duration_seconds_bucket{le=\"0.0001\"}", "0"));
    EXPECT_THAT(text, has_line("barrel_rpc_request_duration_seconds_bucket{le=\"0.0005\"}", "1"));
    EXPECT_THAT(text, has_line("barrel_rpc_request_duration_seconds_bucket{le=\"0.0025\"}", "2"));
}

TEST(metrics_node, the_sampler_runs_at_each_render_and_counters_follow_the_cache_totals) {
    NodeMetrics m;
    block::SenderCache::Stats cache{.hits = 5, .misses = 1};
    pool::Status pool{.pending = 4, .queued = 2};
    int renders = 0;
    m.set_sampler([&] {
        ++renders;
        m.sample_pool(pool);
        m.sample_sender_cache(cache);
    });
    std::string text = m.render();
    EXPECT_THAT(text, has_line("barrel_sender_cache_hits_total", "5"));
    EXPECT_THAT(text, has_line("barrel_sender_cache_misses_total", "1"));
    EXPECT_THAT(text, has_line("barrel_pool_transactions{state=\"pending\"}", "4"));
    EXPECT_THAT(text, has_line("barrel_pool_transactions{state=\"queued\"}", "2"));
    cache.hits = 8;
    pool = {};
    text = m.render();
    EXPECT_EQ(renders, 2);
    // The totals, not their sum over renders.
    EXPECT_THAT(text, has_line("barrel_sender_cache_hits_total", "8"));
    EXPECT_THAT(text, has_line("barrel_sender_cache_misses_total", "1"));
    EXPECT_THAT(text, has_line("barrel_pool_transactions{state=\"pending\"}", "0"));
}

TEST(metrics_node, every_family_of_the_contract_has_help_and_type) {
    NodeMetrics m;
    const std::string text = m.render();
    const std::pair<const char*, const char*> families[] = {
        {"barrel_stage_duration_seconds", "histogram"},
        {"barrel_blocks_sealed_total", "counter"},
        {"barrel_transactions_sealed_total", "counter"},
        {"barrel_head_block", "gauge"},
        {"barrel_block_transactions", "histogram"},
        {"barrel_commit_bytes_total", "counter"},
        {"barrel_pool_transactions", "gauge"},
        {"barrel_pool_admitted_total", "counter"},
        {"barrel_pool_rejected_total", "counter"},
        {"barrel_rpc_requests_total", "counter"},
        {"barrel_rpc_errors_total", "counter"},
        {"barrel_rpc_http_requests_total", "counter"},
        {"barrel_rpc_request_bytes_total", "counter"},
        {"barrel_rpc_request_duration_seconds", "histogram"},
        {"barrel_rpc_connections", "gauge"},
        {"barrel_sender_cache_hits_total", "counter"},
        {"barrel_sender_cache_misses_total", "counter"},
    };
    for (const auto& [name, type] : families) {
        EXPECT_THAT(text, HasSubstr("# HELP " + std::string{name} + " ")) << name;
        EXPECT_THAT(text, HasSubstr("# TYPE " + std::string{name} + " " + type + "\n")) << name;
    }
}

TEST(metrics_node, bucket_bounds) {
    EXPECT_EQ(block_transactions_buckets(1), (std::vector<double>{1}));
    EXPECT_EQ(block_transactions_buckets(100), (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
    EXPECT_EQ(block_transactions_buckets(2500),
              (std::vector<double>{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 2500}));
    const auto d = duration_buckets();
    EXPECT_EQ(d.front(), 0.0001);
    EXPECT_EQ(d.back(), 10);
    EXPECT_TRUE(std::is_sorted(d.begin(), d.end()));
}

}  // namespace
}  // namespace barrel::metrics
