// barrel-load's pure parts: the Prometheus text reader (labels, escapes, special values, what
// it skips), the nearest-rank percentiles of the latency report, the send schedule's guarantees
// (every transaction once, a sender on one connection, nonce order), and the medians of runs.

#include <barrel/core/hex.hpp>

#include "common/stats.hpp"
#include "metrics_text.hpp"
#include "report.hpp"
#include "responses.hpp"
#include "rpc_client.hpp"
#include "schedule.hpp"
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <map>
#include <set>

using namespace barrel;
using namespace barrel::load;

TEST(load_metrics, samples_with_and_without_labels) {
    const auto m = MetricsText::parse(
        "# HELP barrel_head_block Number of the head block.\n"
        "# TYPE barrel_head_block gauge\n"
        "barrel_head_block 42\n"
        "barrel_stage_duration_seconds_sum{stage=\"decode\"} 0.25\n"
        "barrel_stage_duration_seconds_count{stage=\"decode\"} 10\n"
        "barrel_stage_duration_seconds_bucket{stage=\"verify\",le=\"0.005\"} 3\n"
        "barrel_stage_duration_seconds_bucket{stage=\"verify\",le=\"+Inf\"} 7\n"
        "barrel_sender_cache_hits_total 1.5e3 1700000000000\n");
    EXPECT_EQ(m.samples().size(), 6u);
    EXPECT_EQ(m.malformed(), 0u);
    EXPECT_EQ(m.value("barrel_head_block"), 42.0);
    EXPECT_EQ(m.value("barrel_stage_duration_seconds_sum", {{"stage", "decode"}}), 0.25);
    EXPECT_EQ(m.value("barrel_stage_duration_seconds_count", {{"stage", "decode"}}), 10.0);
    EXPECT_EQ(
        m.value("barrel_stage_duration_seconds_bucket", {{"le", "+Inf"}, {"stage", "verify"}}),
        7.0);
    EXPECT_EQ(m.value("barrel_sender_cache_hits_total"), 1500.0);  // the timestamp ignored
    // A family or a label set that is not there is nothing, not zero.
    EXPECT_FALSE(m.value("barrel_stage_duration_seconds_sum", {{"stage", "commit"}}));
    EXPECT_FALSE(m.value("barrel_stage_seconds_total"));
}

TEST(load_metrics, escapes_special_values_and_garbage) {
    const auto m = MetricsText::parse(
        "a{path=\"C:\\\\dir\",q=\"say \\\"hi\\\"\",nl=\"x\\ny\"} 1\r\n"
        "b +Inf\n"
        "c -Inf\n"
        "d NaN\n"
        "e{x=\"1\",} 2\n"  // a trailing comma is allowed
        "   \n"
        "  # an indented comment\n"
        "f{x=1} 3\n"     // unquoted label value
        "g{x=\"1\" 4\n"  // unclosed braces
        "h notanumber\n"
        "9bad 5\n"
        "i\n");
    ASSERT_EQ(m.samples().size(), 5u);
    EXPECT_EQ(m.malformed(), 5u);
    const Sample& a = m.samples()[0];
    ASSERT_EQ(a.labels.size(), 3u);
    EXPECT_EQ(a.labels[0].second, "C:\\dir");
    EXPECT_EQ(a.labels[1].second, "say \"hi\"");
    EXPECT_EQ(a.labels[2].second, "x\ny");
    EXPECT_TRUE(std::isinf(*m.value("b")) && *m.value("b") > 0);
    EXPECT_TRUE(std::isinf(*m.value("c")) && *m.value("c") < 0);
    EXPECT_TRUE(std::isnan(*m.value("d")));
    EXPECT_EQ(m.value("e", {{"x", "1"}}), 2.0);
}

TEST(load_stats, nearest_rank_percentiles) {
    std::vector<double> hundred;
    for (int i = 1; i <= 100; ++i) hundred.push_back(i);
    EXPECT_EQ(bench::percentile_of_sorted(hundred, 0.50), 50);
    EXPECT_EQ(bench::percentile_of_sorted(hundred, 0.95), 95);
    EXPECT_EQ(bench::percentile_of_sorted(hundred, 0.99), 99);
    EXPECT_EQ(bench::percentile_of_sorted(hundred, 0.07), 7);  // 0.07 x 100 is not quite 7
    EXPECT_EQ(bench::percentile_of_sorted(hundred, 1.0), 100);
    EXPECT_EQ(bench::percentile_of_sorted({5}, 0.99), 5);
    EXPECT_EQ(bench::percentile_of_sorted({1, 2, 3}, 0.5), 2);
    EXPECT_EQ(bench::percentile_of_sorted({}, 0.5), 0);
    EXPECT_EQ(bench::median({3, 1, 2}), 2);
    EXPECT_EQ(bench::median({4, 1, 3, 2}), 2.5);
    EXPECT_EQ(bench::median({}), 0);
}

