// JSON-RPC over WebSocket on the HTTP port: calls and batches, eth_subscribe's notifications
// (every committed block's newHeads in order however busy the connection was, the response
// before the first notification), and the limits: message size, subscriptions per connection,
// a client that does not read. Events are published straight to rpc::Events, and the
// connection is held busy through the before_call seam, so no test waits on timing.

#include <barrel/core/hex.hpp>
#include <barrel/gen/transfer.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/store/store.hpp>
#include <barrel/tx/transaction.hpp>

#include "http_client.hpp"
#include "node_parts.hpp"
#include "rpc/service.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <boost/beast/websocket.hpp>
#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <optional>
#include <regex>
#include <thread>

namespace barrel::rpc {
namespace {

/// The node's filters (eth_newBlockFilter, …) listen to its events from the start; what a
/// WebSocket connection adds comes on top.
constexpr size_t kFilterListeners = 1;

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

constexpr uint64_t kWsSeed = 11;

/// A blocking WebSocket client; a read that waits more than 30 s fails (a broken server ends
/// the test instead of hanging it).
class WsClient {
public:
    /// `origin`: the Origin header a browser's page would send (none: not a browser).
    explicit WsClient(uint16_t port, int receive_buffer = 0,
                      std::optional<std::string> origin = std::nullopt)
        : m_ws{m_ioc} {
        auto& socket = m_ws.next_layer();
        socket.open(tcp::v4());
        if (receive_buffer > 0)
            ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVBUF, &receive_buffer,
                         sizeof receive_buffer);
        timeval tv{30, 0};
        ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        socket.connect(tcp::endpoint{asio::ip::make_address("127.0.0.1"), port});
        if (origin)
            m_ws.set_option(websocket::stream_base::decorator(
                [o = *origin](websocket::request_type& req) { req.set("Origin", o); }));
        m_ws.handshake("127.0.0.1:" + std::to_string(port), "/");
    }

    void send(const std::string& text) { m_ws.write(asio::buffer(text)); }
    std::string receive_text() {
        beast::flat_buffer buffer;
        m_ws.read(buffer);
        return beast::buffers_to_string(buffer.data());
    }
    json receive() { return json::parse(receive_text()); }
    /// The response to one call.
    json call(const std::string& method, json params = json::array(), int id = 1) {
        send(json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump());
        return receive();
    }
    /// The error a read ends with (the server closed), and the close code it sent.
    std::pair<beast::error_code, uint16_t> read_until_closed() {
        beast::error_code ec;
        for (;;) {
            beast::flat_buffer buffer;
            m_ws.read(buffer, ec);
            if (ec) return {ec, m_ws.reason().code};
        }
    }
    websocket::stream<tcp::socket>& stream() { return m_ws; }

private:
    asio::io_context m_ioc;
    websocket::stream<tcp::socket> m_ws;
};

/// Holds the calls of one method (before_call) until released, so that a test can act while
/// a connection's work is running.
class Gate {
public:
    void hold(std::string method) {
        std::lock_guard lock{m_mutex};
        m_method = std::move(method);
    }
    void before(const Call& call) {
        std::unique_lock lock{m_mutex};
        if (call.method != m_method) return;
        m_entered = true;
        m_changed.notify_all();
        m_changed.wait(lock, [&] { return m_released; });
    }
    void wait_entered() {
        std::unique_lock lock{m_mutex};
        m_changed.wait(lock, [&] { return m_entered; });
    }
    void release() {
        std::lock_guard lock{m_mutex};
        m_released = true;
        m_changed.notify_all();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::string m_method;
    bool m_entered{false};
    bool m_released{false};
};

class RpcWs : public ::testing::Test {
protected:
    RpcWs()
        : workload{test::generate_or_throw(
              {.seed = kWsSeed, .blocks = 4, .txs = 4, .accounts = 6})},
          parts{store::Store::init(dir.path() / "d", workload.genesis).value()} {
        parts.import(workload.blocks);
        node.emplace(Node{.store = *parts.store,
                          .pool = parts.pool,
                          .client_version = "barrel/test",
                          .before_call = [this](const Call& c) { gate.before(c); },
                          .events = &events});
    }
    ~RpcWs() override {
        gate.release();
        if (service) service->stop();
    }

