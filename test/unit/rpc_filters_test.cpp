// The node's filters: ids in go-ethereum's form, what block and pending-transaction filters
// collect from rpc::Events between polls, expiry of idle filters (a clock the test moves), the
// bounds on how many filters there are and what each buffers, and log filter criteria read with
// go-ethereum's words. Then the filter methods through Methods, over a datadir and a pool.

#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/store/store.hpp>

#include "pool_fixtures.hpp"
#include "rpc/filters.hpp"
#include "rpc/methods.hpp"
#include "test_files.hpp"
#include <gtest/gtest.h>

#include <set>

namespace barrel::rpc {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

/// A clock that moves only when told.
struct FakeClock {
    Clock::time_point now{Clock::time_point{} + std::chrono::hours{1}};
    FilterConfig config(FilterConfig c = {}) {
        c.now = [this] { return now; };
        return c;
    }
};

Hash hash_n(uint8_t n) {
    Hash h;
    h[31] = n;
    return h;
}

std::vector<Hash> hashes(std::initializer_list<uint8_t> ns) {
    std::vector<Hash> out;
    for (uint8_t n : ns) out.push_back(hash_n(n));
    return out;
}

TEST(rpc_filters, ids_are_go_ethereums_hex_quantities_and_unique) {
    Filters filters{nullptr, {}};
    std::set<std::string> ids;
    for (int i = 0; i < 200; ++i) {
        const std::string id = filters.install(Filters::Kind::blocks);
        ASSERT_TRUE(id.starts_with("0x")) << id;
        ASSERT_LE(id.size(), 34u) << id;  // 16 bytes
        ASSERT_GT(id.size(), 2u) << id;
        EXPECT_TRUE(id == "0x0" || id[2] != '0') << id;  // a quantity: no leading zero
        EXPECT_EQ(id.find_first_not_of("0123456789abcdef", 2), std::string::npos) << id;
        ids.insert(id);
    }
    EXPECT_EQ(ids.size(), 200u);
}

TEST(rpc_filters, block_and_pending_filters_take_what_was_published_since_their_last_poll) {
    Events events;
    Filters filters{&events, {}};
    EXPECT_EQ(events.listeners(), 1u);
    events.publish_block(1, hash_n(1));  // before the filters: not theirs
    const std::string blocks = filters.install(Filters::Kind::blocks);
    const std::string pending = filters.install(Filters::Kind::pending);
    const std::string logs = filters.install(Filters::Kind::logs);
    events.publish_block(2, hash_n(2));
    events.publish_pending(hashes({10, 11}));
    events.publish_block(3, hash_n(3));
    EXPECT_EQ(filters.poll(blocks)->hashes, hashes({2, 3}));
    EXPECT_EQ(filters.poll(pending)->hashes, hashes({10, 11}));
    EXPECT_EQ(filters.poll(logs)->hashes, hashes({}));
    EXPECT_EQ(filters.poll(logs)->kind, Filters::Kind::logs);
    // A second poll: only what came since the first.
    EXPECT_EQ(filters.poll(blocks)->hashes, hashes({}));
    events.publish_pending(hashes({12}));
    EXPECT_EQ(filters.poll(pending)->hashes, hashes({12}));
    EXPECT_EQ(filters.poll(blocks)->hashes, hashes({}));
    EXPECT_FALSE(filters.poll("0x1234").has_value());
}

TEST(rpc_filters, uninstall_removes_a_filter_once) {
    Filters filters{nullptr, {}};
    const std::string id = filters.install(Filters::Kind::blocks);
    EXPECT_TRUE(filters.uninstall(id));
    EXPECT_FALSE(filters.uninstall(id));
    EXPECT_FALSE(filters.poll(id).has_value());
    EXPECT_EQ(filters.size(), 0u);
}

TEST(rpc_filters, an_idle_filter_expires_after_five_minutes_and_a_poll_restarts_its_time) {
    FakeClock clock;
    Filters filters{nullptr, clock.config()};
    EXPECT_EQ(FilterConfig{}.timeout, minutes{5});  // go-ethereum's
    const std::string polled = filters.install(Filters::Kind::blocks);
    const std::string idle = filters.install(Filters::Kind::pending);
    const std::string logs = filters.install(Filters::Kind::logs);
    clock.now += minutes{4};
    ASSERT_TRUE(filters.poll(polled).has_value());
    // eth_getFilterLogs reads the criteria but is not a poll (as in go-ethereum).
    ASSERT_TRUE(filters.criteria(logs).has_value());
    clock.now += minutes{1} - seconds{1};
    EXPECT_EQ(filters.size(), 3u);
    ASSERT_TRUE(filters.poll(idle).has_value());  // 4:59 idle: still there
    clock.now += seconds{1};                      // `logs`: 5:00 without a poll
    EXPECT_FALSE(filters.criteria(logs).has_value());
    EXPECT_EQ(filters.size(), 2u);  // removed by the call that found it expired
    clock.now += minutes{4};        // `polled`: 5:00 since its poll
    EXPECT_FALSE(filters.poll(polled).has_value());
    EXPECT_TRUE(filters.poll(idle).has_value());
    clock.now += minutes{5};
    EXPECT_FALSE(filters.uninstall(idle));  // expired: as if never installed
    EXPECT_EQ(filters.size(), 0u);
}

TEST(rpc_filters, past_max_filters_a_new_one_replaces_the_one_polled_least_recently) {
    FakeClock clock;
    Filters filters{nullptr, clock.config({.max_filters = 3})};
    EXPECT_EQ(FilterConfig{}.max_filters, 1000u);
    std::vector<std::string> ids;
    for (int i = 0; i < 3; ++i) {
        ids.push_back(filters.install(Filters::Kind::blocks));
        clock.now += seconds{1};
    }
    ASSERT_TRUE(filters.poll(ids[0]).has_value());  // ids[1] is now the least recently polled
    clock.now += seconds{1};
    const std::string fourth = filters.install(Filters::Kind::pending);
    EXPECT_EQ(filters.size(), 3u);
    EXPECT_FALSE(filters.poll(ids[1]).has_value());
    EXPECT_TRUE(filters.poll(ids[0]).has_value());
    EXPECT_TRUE(filters.poll(ids[2]).has_value());
    EXPECT_TRUE(filters.poll(fourth).has_value());
    // Expired filters make room before any live one is replaced.
    clock.now += minutes{10};
    const std::string fifth = filters.install(Filters::Kind::blocks);
    EXPECT_EQ(filters.size(), 1u);
    EXPECT_TRUE(filters.poll(fifth).has_value());
}

TEST(rpc_filters, a_filter_keeps_at_most_max_buffered_hashes_the_newest) {
    Events events;
    Filters filters{&events, {.max_buffered = 3}};
    EXPECT_EQ(FilterConfig{}.max_buffered, 4096u);
    const std::string pending = filters.install(Filters::Kind::pending);
    const std::string blocks = filters.install(Filters::Kind::blocks);
    events.publish_pending(hashes({1, 2}));
    events.publish_pending(hashes({3, 4, 5, 6, 7}));  // more than fit at once
    events.publish_pending(hashes({8}));
    for (uint8_t n = 1; n <= 5; ++n) events.publish_block(n, hash_n(n));
    EXPECT_EQ(filters.poll(pending)->hashes, hashes({6, 7, 8}));
    EXPECT_EQ(filters.poll(blocks)->hashes, hashes({3, 4, 5}));
}

TEST(rpc_filters, the_event_listener_goes_with_the_filters) {
    Events events;
    {
        Filters filters{&events, {}};
        EXPECT_EQ(events.listeners(), 1u);
    }
    EXPECT_EQ(events.listeners(), 0u);
    events.publish_block(1, hash_n(1));  // nobody left to call
}

/// The error of decoding `criteria` as eth_getLogs' parameter 0.
std::string criteria_error(const json& criteria) {
    auto f = decode<LogFilter>(json::array({criteria}), 0, "filter");
    EXPECT_FALSE(f.has_value()) << criteria.dump();
    if (f) return {};
    EXPECT_EQ(f.error().code, code::invalid_params);
    return f.error().message;
}

TEST(rpc_filters, criteria_are_read_as_go_ethereum_reads_them) {
    const std::string a = "0x" + std::string(40, 'a'), t = "0x" + std::string(64, '1');
    const json ok = {{"fromBlock", "0x1"},
                     {"toBlock", "latest"},
                     {"address", json::array({a, a})},
                     {"topics", json::array({t, nullptr, json::array({t, t})})}};
    const LogFilter f = decode<LogFilter>(json::array({ok}), 0, "filter").value();
    EXPECT_EQ(f.from->number, 1u);
    EXPECT_EQ(f.to->kind, BlockRef::Kind::latest);
    EXPECT_EQ(f.addresses.size(), 2u);
    ASSERT_EQ(f.topics.size(), 3u);
    EXPECT_EQ(f.topics[0].size(), 1u);
    EXPECT_TRUE(f.topics[1].empty());
    EXPECT_EQ(f.topics[2].size(), 2u);
    // A null among alternatives: any topic there.
    const json any_there =
        json::parse(R"([{"topics": [["0x)" + std::string(64, '1') + R"(", null]]}])");
    const LogFilter any = decode<LogFilter>(any_there, 0, "filter").value();
    ASSERT_EQ(any.topics.size(), 1u);
    EXPECT_TRUE(any.topics[0].empty());
    EXPECT_EQ(decode<LogFilter>(json::array({{{"address", a}}}), 0, "filter").value().addresses[0],
              decode<Address>(json::array({a}), 0, "a").value());
    EXPECT_TRUE(decode<LogFilter>(json::array({json::object()}), 0, "filter").has_value());

    const std::string p = "invalid argument 0 (filter): ";
    EXPECT_EQ(criteria_error({{"blockHash", t}, {"fromBlock", "0x1"}}),
              p + "cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other");
    EXPECT_EQ(criteria_error({{"blockHash", t}, {"toBlock", "latest"}}),
              p + "cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other");
    EXPECT_EQ(criteria_error({{"blockHash", "0x12"}}),
              p + "blockHash: hex string has length 2, want 64 for a hash");
    EXPECT_EQ(criteria_error({{"fromBlock", "newest"}}),
              p + "fromBlock: unknown block tag \"newest\" (want latest, earliest, pending, safe, "
                  "finalized or a 0x number)");
    EXPECT_EQ(criteria_error({{"toBlock", 5}}), p + "toBlock: want a block tag or number");
    EXPECT_EQ(criteria_error({{"address", "0x12"}}),
              p + "invalid address: hex has invalid length 1 after decoding; expected 20 for "
                  "address");
    EXPECT_EQ(criteria_error({{"address", "12"}}),
              p + "invalid address: hex string without 0x prefix");
    EXPECT_EQ(criteria_error({{"address", json::array({a, "0x1234"})}}),
              p + "invalid address at index 1: hex has invalid length 2 after decoding; expected "
                  "20 for address");
    EXPECT_EQ(criteria_error({{"address", json::array({a, 5})}}),
              p + "non-string address at index 1");
    EXPECT_EQ(criteria_error({{"address", 5}}), p + "invalid addresses in query");
    EXPECT_EQ(criteria_error({{"topics", json::array({t, t, t, t, t})}}), p + "exceed max topics");
    EXPECT_EQ(criteria_error({{"topics", json::array({json(std::vector<std::string>(1001, t))})}}),
              p + "exceed max topics");
    EXPECT_EQ(criteria_error({{"topics", json::array({"0x12"})}}),
              p + "hex has invalid length 1 after decoding; expected 32 for topic");
    EXPECT_EQ(criteria_error({{"topics", json::array({json::array({t, "0x"})})}}),
              p + "hex has invalid length 0 after decoding; expected 32 for topic");
    EXPECT_EQ(criteria_error({{"topics", json::array({json::array({t, 5})})}}),
              p + "invalid topic(s)");
    EXPECT_EQ(criteria_error({{"topics", json::array({5})}}), p + "invalid topic(s)");
    EXPECT_EQ(criteria_error({{"topics", t}}), p + "invalid topic(s)");
    EXPECT_EQ(criteria_error("latest"), p + "want a filter object");
    EXPECT_EQ(decode<Id>(json::array({5}), 0, "id").error().message,
              "invalid argument 0 (id): want an id string");
}
// ---- Through the methods ---------------------------------------------------------------------

/// eth_subscribe's other end, as a WebSocket connection would be.
struct FakeSubscriber : Subscriber {
    std::vector<json> subscribed;
    std::vector<std::string> unsubscribed;
    Expected<std::string, Error> subscribe(const json& params) override {
        subscribed.push_back(params);
        if (params.at(0) == "bogus")
            return unexpected(Error{code::invalid_params, "no such subscription kind"});
        return std::string{"0xabc"};
    }
    bool unsubscribe(std::string_view id) override {
        unsubscribed.emplace_back(id);
        return id == "0xabc";
    }
};

class RpcFilterMethods : public ::testing::Test {
protected:
    RpcFilterMethods() {
        using namespace pool::testing;
        const auto genesis =
            chain::parse_genesis(R"({"chain_id": 1, "gas_limit": 30000000, "accounts": {")" +
                                 to_hex(address_of_key(1)) + R"(": {"balance": "1000000000000"}}})")
                .value();
        store = store::Store::init(dir.path() / "d", genesis).value();
        pool.emplace(pool::Config{.chain_id = 1}, *store, nullptr);
        node.emplace(Node{*store, *pool, "barrel/test"});
        node->events = &events;
        methods.emplace(*node, Limits{}, clock.config());
    }

    Expected<json, Error> call(std::string method, json params = json::array(),
                               Subscriber* subscriber = nullptr) {
        return methods->call(
            Call{.id = 1, .method = std::move(method), .params = std::move(params)}, subscriber);
    }
    json result(std::string method, json params = json::array(), Subscriber* subscriber = nullptr) {
        auto r = call(method, std::move(params), subscriber);
        EXPECT_TRUE(r.has_value()) << method << ": " << r.error().message;
        return r ? *r : json{};
    }
    std::pair<int, std::string> error(std::string method, json params = json::array(),
                                      Subscriber* subscriber = nullptr) {
        auto r = call(method, std::move(params), subscriber);
        EXPECT_FALSE(r.has_value()) << method << ": " << (r ? r->dump() : "");
        if (r) return {};
        return {r.error().code, r.error().message};
    }

    test::ScratchDir dir;
    std::unique_ptr<store::Store> store;
    std::optional<pool::Pool> pool;
    Events events;
    FakeClock clock;
    std::optional<Node> node;
    std::optional<Methods> methods;
};