TEST(load_schedule, every_transaction_once_in_nonce_order) {
    struct Case {
        size_t txs, senders, batch, connections;
    };
    for (const Case c : {Case{100000, 500, 100, 4}, Case{2000, 20, 100, 4}, Case{7, 3, 2, 2},
                         Case{10, 10, 3, 1}, Case{1, 1, 1, 1}, Case{1000, 7, 1000, 7}}) {
        const auto schedule = make_schedule(c.txs, c.senders, c.batch, c.connections);
        ASSERT_EQ(schedule.size(), c.connections);
        std::vector<int> seen(c.txs, 0);
        std::map<size_t, size_t> connection_of;  // sender -> connection
        std::map<size_t, uint64_t> next_nonce;   // sender -> next expected offset
        for (size_t conn = 0; conn < schedule.size(); ++conn)
            for (const Batch& b : schedule[conn]) {
                ASSERT_FALSE(b.empty());
                ASSERT_LE(b.size(), c.batch);
                for (const uint32_t i : b) {
                    ASSERT_LT(i, c.txs);
                    ++seen[i];
                    const size_t s = sender_of(i, c.senders);
                    const auto [it, fresh] = connection_of.emplace(s, conn);
                    EXPECT_EQ(it->second, conn) << "sender " << s << " on two connections";
                    // A connection sends in order, so each sender's transactions leave in nonce
                    // order, none skipped.
                    EXPECT_EQ(nonce_offset_of(i, c.senders), next_nonce[s]++) << "sender " << s;
                }
            }
        for (size_t i = 0; i < c.txs; ++i) ASSERT_EQ(seen[i], 1) << "transaction " << i;
        // Full batches but the last of each connection.
        for (const auto& batches : schedule)
            for (size_t b = 0; b + 1 < batches.size(); ++b) EXPECT_EQ(batches[b].size(), c.batch);
    }
    // Nonce rounds: nonce k of every sender of a connection before nonce k + 1 of any.
    const auto s = make_schedule(12, 4, 3, 1);
    std::vector<uint32_t> order;
    for (const Batch& b : s[0]) order.insert(order.end(), b.begin(), b.end());
    EXPECT_EQ(order, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST(load_report, medians_of_runs) {
    std::vector<RunResult> runs(3);
    const double tps[] = {100, 300, 200};
    for (size_t i = 0; i < 3; ++i) {
        runs[i].txs = runs[i].mined = runs[i].accepted = 10;
        runs[i].end_to_end_tps = tps[i];
        runs[i].nonces_ok = runs[i].receipts_ok = true;
        runs[i].stage_ms_per_block[0] = static_cast<double>(i);
    }
    runs[1].rejections["txpool is full"] = 2;
    runs[2].rejections["txpool is full"] = 1;
    auto m = median_of(runs);
    EXPECT_EQ(m["end_to_end_tps"], 200.0);
    EXPECT_EQ(m["stages"]["decode"]["ms_per_block"], 1.0);
    EXPECT_TRUE(m["stages"]["verify"]["ms_per_block"].is_null());  // no run has it
    EXPECT_EQ(m["rejections"]["txpool is full"], 3u);
    EXPECT_TRUE(m["checks"]["passed"].get<bool>());
    runs[0].receipts_ok = false;
    EXPECT_FALSE(median_of(runs)["checks"]["passed"].get<bool>());
    EXPECT_NE(text_report("x", runs).find("RECEIPTS DIFFER"), std::string::npos);
}

// The readers of the responses timed (responses.hpp): what they take, and the exact sentence
// for each way a response can be wrong, so that a node's bad answer is named, not miscounted.
namespace {
const std::string kHashA = "0x" + std::string(64, 'a');
const std::string kHashB = "0X" + std::string(62, '0') + "1F";

std::string send_error(std::string_view body, size_t calls) {
    ResponseReader reader;
    const auto r = reader.send_answers(body, calls);
    return r ? "(read)" : r.error();
}

std::string block_error(std::string_view body) {
    ResponseReader reader;
    const auto r = reader.eth_block(body);
    return r ? "(read)" : r.error();
}
}  // namespace

TEST(load_responses, hash_of_hex_is_strict) {
    const auto a = hash_of_hex(kHashA);
    ASSERT_TRUE(a);
    EXPECT_EQ((*a)[0], 0xaa);
    EXPECT_EQ((*a)[31], 0xaa);
    const auto b = hash_of_hex(kHashB);
    ASSERT_TRUE(b);
    EXPECT_EQ((*b)[30], 0x00);
    EXPECT_EQ((*b)[31], 0x1f);
    EXPECT_FALSE(hash_of_hex(kHashA.substr(2)));         // no prefix
    EXPECT_FALSE(hash_of_hex(kHashA.substr(0, 65)));     // a digit short
    EXPECT_FALSE(hash_of_hex(kHashA + "a"));             // a digit long
    EXPECT_FALSE(hash_of_hex("1x" + kHashA.substr(2)));  // not 0x
    for (const char bad : {'g', ' ', '\0', '"', '\xff'}) {
        std::string text = kHashA;
        text[40] = bad;
        EXPECT_FALSE(hash_of_hex(text)) << static_cast<int>(bad);
    }
}

TEST(load_responses, send_answers_results_and_errors_in_any_key_order) {
    ResponseReader reader;
    const std::string body =
        R"([{"jsonrpc":"2.0","id":7,"result":")" + kHashA + R"("}, {"result":")" + kHashB +
        R"(","id":9,"jsonrpc":"2.0"},)"
        R"({"id":8,"error":{"code":-32000,"message":"nonce too low: next nonce 3"}},)"
        R"({"id":10,"error":{"code":-32000}},{"id":11,"result":"0x12"},{"id":12,"result":null},)"
        R"({"id":13,"error":"busy","result":")" +
        kHashA + R"("}])";
    const auto r = reader.send_answers(body, 7);
    ASSERT_TRUE(r) << r.error();
    ASSERT_EQ(r->size(), 7u);
    EXPECT_EQ((*r)[0].id, 7u);
    EXPECT_EQ((*r)[0].hash, hash_of_hex(kHashA));
    EXPECT_FALSE((*r)[0].error);
    EXPECT_EQ((*r)[1].id, 9u);
    EXPECT_EQ((*r)[1].hash, hash_of_hex(kHashB));
    EXPECT_EQ((*r)[2].error, "nonce too low: next nonce 3");
    EXPECT_EQ((*r)[3].error, "(no message)");
    EXPECT_FALSE((*r)[4].hash);  // not a hash: the caller counts another hash
    EXPECT_FALSE((*r)[4].error);
    EXPECT_FALSE((*r)[5].hash);
    EXPECT_EQ((*r)[6].error, "(no message)");  // an error wins over a result
    // The reader is reused from batch to batch.
    const auto again = reader.send_answers(R"([{"id":1,"result":")" + kHashB + R"("}])", 1);
    ASSERT_TRUE(again);
    EXPECT_EQ((*again)[0].hash, hash_of_hex(kHashB));
}