    void start(HttpOptions http = {}, SubscriptionLimits subs = {}) {
        http.port = 0;
        service.emplace(*node, Limits{.max_batch = 5}, http, subs);
        ASSERT_TRUE(service->start().has_value());
    }

    json header_of(uint64_t n) {
        test::Client http{service->port()};
        const auto res = http.post(json{{"jsonrpc", "2.0"},
                                        {"id", 1},
                                        {"method", "eth_getBlockByNumber"},
                                        {"params", {to_hex_quantity(n), false}}}
                                       .dump());
        json block = json::parse(res.body())["result"];
        for (const char* key : {"transactions", "uncles", "size", "totalDifficulty"})
            block.erase(key);
        return block;
    }

    Address account(size_t i) const { return *tx::address_of(gen::account_key(kWsSeed, i)); }
    Bytes transfer(size_t i) {
        const auto nonce =
            parts.store->account(account(i)).value().value_or(state::Account{}).nonce;
        return gen::signed_transfer({.key = gen::account_key(kWsSeed, i),
                                     .to = account(i + 1),
                                     .nonce = nonce,
                                     .value = 5});
    }

    test::ScratchDir dir;
    gen::Workload workload;
    test::NodeParts parts;
    Events events;
    Gate gate;
    std::optional<Node> node;
    std::optional<Service> service;
};

bool is_subscription_id(const json& id) {
    static const std::regex form{"0x[1-9a-f][0-9a-f]{0,31}"};
    return id.is_string() && std::regex_match(id.get<std::string>(), form);
}

TEST_F(RpcWs, calls_and_batches_over_websocket_with_http_on_the_same_port) {
    start();
    WsClient ws{service->port()};
    EXPECT_EQ(ws.call("eth_chainId"), json::parse(R"({"jsonrpc":"2.0","id":1,"result":"0x1"})"));
    ws.send(R"([{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},
                {"jsonrpc":"2.0","id":2,"method":"net_version"}])");
    const json batch = ws.receive();
    ASSERT_EQ(batch.size(), 2u);
    EXPECT_EQ(batch[0]["result"], "0x4");
    EXPECT_EQ(batch[1]["result"], "1");
    ws.send("{not json");
    EXPECT_EQ(ws.receive()["error"]["code"], code::parse_error);
    ws.send(R"([1,2,3,4,5,6])");
    EXPECT_EQ(ws.receive()["error"]["message"], "batch too large");
    // A notification gets no answer: the next message is the next call's response.
    ws.send(R"({"jsonrpc":"2.0","method":"eth_chainId"})");
    EXPECT_EQ(ws.call("eth_blockNumber", json::array(), 7)["id"], 7);
    // HTTP on the same port, while the WebSocket connection is open; both are counted.
    test::Client http{service->port()};
    EXPECT_EQ(json::parse(
                  http.post(R"({"jsonrpc":"2.0","id":1,"method":"eth_chainId"})").body())["result"],
              "0x1");
    EXPECT_EQ(service->server().connections(), 2u);
    EXPECT_EQ(ws.call("eth_chainId")["result"], "0x1");
}

TEST_F(RpcWs, a_page_of_an_allowed_origin_connects_and_another_is_refused_403) {
    start({.access = {.cors_origins = {"https://dapp.example"}}});
    WsClient allowed{service->port(), 0, "https://dapp.example"};
    EXPECT_EQ(allowed.call("eth_chainId")["result"], "0x1");
    WsClient not_a_browser{service->port()};
    EXPECT_EQ(not_a_browser.call("eth_chainId")["result"], "0x1");
    try {
        WsClient refused{service->port(), 0, "https://evil.example"};
        ADD_FAILURE() << "the handshake of an origin not allowed succeeded";
    } catch (const boost::system::system_error& e) {
        EXPECT_EQ(e.code(), websocket::error::upgrade_declined) << e.what();
    }
}

TEST_F(RpcWs, subscribe_and_unsubscribe) {
    start();
    WsClient ws{service->port()};
    const json id = ws.call("eth_subscribe", {"newHeads"})["result"];
    EXPECT_TRUE(is_subscription_id(id)) << id;
    const json other = ws.call("eth_subscribe", {"newPendingTransactions"})["result"];
    EXPECT_TRUE(is_subscription_id(other)) << other;
    EXPECT_NE(id, other);
    EXPECT_TRUE(is_subscription_id(
        ws.call("eth_subscribe", {"logs", {{"address", to_hex(account(0))}}})["result"]));
    EXPECT_EQ(ws.call("eth_unsubscribe", json::array({id}))["result"], true);
    EXPECT_EQ(ws.call("eth_unsubscribe", json::array({id}))["result"], false);
    EXPECT_EQ(ws.call("eth_unsubscribe", {"0x1"})["result"], false);
    // Unsubscribed: the next block is not notified (the next message is the call's answer).
    events.publish_block(1, Hash{});
    EXPECT_EQ(ws.call("eth_chainId", json::array(), 5)["id"], 5);
}

TEST_F(RpcWs, subscription_errors_are_go_ethereums) {
    start();
    WsClient ws{service->port()};
    auto error_of = [&](json params) {
        const json e = ws.call("eth_subscribe", std::move(params))["error"];
        return std::make_pair(e["code"].get<int>(), e["message"].get<std::string>());
    };
    using E = std::pair<int, std::string>;
    EXPECT_EQ(error_of({"newBlocks"}),
              (E{code::method_not_found, "no \"newBlocks\" subscription in eth namespace"}));
    EXPECT_EQ(error_of(json::array()),
              (E{code::invalid_params, "expected subscription name as first argument"}));
    EXPECT_EQ(error_of({7}),
              (E{code::invalid_params, "expected subscription name as first argument"}));
    EXPECT_EQ(error_of({"newHeads", true}),
              (E{code::invalid_params, "too many arguments, want at most 1"}));
    EXPECT_EQ(
        error_of({"newPendingTransactions", true}),
        (E{code::invalid_params,
           "invalid argument 1 (fullTx): full transactions are not sent, only their hashes"}));
    EXPECT_EQ(error_of({"logs"}),
              (E{code::invalid_params, "missing value for required argument 1"}));
    EXPECT_EQ(error_of({"logs", {{"address", "0x12"}}}),
              (E{code::invalid_params,
                 "invalid argument 1 (filter): invalid address: hex has invalid length 1 after "
                 "decoding; expected 20 for address"}));
    EXPECT_EQ(error_of({"logs", {{"topics", {nullptr, nullptr, nullptr, nullptr, nullptr}}}}),
              (E{code::invalid_params, "invalid argument 1 (filter): exceed max topics"}));
    EXPECT_EQ(
        error_of({"logs", {{"blockHash", "0x" + std::string(64, '1')}, {"fromBlock", "0x1"}}}),
        (E{code::invalid_params,
           "invalid argument 1 (filter): cannot specify both BlockHash and FromBlock/ToBlock, "
           "choose one or the other"}));
    // A subscription that failed is no subscription: the connection holds none (the one
    // listener is the node's filters').
    EXPECT_EQ(events.listeners(), kFilterListeners);
}

TEST_F(RpcWs, new_heads_for_every_block_in_order_however_busy_the_connection) {
    start();
    WsClient ws{service->port()};
    const json id = ws.call("eth_subscribe", {"newHeads"})["result"];
    // Two blocks announced between reads.
    events.publish_block(1, Hash{});
    events.publish_block(2, Hash{});
    for (uint64_t n : {1, 2}) {
        const json note = ws.receive();
        EXPECT_EQ(note["jsonrpc"], "2.0");
        EXPECT_EQ(note["method"], "eth_subscription");
        EXPECT_EQ(note["params"]["subscription"], id);
        EXPECT_EQ(note["params"]["result"], header_of(n)) << n;
    }
    // Two more while the connection's worker runs a call: both come after its response.
    gate.hold("eth_blockNumber");
    ws.send(R"({"jsonrpc":"2.0","id":9,"method":"eth_blockNumber"})");
    gate.wait_entered();
    events.publish_block(3, Hash{});
    events.publish_block(4, Hash{});
    gate.release();
    EXPECT_EQ(ws.receive()["id"], 9);
    EXPECT_EQ(ws.receive()["params"]["result"]["number"], "0x3");
    EXPECT_EQ(ws.receive()["params"]["result"]["number"], "0x4");
}

TEST_F(RpcWs, the_subscribe_response_comes_before_its_first_notification) {
    start();
    WsClient ws{service->port()};
    // The block is announced after eth_subscribe has made the subscription, while the
    // request's next call runs: its notification waits for the request's response.
    node->before_call = [this](const Call& c) {
        if (c.method == "eth_blockNumber") events.publish_block(1, Hash{});
    };
    ws.send(R"([{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]},
                {"jsonrpc":"2.0","id":2,"method":"eth_blockNumber"}])");
    const json response = ws.receive();
    ASSERT_TRUE(response.is_array()) << response;
    const json id = response[0]["result"];
    EXPECT_TRUE(is_subscription_id(id));
    const json note = ws.receive();
    EXPECT_EQ(note["params"]["subscription"], id);
    EXPECT_EQ(note["params"]["result"]["number"], "0x1");
}