const std::pair<int, std::string> kFilterNotFound{code::server_error, "filter not found"};

TEST_F(RpcFilterMethods, a_block_filter_answers_the_blocks_committed_since_its_last_poll) {
    const json id = result("eth_newBlockFilter");
    ASSERT_TRUE(id.is_string());
    EXPECT_EQ(result("eth_getFilterChanges", json::array({id})), json::array());
    events.publish_block(1, hash_n(1));  // as run's sealer callback does on each commit
    events.publish_block(2, hash_n(2));
    EXPECT_EQ(result("eth_getFilterChanges", json::array({id})),
              json::array({to_hex(hash_n(1)), to_hex(hash_n(2))}));
    EXPECT_EQ(result("eth_getFilterChanges", json::array({id})), json::array());
    EXPECT_EQ(error("eth_getFilterLogs", json::array({id})), kFilterNotFound);  // not a log filter
    EXPECT_EQ(result("eth_uninstallFilter", json::array({id})), true);
    EXPECT_EQ(result("eth_uninstallFilter", json::array({id})), false);
    EXPECT_EQ(error("eth_getFilterChanges", json::array({id})), kFilterNotFound);
    EXPECT_EQ(error("eth_getFilterChanges", {"0x1234"}), kFilterNotFound);
    EXPECT_EQ(error("eth_getFilterChanges", json::array({1})),
              std::make_pair(code::invalid_params,
                             std::string{"invalid argument 0 (id): want an id string"}));
    EXPECT_EQ(
        error("eth_newBlockFilter", {1}),
        std::make_pair(code::invalid_params, std::string{"too many arguments, want at most 0"}));
}