TEST(load_responses, send_answers_malformed) {
    EXPECT_EQ(send_error(R"({"id":1,"result":"0x"})", 1),
              R"(a batch of 1 was answered by {"id":1,"result":"0x"})");
    EXPECT_EQ(send_error(R"([{"id":1,"result":"0x"}])", 2),
              R"(a batch of 2 was answered by [{"id":1,"result":"0x"}])");
    EXPECT_EQ(send_error("[]", 1), "a batch of 1 was answered by []");
    EXPECT_EQ(send_error(R"([{"id":1,"result":"0x"})", 1),
              R"(the response is not JSON: [{"id":1,"result":"0x"})");
    EXPECT_EQ(send_error(R"([{"id":1}] x)", 1), R"(the response is not JSON: [{"id":1}] x)");
    EXPECT_EQ(send_error("[{\"id\":1,\"result\":\"\xff\"}]", 1),  // not UTF-8
              "the response is not JSON: [{\"id\":1,\"result\":\"\xff\"}]");
    EXPECT_EQ(send_error("", 1), "the response is not JSON: ");
    EXPECT_EQ(send_error(R"([1])", 1), "an answer is not an object");
    EXPECT_EQ(send_error(R"([{"result":"0x"}])", 1), "an answer has no id");
    EXPECT_EQ(send_error(R"([{"id":"1","result":"0x"}])", 1), "an answer's id is not a number");
    EXPECT_EQ(send_error(R"([{"id":-1,"result":"0x"}])", 1), "an answer's id is not a number");
    EXPECT_EQ(send_error(R"([{"id":1.5,"result":"0x"}])", 1), "an answer's id is not a number");
    const std::string long_body = "{\"x\":\"" + std::string(300, 'y') + "\"}";
    EXPECT_EQ(send_error(long_body, 1), "a batch of 1 was answered by " + long_body.substr(0, 200));
}

