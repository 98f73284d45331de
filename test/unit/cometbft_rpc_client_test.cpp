// The node's client of CometBFT's RPC (src/cometbft/) against a stand-in for it: a real HTTP server
// on loopback that answers JSON-RPC as CometBFT v0.38 does (batches, numbers as strings) and
// records what it was sent. Waits are for an event (what the server received, what the client
// counted), with a generous deadline, never for a time.

#include "cometbft/rpc_client.hpp"
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace barrel::cometbft {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using nlohmann::json;
using namespace std::chrono_literals;

/// One JSON-RPC answer per call of a batch; `answer` gives a call's result, null for CometBFT's
/// "tx already exists in cache" error, or {"error": E} for the error answer E.
class FakeCometBft {
public:
    using Answer = std::function<json(const json& call)>;

    /// `unavailable`: batches answered HTTP 503 instead (CometBFT overloaded, a proxy in front).
    explicit FakeCometBft(Answer answer, std::function<bool(const json& batch)> unavailable = {})
        : m_answer{std::move(answer)}, m_unavailable{std::move(unavailable)} {
        m_acceptor.open(asio::ip::tcp::v4());
        m_acceptor.bind({asio::ip::make_address("127.0.0.1"), 0});
        m_acceptor.listen();
        m_thread = std::thread{[this] { serve(); }};
    }
    ~FakeCometBft() {
        m_stopping = true;
        beast::error_code ec;
        {
            std::lock_guard lock{m_mutex};
            if (m_socket) m_socket->shutdown(asio::ip::tcp::socket::shutdown_both, ec);
        }
        // A blocking accept is woken by a connection, not by closing the acceptor elsewhere.
        asio::ip::tcp::socket wake{m_io};
        wake.connect({asio::ip::make_address("127.0.0.1"), port()}, ec);
        m_thread.join();
    }

    std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
    uint16_t port() const { return m_acceptor.local_endpoint().port(); }

    /// Every call received so far, in order.
    std::vector<json> calls() const {
        std::lock_guard lock{m_mutex};
        return m_calls;
    }
    /// The size of each batch received.
    std::vector<size_t> batches() const {
        std::lock_guard lock{m_mutex};
        return m_batches;
    }

    /// Waits until `done` holds of the calls received (false after 30 s).
    bool wait(const std::function<bool(const std::vector<json>&)>& done) const {
        std::unique_lock lock{m_mutex};
        return m_received.wait_for(lock, 30s, [&] { return done(m_calls); });
    }

private:
    void serve() {
        while (!m_stopping) {
            asio::ip::tcp::socket socket{m_io};
            beast::error_code ec;
            m_acceptor.accept(socket, ec);
            if (ec || m_stopping) return;
            {
                std::lock_guard lock{m_mutex};
                m_socket = &socket;
            }
            beast::flat_buffer buffer;
            while (true) {
                http::request<http::string_body> request;
                http::read(socket, buffer, request, ec);
                if (ec) break;
                const json batch = json::parse(request.body());
                const bool refuse = m_unavailable && m_unavailable(batch);
                http::response<http::string_body> response{
                    refuse ? http::status::service_unavailable : http::status::ok, 11};
                response.set(http::field::content_type, "application/json");
                response.keep_alive(true);
                response.body() = refuse ? record(batch) : answer(batch).dump();
                response.prepare_payload();
                http::write(socket, response, ec);
                if (ec) break;
            }
            std::lock_guard lock{m_mutex};
            m_socket = nullptr;
        }
    }

    /// Records a batch as received; "" (the body of a refusal).
    std::string record(const json& batch) {
        {
            std::lock_guard lock{m_mutex};
            m_batches.push_back(batch.size());
            for (const json& call : batch) m_calls.push_back(call);
        }
        m_received.notify_all();
        return {};
    }

    json answer(const json& batch) {
        json out = json::array();
        record(batch);
        for (const json& call : batch) {
            json result = m_answer(call);
            if (result.is_object() && result.contains("error"))  // an error answer of the test's
                out.push_back({{"jsonrpc", "2.0"}, {"id", call["id"]}, {"error", result["error"]}});
            else if (result.is_null())
                out.push_back(
                    {{"jsonrpc", "2.0"},
                     {"id", call["id"]},
                     {"error", {{"code", -32603}, {"message", "tx already exists in cache"}}}});
            else
                out.push_back({{"jsonrpc", "2.0"}, {"id", call["id"]}, {"result", result}});
        }
        return out;
    }

    Answer m_answer;
    std::function<bool(const json& batch)> m_unavailable;
    asio::io_context m_io;
    asio::ip::tcp::acceptor m_acceptor{m_io};
    std::atomic<bool> m_stopping{false};
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_received;
    asio::ip::tcp::socket* m_socket{nullptr};
    std::vector<json> m_calls;
    std::vector<size_t> m_batches;
    std::thread m_thread;
};

/// CometBFT's answers to the three calls of a status poll.
json status_answers(const json& call) {
    const std::string method = call["method"];
    if (method == "status")
        return {{"node_info", {{"network", "barrel-test"}}},
                {"sync_info", {{"latest_block_height", "12"}, {"catching_up", true}}},
                {"validator_info", {{"address", "AB12"}, {"voting_power", "10"}}}};
    if (method == "net_info") return {{"listening", true}, {"n_peers", "3"}};
    if (method == "validators")
        return {{"block_height", "12"},
                {"count", "4"},
                {"total", "4"},
                {"validators", json::array({{{"voting_power", "10"}},
                                            {{"voting_power", "10"}},
                                            {{"voting_power", "10"}},
                                            {{"voting_power", "15"}}})}};
    return json::object();
}

ClientConfig fast(size_t batch) {
    return ClientConfig{.batch = batch, .poll_interval = 20ms, .timeout = 5s};
}

bool wait_for(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

TEST(cometbft_rpc_client, rpc_urls_are_http_host_and_port_only) {
    const auto ok = parse_rpc_url("http://127.0.0.1:26657");
    ASSERT_TRUE(ok);
    EXPECT_EQ(*ok, (HostPort{"127.0.0.1", 26657}));
    EXPECT_EQ(parse_rpc_url("http://[::1]:26657/").value(), (HostPort{"::1", 26657}));
    EXPECT_EQ(parse_rpc_url("http://127.0.0.1").value(), (HostPort{"127.0.0.1", 80}));
    EXPECT_EQ(parse_rpc_url("tcp://127.0.0.1:26657").error(),
              "expected http://HOST:PORT, got 'tcp://127.0.0.1:26657'");
    EXPECT_EQ(parse_rpc_url("http://127.0.0.1:26657/rpc").error(),
              "expected no path, got 'http://127.0.0.1:26657/rpc'");
    for (const char* port : {"65536", "x", ""})
        EXPECT_EQ(parse_rpc_url(std::string{"http://h:"} + port).error(),
                  std::string{"the port must be a number from 0 to 65535, got "
                              "'http://h:"} +
                      port + "'");
}

TEST(cometbft_rpc_client, transactions_are_handed_over_in_batches_as_base64) {
    FakeCometBft comet{[](const json& call) {
        // The second transaction is already in CometBFT's cache: its answer is an error.
        if (call["method"] == "broadcast_tx_async" && call["params"]["tx"] == "AQI=") return json{};
        return call["method"] == "broadcast_tx_async" ? json{{"code", 0}} : status_answers(call);
    }};
    CometClient client{parse_rpc_url(comet.url()).value(), fast(3), {}};
    client.start();
    // 0x, 0x0102, 0x010203, and four more: base64's three padding cases, 7 transactions.
    std::vector<Bytes> txs{{}, {1, 2}, {1, 2, 3}, {4}, {5}, {6}, {7}};
    const std::vector<BytesView> views{txs.begin(), txs.end()};
    client.broadcast(views);
    const auto sent = [](const std::vector<json>& calls) {
        std::vector<std::string> out;
        for (const json& c : calls)
            if (c["method"] == "broadcast_tx_async") out.push_back(c["params"]["tx"]);
        return out;
    };
    ASSERT_TRUE(
        comet.wait([&](const std::vector<json>& calls) { return sent(calls).size() == 7; }));
    EXPECT_EQ(sent(comet.calls()),
              (std::vector<std::string>{"", "AQI=", "AQID", "BA==", "BQ==", "Bg==", "Bw=="}));
    ASSERT_TRUE(wait_for([&] { return client.counts().broadcast == 6; }));
    EXPECT_EQ(client.counts().refused, 1u);
    EXPECT_EQ(client.counts().dropped, 0u);
    for (size_t size : comet.batches()) EXPECT_LE(size, 3u);  // a status poll is 3 calls too
}

TEST(cometbft_rpc_client, the_network_state_is_what_cometbft_last_said) {
    FakeCometBft comet{status_answers};
    CometClient client{parse_rpc_url(comet.url()).value(), fast(10), {}};
    EXPECT_FALSE(client.status().reachable);  // nothing asked yet
    client.start();
    ASSERT_TRUE(wait_for([&] { return client.status().reachable; }));
    const EngineStatus s = client.status();
    EXPECT_EQ(s.height, 12u);
    EXPECT_TRUE(s.catching_up);
    EXPECT_EQ(s.peers, 3u);
    EXPECT_EQ(s.validators, 4u);
    EXPECT_EQ(s.voting_power, 45);
    EXPECT_EQ(s.validator_address, "AB12");
    EXPECT_EQ(s.own_power, 10);
}

TEST(cometbft_rpc_client, a_refused_batch_is_tried_again_only_after_the_next_poll) {
    const auto is_broadcast = [](const json& batch) {
        return batch.at(0)["method"] == "broadcast_tx_async";
    };
    FakeCometBft comet{status_answers, is_broadcast};
    // No poll for an hour after the first: a refused batch waits that long.
    CometClient client{parse_rpc_url(comet.url()).value(),
                       ClientConfig{.batch = 10, .poll_interval = std::chrono::hours{1}},
                       {}};
    client.start();
    const std::vector<Bytes> txs{{1}, {2}};
    const std::vector<BytesView> views{txs.begin(), txs.end()};
    client.broadcast(std::span{views.data(), 1});
    const auto broadcasts = [&] {
        size_t n = 0;
        for (const json& c : comet.calls()) n += c["method"] == "broadcast_tx_async";
        return n;
    };
    ASSERT_TRUE(wait_for([&] { return broadcasts() == 1; }));
    // More to send wakes the client, but it holds them: no attempt before the next poll. (A
    // client that retried at once would have sent thousands of requests meanwhile.)
    client.broadcast(std::span{views.data() + 1, 1});
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(broadcasts(), 1u);
    EXPECT_EQ(client.counts().broadcast, 0u);
    client.stop();
}

TEST(cometbft_rpc_client, a_transaction_refused_for_a_full_mempool_is_handed_over_again) {
    // CometBFT v0.38's answer to broadcast_tx_async when its mempool is full (ErrMempoolIsFull in
    // the error's data), for the first attempt only; "already in its cache" is final.
    std::atomic<int> full_answers{1};
    FakeCometBft comet{[&](const json& call) -> json {
        if (call["method"] != "broadcast_tx_async") return status_answers(call);
        if (call["params"]["tx"] == "AQ==" && full_answers.fetch_sub(1) > 0)
            return {{"error",
                     {{"code", -32603},
                      {"message", "Internal error"},
                      {"data",
                       "mempool is full: number of txs 5000 (max: 5000), total txs bytes 550000 "
                       "(max: 1073741824)"}}}};
        if (call["params"]["tx"] == "Ag==") return json{};  // in its cache already
        return {{"code", 0}};
    }};
    CometClient client{parse_rpc_url(comet.url()).value(), fast(10), {}};
    client.start();
    const std::vector<Bytes> txs{{1}, {2}, {3}};
    const std::vector<BytesView> views{txs.begin(), txs.end()};
    client.broadcast(views);
    ASSERT_TRUE(wait_for([&] { return client.counts().broadcast == 2; }));
    const CometClient::Counts n = client.counts();
    EXPECT_EQ(n.mempool_full, 1u);
    EXPECT_EQ(n.refused, 1u);
    std::vector<std::string> sent;
    for (const json& c : comet.calls())
        if (c["method"] == "broadcast_tx_async") sent.push_back(c["params"]["tx"]);
    // The full mempool's transaction again, after a poll; the cached one never again.
    EXPECT_EQ(sent, (std::vector<std::string>{"AQ==", "Ag==", "Aw==", "AQ=="}));
}

TEST(cometbft_rpc_client, an_unreachable_cometbft_is_logged_once_and_its_queue_stays_bounded) {
    uint16_t closed_port = 0;
    {
        FakeCometBft gone{status_answers};  // a port nobody listens on once it is destroyed
        closed_port = gone.port();
    }
    std::mutex mutex;
    std::vector<std::string> lines;
    ClientConfig config = fast(2);
    config.max_queued = 3;
    CometClient client{HostPort{"127.0.0.1", closed_port}, config, [&](std::string_view line) {
                           std::lock_guard lock{mutex};
                           lines.emplace_back(line);
                       }};
    client.start();
    std::vector<Bytes> txs{{1}, {2}, {3}, {4}};
    const std::vector<BytesView> views{txs.begin(), txs.end()};
    client.broadcast(views);  // one more than the queue holds: the oldest is dropped
    ASSERT_TRUE(wait_for([&] {
        std::lock_guard lock{mutex};
        return !lines.empty();
    }));
    client.stop();
    EXPECT_EQ(client.counts().dropped, 1u);
    EXPECT_EQ(client.counts().broadcast, 0u);
    EXPECT_FALSE(client.status().reachable);
    std::lock_guard lock{mutex};
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0], "cometbft-rpc: CometBFT does not answer (http://127.0.0.1:" +
                            std::to_string(closed_port) +
                            ": cannot connect: Connection refused); transactions wait in the pool");
}

}  // namespace
}  // namespace barrel::cometbft