TEST_F(RpcWs, new_pending_transactions_after_an_admission) {
    start();
    WsClient ws{service->port()};
    const json id = ws.call("eth_subscribe", {"newPendingTransactions"})["result"];
    const json heads = ws.call("eth_subscribe", {"newHeads"})["result"];
    const Bytes raw = transfer(0);
    const std::string hash = to_hex(tx::hash_of(raw));
    // Sent over HTTP: a subscription hears every connection's admissions.
    test::Client http{service->port()};
    const json sent = json::parse(http.post(json{{"jsonrpc", "2.0"},
                                                 {"id", 1},
                                                 {"method", "eth_sendRawTransaction"},
                                                 {"params", {to_hex(raw)}}}
                                                .dump())
                                      .body());
    EXPECT_EQ(sent["result"], hash) << sent;
    const json note = ws.receive();
    EXPECT_EQ(note, json({{"jsonrpc", "2.0"},
                          {"method", "eth_subscription"},
                          {"params", {{"subscription", id}, {"result", hash}}}}));
    // A refused transaction is announced to nobody: the next message is the next block's.
    http.post(json{{"jsonrpc", "2.0"},
                   {"id", 1},
                   {"method", "eth_sendRawTransaction"},
                   {"params", {to_hex(raw)}}}
                  .dump());
    events.publish_block(1, Hash{});
    EXPECT_EQ(ws.receive()["params"]["subscription"], heads);
}