TEST_F(RpcFilterMethods, a_pending_filter_answers_what_sends_admitted_alone_or_in_a_batch) {
    using namespace pool::testing;
    const json id = result("eth_newPendingTransactionFilter");
    const json full = result("eth_newPendingTransactionFilter", {true});
    const Bytes a = signed_tx({.key = 1, .nonce = 0}), b = signed_tx({.key = 1, .nonce = 1}),
                c = signed_tx({.key = 1, .nonce = 2});
    ASSERT_EQ(result("eth_sendRawTransaction", {to_hex(a)}), to_hex(hash_of(a)));
    const json batch = json::array({{{"jsonrpc", "2.0"},
                                     {"id", 1},
                                     {"method", "eth_sendRawTransaction"},
                                     {"params", {to_hex(b)}}},
                                    {{"jsonrpc", "2.0"},
                                     {"id", 2},
                                     {"method", "eth_sendRawTransaction"},
                                     {"params", {to_hex(c)}}},
                                    {{"jsonrpc", "2.0"},
                                     {"id", 3},
                                     {"method", "eth_sendRawTransaction"},
                                     {"params", {to_hex(c)}}}});
    const json answers = json::parse(methods->handle(batch.dump()));
    ASSERT_EQ(answers.size(), 3u);
    EXPECT_EQ(answers[2]["error"]["message"], "already known");  // not announced twice
    EXPECT_EQ(result("eth_getFilterChanges", json::array({id})),
              json::array({to_hex(hash_of(a)), to_hex(hash_of(b)), to_hex(hash_of(c))}));
    EXPECT_EQ(result("eth_getFilterChanges", json::array({id})), json::array());
    // fullTx: the transactions themselves, as eth_getTransactionByHash has them.
    const json txs = result("eth_getFilterChanges", json::array({full}));
    ASSERT_EQ(txs.size(), 3u);
    EXPECT_EQ(txs[1]["hash"], to_hex(hash_of(b)));
    EXPECT_EQ(txs[1], result("eth_getTransactionByHash", {to_hex(hash_of(b))}));
    EXPECT_EQ(error("eth_newPendingTransactionFilter", {"yes"}),
              std::make_pair(code::invalid_params,
                             std::string{"invalid argument 0 (full): want true or false"}));
}

