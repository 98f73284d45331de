// The node's JSON-RPC service end to end through a real socket: calls and batches as a wallet
// sends them, each framing error code, and the limits answered while other clients are served.

#include <barrel/core/hex.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/store/store.hpp>

#include "http_client.hpp"
#include "metrics/node_metrics.hpp"
#include "rpc/service.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

namespace barrel::rpc {
namespace {

using test::Client;
namespace http = boost::beast::http;

class RpcService : public ::testing::Test {
protected:
    RpcService()
        : workload{test::generate_or_throw({.seed = 3, .blocks = 1, .txs = 4, .accounts = 4})},
          store{store::Store::init(dir.path() / "d", workload.genesis).value()},
          pool{pool::Config{.chain_id = 1,
                            .base_fee = workload.genesis.config.base_fee,
                            .block_gas_limit = workload.genesis.gas_limit},
               *store, nullptr},
          node{.store = *store, .pool = pool, .client_version = "barrel/test", .metrics = &metrics},
          service{node, Limits{.max_batch = 3}, HttpOptions{.port = 0, .max_body_bytes = 4096}} {
        EXPECT_TRUE(service.start().has_value());
    }

    json post(Client& c, const std::string& body) {
        const auto res = c.post(body);
        EXPECT_EQ(res.result_int(), 200u) << body;
        EXPECT_EQ(res[http::field::content_type], "application/json");
        return json::parse(res.body());
    }

    test::ScratchDir dir;
    gen::Workload workload;
    std::unique_ptr<store::Store> store;
    pool::Pool pool;
    metrics::NodeMetrics metrics;
    Node node;
    Service service;
};

TEST_F(RpcService, calls_batches_and_errors_over_http) {
    Client c{service.port()};
    EXPECT_EQ(post(c, R"({"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]})"),
              json::parse(R"({"jsonrpc":"2.0","id":1,"result":"0x1"})"));
    const json batch = post(c, R"([{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},
                                   {"jsonrpc":"2.0","id":2,"method":"net_version"}])");
    ASSERT_EQ(batch.size(), 2u);
    EXPECT_EQ(batch[0]["result"], "0x0");
    EXPECT_EQ(batch[1]["result"], "1");
    auto code_of = [&](const std::string& body) {
        return post(c, body)["error"]["code"].get<int>();
    };
    EXPECT_EQ(code_of("{not json"), code::parse_error);
    EXPECT_EQ(code_of("[]"), code::invalid_request);
    EXPECT_EQ(code_of(R"({"id":1,"method":"eth_chainId"})"), code::invalid_request);
    EXPECT_EQ(code_of(R"({"jsonrpc":"2.0","id":1,"method":"eth_nope"})"), code::method_not_found);
    EXPECT_EQ(code_of(R"({"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":[1]})"),
              code::invalid_params);
    EXPECT_EQ(
        code_of(R"({"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x00"]})"),
        code::server_error);
    const json big = post(c, R"([{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},
                                 {"jsonrpc":"2.0","id":2,"method":"eth_chainId"},
                                 {"jsonrpc":"2.0","id":3,"method":"eth_chainId"},
                                 {"jsonrpc":"2.0","id":4,"method":"eth_chainId"}])");
    EXPECT_EQ(big["error"]["message"], "batch too large");
    // A notification: an empty body.
    EXPECT_EQ(c.post(R"({"jsonrpc":"2.0","method":"eth_chainId"})").body(), "");
    // The same connection is still served after every error.
    EXPECT_EQ(post(c, R"({"jsonrpc":"2.0","id":9,"method":"eth_chainId"})")["result"], "0x1");
}

TEST_F(RpcService, an_oversized_body_is_413_and_others_are_served) {
    Client big{service.port()};
    const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[")" +
                             std::string(5000, 'a') + R"("]})";
    const auto res = big.post(body);
    EXPECT_EQ(res.result_int(), 413u);
    EXPECT_TRUE(big.closed_by_server());
    Client other{service.port()};
    EXPECT_EQ(post(other, R"({"jsonrpc":"2.0","id":1,"method":"eth_chainId"})")["result"], "0x1");
}

TEST_F(RpcService, metrics_are_served_as_prometheus_text) {
    Client c{service.port()};
    const std::string one = R"({"jsonrpc":"2.0","id":1,"method":"eth_chainId"})";
    // Each call of a batch counts under its method; what is not a known method's call (an
    // unknown method, an object that is not a call) under "unknown".
    const std::string batch = R"([{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},
                                  {"jsonrpc":"2.0","id":2,"method":"eth_nope"},
                                  {"jsonrpc":"2.0","id":3,"method":"eth_sendRawTransaction",
                                   "params":["0x00"]}])";
    const std::string with_bad_call = R"([{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}, 7])";
    post(c, one);
    post(c, batch);
    post(c, with_bad_call);
    c.send(http::verb::get, "/metrics", "", "");
    const auto res = c.receive();
    EXPECT_EQ(res.result_int(), 200u);
    EXPECT_EQ(res[http::field::content_type], "text/plain; version=0.0.4; charset=utf-8");
    const std::string& text = res.body();
    auto expect_line = [&](const std::string& series, size_t value) {
        EXPECT_NE(text.find("\n" + series + " " + std::to_string(value) + "\n"), std::string::npos)
            << series << " " << value << " in\n"
            << text;
    };
    expect_line(R"(barrel_rpc_requests_total{method="eth_chainId"})", 1);
    expect_line(R"(barrel_rpc_errors_total{method="eth_chainId"})", 0);
    expect_line(R"(barrel_rpc_requests_total{method="eth_blockNumber"})", 2);
    expect_line(R"(barrel_rpc_requests_total{method="unknown"})", 2);
    expect_line(R"(barrel_rpc_errors_total{method="unknown"})", 2);
    expect_line(R"(barrel_rpc_requests_total{method="eth_sendRawTransaction"})", 1);
    expect_line(R"(barrel_rpc_errors_total{method="eth_sendRawTransaction"})", 1);
    expect_line(R"(barrel_pool_rejected_total{reason="malformed"})", 1);
    expect_line("barrel_pool_admitted_total", 0);
    expect_line("barrel_rpc_http_requests_total", 3);
    expect_line("barrel_rpc_request_bytes_total", one.size() + batch.size() + with_bad_call.size());
    expect_line("barrel_rpc_request_duration_seconds_count", 3);
    expect_line("barrel_rpc_connections", 1);  // this client's, the one open
}

}  // namespace
}  // namespace barrel::rpc