TEST(load_responses, eth_block_malformed) {
    const std::string ok = R"("hash":")" + kHashA + R"(")";
    EXPECT_EQ(block_error(R"({"id":0,"result":null)"),
              R"(the response is not JSON: {"id":0,"result":null)");
    EXPECT_EQ(block_error(R"({"id":0,"error":{"code":-32602,"message":"bad block"}})"),
              "bad block");
    EXPECT_EQ(block_error(R"({"id":0,"result":"0x5"})"), "a block has no hash");
    EXPECT_EQ(block_error(R"({"id":0,"result":{)" + ok + "}}"), "a block has no transactions list");
    EXPECT_EQ(block_error(R"({"id":0,"result":{"hash":"0x12","transactions":[]}})"),
              "a block hash is not 0x and 64 hex digits: 0x12");
    EXPECT_EQ(block_error(R"({"id":0,"result":{)" + ok + R"(,"transactions":[{"hash":"0x"}]}})"),
              "a block's transaction is not a hash");
    EXPECT_EQ(block_error(R"({"id":0,"result":{)" + ok + R"(,"transactions":["0x12"]}})"),
              "a block's transaction is not a hash");
    EXPECT_EQ(
        block_error(R"({"id":0,"result":{)" + ok + R"(,"transactions":[")" + kHashB + R"("]}})"),
        "(read)");
}

TEST(load_responses, hash_index_finds_every_hash_and_no_other) {
    std::vector<Hash> hashes(1000);
    for (size_t i = 0; i < hashes.size(); ++i) {
        hashes[i][0] = static_cast<uint8_t>(i);
        hashes[i][1] = static_cast<uint8_t>(i >> 8);
        hashes[i][31] = 1;
    }
    // Two hashes alike in their first 8 bytes, differing later: the index looks at all 32.
    hashes[999] = hashes[998];
    hashes[999][20] = 0x55;
    const HashIndex index{hashes};
    for (size_t i = 0; i < hashes.size(); ++i) EXPECT_EQ(index.find(hashes[i], hashes), i);
    Hash other = hashes[5];
    other[31] = 2;  // same first 8 bytes as one indexed
    EXPECT_FALSE(index.find(other, hashes));
    EXPECT_FALSE(index.find(Hash{}, hashes));
    EXPECT_FALSE(HashIndex{}.find(hashes[0], hashes));
}

TEST(load_responses, hash_of_hex_takes_exactly_the_hex_digits_at_every_place) {
    // Every byte value at every digit's place, on a hash of mixed digits and cases.
    const std::string base = "0x0123456789abcdefABCDEF9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c";
    ASSERT_EQ(base.size(), 66u);
    ASSERT_TRUE(hash_of_hex(base));
    size_t accepted = 0;
    for (size_t at = 2; at < base.size(); ++at)
        for (int c = 0; c < 256; ++c) {
            std::string text = base;
            text[at] = static_cast<char>(c);
            const auto hash = hash_of_hex(text);
            const bool digit = std::isxdigit(c) != 0;
            ASSERT_EQ(hash.has_value(), digit) << "byte " << c << " at " << at;
            std::string lower = text;
            for (char& ch : lower)
                ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            if (hash) {
                EXPECT_EQ(to_hex(hash->view()), lower) << "byte " << c << " at " << at;
            }
            accepted += hash ? 1 : 0;
        }
    EXPECT_EQ(accepted, 64u * 22);  // 0-9, a-f, A-F at each of 64 places
}

TEST(load_responses, answer_ids_each_of_the_batch_once) {
    // A batch sends transactions 4, 9 and 12 (their indices are the calls' ids).
    const std::vector<uint32_t> batch{4, 9, 12};
    std::vector<uint8_t> seen;
    auto answers = [](std::initializer_list<uint64_t> ids) {
        std::vector<load::SendAnswer> out;
        for (const uint64_t id : ids) out.push_back(load::SendAnswer{id, std::nullopt, "x"});
        return out;
    };
    EXPECT_EQ(load::check_answer_ids(answers({4, 9, 12}), batch, seen), std::nullopt);
    EXPECT_EQ(load::check_answer_ids(answers({12, 4, 9}), batch, seen), std::nullopt)
        << "any order";
    EXPECT_EQ(load::check_answer_ids(answers({4, 9, 7}), batch, seen),
              "an answer of id 7, which the batch did not send");
    EXPECT_EQ(load::check_answer_ids(answers({4, 9, 13}), batch, seen),
              "an answer of id 13, which the batch did not send")
        << "past the batch's last";
    EXPECT_EQ(load::check_answer_ids(answers({3, 9, 12}), batch, seen),
              "an answer of id 3, which the batch did not send")
        << "before its first";
    EXPECT_EQ(load::check_answer_ids(answers({9, 4, 9}), batch, seen), "two answers of id 9");
    // The scratch from a failed batch does not carry over into the next.
    EXPECT_EQ(load::check_answer_ids(answers({9, 12, 4}), batch, seen), std::nullopt);
}