TEST_F(RpcFilterMethods, an_idle_filter_expires_and_then_is_not_found) {
    const json polled = result("eth_newBlockFilter");
    const json idle = result("eth_newFilter", json::array({json::object()}));
    clock.now += std::chrono::minutes{3};
    EXPECT_EQ(result("eth_getFilterChanges", json::array({polled})), json::array());
    EXPECT_EQ(result("eth_getFilterLogs", json::array({idle})), json::array());  // not a poll
    clock.now += std::chrono::minutes{2};
    EXPECT_EQ(error("eth_getFilterChanges", json::array({idle})), kFilterNotFound);
    EXPECT_EQ(error("eth_getFilterLogs", json::array({idle})), kFilterNotFound);
    EXPECT_EQ(result("eth_uninstallFilter", json::array({idle})), false);
    EXPECT_EQ(result("eth_getFilterChanges", json::array({polled})), json::array());
    clock.now += std::chrono::minutes{5};
    EXPECT_EQ(error("eth_getFilterChanges", json::array({polled})), kFilterNotFound);
}

TEST_F(RpcFilterMethods, log_filters_take_the_ranges_go_ethereum_takes) {
    const json id = result("eth_newFilter", {{{"fromBlock", "0x0"}, {"toBlock", "latest"}}});
    EXPECT_EQ(result("eth_getFilterChanges", json::array({id})),
              json::array());  // barrel emits no logs
    EXPECT_EQ(result("eth_getFilterLogs", json::array({id})), json::array());
    EXPECT_TRUE(result("eth_newFilter", json::array({json::object()})).is_string());
    EXPECT_TRUE(result("eth_newFilter", {{{"fromBlock", "0x1"}, {"toBlock", "0x1"}}}).is_string());
    EXPECT_TRUE(result("eth_newFilter", {{{"fromBlock", "earliest"}}}).is_string());
    const auto invalid = [](std::string message) {
        return std::make_pair(code::invalid_params, std::move(message));
    };
    EXPECT_EQ(error("eth_newFilter", {{{"fromBlock", "pending"}}}),
              invalid("pending logs are not supported"));
    EXPECT_EQ(error("eth_newFilter", {{{"toBlock", "pending"}}}),
              invalid("pending logs are not supported"));
    EXPECT_EQ(error("eth_newFilter", {{{"fromBlock", "0x2"}, {"toBlock", "0x1"}}}),
              invalid("invalid block range params"));
    EXPECT_EQ(error("eth_newFilter", {{{"fromBlock", "latest"}, {"toBlock", "0x1"}}}),
              invalid("invalid block range params"));
    EXPECT_EQ(error("eth_newFilter", {{{"topics", {nullptr, nullptr, nullptr, nullptr, nullptr}}}}),
              invalid("invalid argument 0 (filter): exceed max topics"));
    EXPECT_EQ(error("eth_newFilter"), invalid("missing value for required argument 0"));
    // A filter whose range is past the head: its logs are refused as eth_getLogs would be.
    const json ahead = result("eth_newFilter", {{{"fromBlock", "0x1"}, {"toBlock", "0x1"}}});
    EXPECT_EQ(error("eth_getFilterLogs", json::array({ahead})),
              invalid("block range extends beyond current head block"));
}