// A transaction is announced before the head of the block that includes it (Methods announces
// it before waking the sealer); when both wait for a busy connection, the hash still goes first.
TEST_F(RpcWs, a_pending_hash_comes_before_the_head_of_its_block) {
    start();
    WsClient ws{service->port()};
    const json pending = ws.call("eth_subscribe", {"newPendingTransactions"})["result"];
    const json heads = ws.call("eth_subscribe", {"newHeads"})["result"];
    gate.hold("eth_blockNumber");
    ws.send(R"({"jsonrpc":"2.0","id":9,"method":"eth_blockNumber"})");
    gate.wait_entered();
    const std::vector<Hash> admitted{Hash{}};
    events.publish_pending(admitted);
    events.publish_block(1, Hash{});
    gate.release();
    EXPECT_EQ(ws.receive()["id"], 9);
    EXPECT_EQ(ws.receive()["params"]["subscription"], pending);
    EXPECT_EQ(ws.receive()["params"]["subscription"], heads);
}

TEST_F(RpcWs, subscriptions_per_connection_are_bounded) {
    start({}, SubscriptionLimits{.max_per_connection = 2});
    WsClient ws{service->port()};
    const json first = ws.call("eth_subscribe", {"newHeads"})["result"];
    EXPECT_TRUE(is_subscription_id(ws.call("eth_subscribe", {"newHeads"})["result"]));
    EXPECT_EQ(
        ws.call("eth_subscribe", {"newPendingTransactions"})["error"],
        json({{"code", code::server_error}, {"message", "too many subscriptions (limit 2)"}}));
    ASSERT_EQ(ws.call("eth_unsubscribe", json::array({first}))["result"], true);
    EXPECT_TRUE(is_subscription_id(ws.call("eth_subscribe", {"newHeads"})["result"]));
    // The bound is per connection.
    WsClient other{service->port()};
    EXPECT_TRUE(is_subscription_id(other.call("eth_subscribe", {"newHeads"})["result"]));
}