TEST_F(RpcFilterMethods, get_logs_is_empty_for_a_valid_query_and_refuses_an_invalid_one) {
    const std::string genesis = to_hex(store->head().hash);
    EXPECT_EQ(result("eth_getLogs", json::array({json::object()})), json::array());
    EXPECT_EQ(result("eth_getLogs", {{{"blockHash", genesis}}}), json::array());
    EXPECT_EQ(result("eth_getLogs", {{{"fromBlock", "earliest"}, {"toBlock", "0x0"}}}),
              json::array());
    EXPECT_EQ(error("eth_getLogs", {{{"blockHash", "0x" + std::string(64, '7')}}}),
              std::make_pair(code::server_error, std::string{"unknown block"}));
    const auto invalid = [](std::string message) {
        return std::make_pair(code::invalid_params, std::move(message));
    };
    EXPECT_EQ(error("eth_getLogs", {{{"fromBlock", "0x0"}, {"toBlock", "0x1"}}}),
              invalid("block range extends beyond current head block"));
    EXPECT_EQ(error("eth_getLogs", {{{"fromBlock", "0x2"}, {"toBlock", "0x1"}}}),
              invalid("invalid block range params"));
    EXPECT_EQ(error("eth_getLogs", {{{"fromBlock", "0x5"}}}),  // to latest: block 0
              invalid("invalid block range params"));
    EXPECT_EQ(error("eth_getLogs", {{{"toBlock", "pending"}}}),
              invalid("pending logs are not supported"));
    EXPECT_EQ(error("eth_getLogs", {{{"blockHash", genesis}, {"fromBlock", "0x0"}}}),
              invalid("invalid argument 0 (filter): cannot specify both BlockHash and "
                      "FromBlock/ToBlock, choose one or the other"));
    EXPECT_EQ(error("eth_getLogs", {{{"address", 5}}}),
              invalid("invalid argument 0 (filter): invalid addresses in query"));
}