TEST_F(RpcWs, a_message_over_the_size_limit_closes_with_message_too_big) {
    start(HttpOptions{.max_body_bytes = 4096});
    WsClient ws{service->port()};
    const std::string padded =
        R"({"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[],"pad":")" +
        std::string(3000, 'x') + "\"}";
    EXPECT_EQ(json::parse((ws.send(padded), ws.receive_text()))["result"], "0x1");
    // Far larger than the limit, so that the client is still sending when the server refuses
    // it: the close handshake still carries the code (the rest is read and discarded).
    ws.send(R"({"jsonrpc":"2.0","id":1,"method":"eth_chainId","pad":")" +
            std::string(4 * 1024 * 1024, 'x') + "\"}");
    const auto [ec, close_code] = ws.read_until_closed();
    EXPECT_EQ(ec, websocket::error::closed) << ec.message();
    EXPECT_EQ(close_code, websocket::close_code::too_big);
}

class PlainHandler : public HttpHandler {
public:
    HttpResponse post(std::string_view) override { return {}; }
    HttpResponse metrics() override { return {}; }
};

TEST(rpc_ws, an_upgrade_to_a_handler_without_websocket_is_refused) {
    PlainHandler handler;
    HttpServer server{HttpOptions{.port = 0}, handler};
    ASSERT_TRUE(server.start().has_value());
    try {
        WsClient ws{server.port()};
        ADD_FAILURE() << "the upgrade was accepted";
    } catch (const beast::system_error& e) {
        EXPECT_EQ(e.code(), websocket::error::upgrade_declined) << e.code().message();
    }
    // The refused connection gave its slot back.
    for (int i = 0; i < 5000 && server.connections() != 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds{1});
    EXPECT_EQ(server.connections(), 0u);
}

class FloodServer;

/// A transport-level handler: each wake makes `per_wake` messages of `size` bytes.
class Flood final : public WsHandler {
public:
    Flood(FloodServer& server, size_t per_wake, size_t size)
        : m_server{server}, m_per_wake{per_wake}, m_size{size} {}
    ~Flood() override;
    class Work final : public WsWork {
    public:
        explicit Work(std::vector<std::string> out) : m_out{std::move(out)} {}
        bool step() override { return false; }
        std::vector<std::string> messages() override { return std::move(m_out); }

    private:
        std::vector<std::string> m_out;
    };
    std::unique_ptr<WsWork> begin_message(std::string text) override {
        return std::make_unique<Work>(std::vector<std::string>{std::move(text)});
    }
    std::unique_ptr<WsWork> begin_notify() override {
        return std::make_unique<Work>(
            std::vector<std::string>(m_per_wake, std::string(m_size, 'n')));
    }

private:
    FloodServer& m_server;
    size_t m_per_wake;
    size_t m_size;
};

class FloodServer final : public PlainHandler {
public:
    std::unique_ptr<WsHandler> open_websocket(WsConnection& c) override {
        std::lock_guard lock{mutex};
        connection = &c;
        return std::make_unique<Flood>(*this, 16, 1000);
    }
    /// Wakes the connection while its handler lives.
    void wake() {
        std::lock_guard lock{mutex};
        if (connection) connection->wake();
    }
    std::mutex mutex;
    WsConnection* connection{nullptr};
};

Flood::~Flood() {
    std::lock_guard lock{m_server.mutex};
    m_server.connection = nullptr;
}

TEST(rpc_ws, a_client_that_does_not_read_is_dropped_with_its_queue_bounded) {
    constexpr size_t kBound = 64 * 1024;
    FloodServer handler;
    HttpServer server{HttpOptions{.port = 0, .max_ws_unsent_bytes = kBound}, handler};
    ASSERT_TRUE(server.start().has_value());
    WsClient ws{server.port(), /*receive_buffer=*/4096};
    ws.send("echo");  // the connection is open (and its handler made) once this comes back
    ASSERT_EQ(ws.receive_text(), "echo");
    // The client reads nothing more: the kernel's buffers fill, then the connection's queue,
    // until the next message would pass the bound. Each wake queues 16 kB; the loop ends
    // when the connection is dropped (well before its 20,000 wakes, 320 MB).
    for (int i = 0; i < 20'000 && server.ws_stats().dropped == 0; ++i) {
        handler.wake();
        std::this_thread::sleep_for(std::chrono::microseconds{200});
    }
    EXPECT_EQ(server.ws_stats().dropped, 1u);
    EXPECT_LE(server.ws_stats().peak_unsent, kBound);
    EXPECT_GT(server.ws_stats().peak_unsent, kBound / 2);
    // What the kernel held is delivered, then the close.
    const auto [ec, close_code] = ws.read_until_closed();
    EXPECT_TRUE(ec) << "the connection was not closed";
    for (int i = 0; i < 5000 && server.connections() != 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds{1});
    EXPECT_EQ(server.connections(), 0u);
}

TEST_F(RpcWs, a_subscriber_that_does_not_read_is_dropped_with_its_queue_bounded) {
    constexpr size_t kBound = 64 * 1024;
    start(HttpOptions{.max_ws_unsent_bytes = kBound},
          SubscriptionLimits{.max_pending_backlog = 1'000'000});
    WsClient ws{service->port(), /*receive_buffer=*/4096};
    ASSERT_TRUE(is_subscription_id(ws.call("eth_subscribe", {"newPendingTransactions"})["result"]));
    std::vector<Hash> hashes(100);
    for (int i = 0; i < 20'000 && service->server().ws_stats().dropped == 0; ++i) {
        events.publish_pending(hashes);
        std::this_thread::sleep_for(std::chrono::microseconds{200});
    }
    EXPECT_EQ(service->server().ws_stats().dropped, 1u);
    EXPECT_LE(service->server().ws_stats().peak_unsent, kBound);
    EXPECT_TRUE(ws.read_until_closed().first);
    // Its listener goes with it.
    for (int i = 0; i < 5000 && events.listeners() != kFilterListeners; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds{1});
    EXPECT_EQ(events.listeners(), kFilterListeners);
}

TEST_F(RpcWs, announced_transactions_past_the_backlog_drop_the_connection) {
    start({}, SubscriptionLimits{.max_pending_backlog = 10});
    WsClient ws{service->port()};
    ASSERT_TRUE(is_subscription_id(ws.call("eth_subscribe", {"newPendingTransactions"})["result"]));
    // Eleven announced while the connection's worker is held: the eleventh passes the bound.
    gate.hold("eth_blockNumber");
    ws.send(R"({"jsonrpc":"2.0","id":9,"method":"eth_blockNumber"})");
    gate.wait_entered();
    events.publish_pending(std::vector<Hash>(11));
    gate.release();
    EXPECT_TRUE(ws.read_until_closed().first);
    EXPECT_EQ(service->server().ws_stats().dropped, 1u);
}

TEST_F(RpcWs, websocket_connections_count_against_the_limit_and_idle_ones_are_reclaimed) {
    start(HttpOptions{.max_connections = 1});
    WsClient ws{service->port()};
    EXPECT_EQ(ws.call("eth_chainId")["result"], "0x1");
    EXPECT_EQ(service->server().connections(), 1u);
    // A new connection at the limit takes the idle WebSocket connection's place.
    test::Client http{service->port()};
    EXPECT_EQ(json::parse(
                  http.post(R"({"jsonrpc":"2.0","id":1,"method":"eth_chainId"})").body())["result"],
              "0x1");
    EXPECT_TRUE(ws.read_until_closed().first);
}

}  // namespace
}  // namespace barrel::rpc