TEST_F(RpcFilterMethods, subscriptions_reach_the_connections_subscriber_and_http_has_none) {
    const std::pair<int, std::string> unsupported{code::method_not_found,
                                                  "notifications not supported"};
    EXPECT_EQ(error("eth_subscribe", {"newHeads"}), unsupported);
    EXPECT_EQ(error("eth_unsubscribe", {"0xabc"}), unsupported);
    FakeSubscriber s;
    EXPECT_EQ(result("eth_subscribe", json::array({"logs", {{"address", "0x12"}}}), &s), "0xabc");
    ASSERT_EQ(s.subscribed.size(), 1u);
    EXPECT_EQ(s.subscribed[0].dump(), R"(["logs",{"address":"0x12"}])");  // whole
    EXPECT_EQ(error("eth_subscribe", {"bogus"}, &s),
              std::make_pair(code::invalid_params, std::string{"no such subscription kind"}));
    EXPECT_EQ(error("eth_subscribe", json::object(), &s),
              std::make_pair(code::invalid_params, std::string{"non-array args"}));
    EXPECT_EQ(result("eth_unsubscribe", {"0xabc"}, &s), true);
    EXPECT_EQ(result("eth_unsubscribe", {"0x1"}, &s), false);
    EXPECT_EQ(s.unsubscribed, (std::vector<std::string>{"0xabc", "0x1"}));
    EXPECT_EQ(
        error("eth_unsubscribe", json::array(), &s),
        std::make_pair(code::invalid_params, std::string{"missing value for required argument 0"}));
    EXPECT_EQ(error("eth_unsubscribe", {1}, &s),
              std::make_pair(code::invalid_params,
                             std::string{"invalid argument 0 (id): want an id string"}));
    // A request run a step at a time (as a WebSocket session drives it) reaches it too.
    Methods::Run run = methods->begin(
        R"({"jsonrpc":"2.0","id":7,"method":"eth_subscribe","params":["newHeads"]})", &s);
    while (run.step()) {
    }
    EXPECT_EQ(json::parse(std::move(run).finish())["result"], "0xabc");
    Methods::Run http = methods->begin(
        R"({"jsonrpc":"2.0","id":7,"method":"eth_subscribe","params":["newHeads"]})");
    while (http.step()) {
    }
    EXPECT_EQ(json::parse(std::move(http).finish())["error"]["code"], code::method_not_found);
}

}  // namespace
}  // namespace barrel::rpc
