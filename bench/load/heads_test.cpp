// HeadSignal (heads.hpp) against a WebSocket server of the test's own, which answers the
// subscription as a node would (or refuses it) and pushes heads when the test says: each head
// wakes a wait, a head pushed while nobody waits is kept for the next wait, a wait with none
// ends at its timeout, and a node that closes the subscription, refuses it or is not there is
// polled until it subscribes again.

#include "heads.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <thread>

using namespace barrel;
using namespace barrel::load;
using namespace std::chrono_literals;

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

/// Accepts one WebSocket at a time on a loopback port; what it does with each is `serve`'s,
/// after which the connection is closed.
class FakeNode {
public:
    using Serve = std::function<void(websocket::stream<tcp::socket>&, const std::string& request)>;

    FakeNode() : m_acceptor{m_ioc, tcp::endpoint{asio::ip::make_address("127.0.0.1"), 0}} {}

    uint16_t port() const { return m_acceptor.local_endpoint().port(); }
    HttpUrl url() const { return HttpUrl{HostPort{"127.0.0.1", port()}, "/"}; }

    /// Accepts the next connection on a thread: upgrades it, reads the subscription request,
    /// and hands both to `serve`, whose return closes the connection.
    /// Its result: the upgrade's target and the request, as "TARGET REQUEST".
    std::future<std::string> serve_one(Serve serve) {
        return std::async(std::launch::async, [this, serve = std::move(serve)] {
            websocket::stream<tcp::socket> ws{m_acceptor.accept()};
            beast::flat_buffer upgrade_buffer;
            beast::http::request<beast::http::string_body> upgrade;
            beast::http::read(ws.next_layer(), upgrade_buffer, upgrade);
            const std::string target{upgrade.target()};
            ws.accept(upgrade);
            beast::flat_buffer buffer;
            ws.read(buffer);
            const std::string request = beast::buffers_to_string(buffer.data());
            serve(ws, request);
            // Closed as a killed node's are: no closing handshake.
            beast::error_code ignored;
            ws.next_layer().shutdown(tcp::socket::shutdown_both, ignored);
            ws.next_layer().close(ignored);
            return target + " " + request;
        });
    }

private:
    asio::io_context m_ioc;
    tcp::acceptor m_acceptor;
};

void send(websocket::stream<tcp::socket>& ws, const std::string& text) {
    ws.write(asio::buffer(text));
}

constexpr auto kSubscribed =
    R"({"jsonrpc":"2.0","id":1,"result":"0x9cef478923ff08bf67fde6c64013158d"})";
constexpr auto kHead =
    R"({"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x9cef478923ff08bf67fde6c64013158d","result":{"number":"0x1b4"}}})";

}  // namespace

TEST(load_heads, each_pushed_head_wakes_one_wait_and_none_times_out) {
    FakeNode node;
    std::promise<void> push_two, pushed_two, release;
    auto served = node.serve_one([&](auto& ws, const std::string&) {
        send(ws, kSubscribed);
        push_two.get_future().wait();
        send(ws, kHead);
        send(ws, kHead);
        pushed_two.set_value();
        release.get_future().wait();
    });
    HeadSignal heads{node.url(), HeadSignal::Protocol::ethereum};
    ASSERT_TRUE(heads.subscribed());
    EXPECT_EQ(heads.subscriptions(), 1u);

    // Nothing pushed: the wait ends at its timeout, having slept about that long.
    auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(heads.wait(50ms, 1ms));
    EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);

    // Two heads pushed while nobody waits: each wakes one wait at once, then none is left.
    push_two.set_value();
    pushed_two.get_future().wait();
    start = std::chrono::steady_clock::now();
    EXPECT_TRUE(heads.wait(10s, 1ms));
    EXPECT_TRUE(heads.wait(10s, 1ms));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    EXPECT_FALSE(heads.wait(20ms, 1ms));
    EXPECT_EQ(heads.heads(), 2u);
    release.set_value();
    EXPECT_EQ(served.get(),
              std::string{"/ "} +
                  R"({"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]})");
}

TEST(load_heads, cometbft_is_subscribed_to_at_its_websocket_path) {
    FakeNode node;
    auto served = node.serve_one([&](auto& ws, const std::string&) {
        send(ws, R"({"jsonrpc":"2.0","id":1,"result":{}})");
        send(ws, R"({"jsonrpc":"2.0","id":1,"result":{"query":"tm.event='NewBlockHeader'"}})");
    });
    HeadSignal heads{node.url(), HeadSignal::Protocol::cometbft};
    EXPECT_TRUE(heads.subscribed());
    EXPECT_TRUE(heads.wait(10s, 1ms));
    EXPECT_EQ(
        served.get(),
        std::string{"/websocket "} +
            R"({"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"query":"tm.event='NewBlockHeader'"}})");
}

TEST(load_heads, a_closed_subscription_is_polled_then_opened_again) {
    FakeNode node;
    auto first = node.serve_one([&](auto& ws, const std::string&) { send(ws, kSubscribed); });
    HeadSignal heads{node.url(), HeadSignal::Protocol::ethereum};
    ASSERT_TRUE(heads.subscribed());
    first.get();  // the node closed it
    auto second = node.serve_one([&](auto& ws, const std::string&) {
        send(ws, kSubscribed);
        send(ws, kHead);
    });
    const auto before_loss = std::chrono::steady_clock::now();
    EXPECT_FALSE(heads.wait(10s, 1ms));
    EXPECT_FALSE(heads.subscribed());
    // Polled (each wait a sleep of its poll) until kReopenAfter after the loss, then opened
    // again, and its head wakes the wait.
    size_t polls = 0;
    while (!heads.wait(10s, 1ms) && polls < 10'000) ++polls;
    EXPECT_GE(std::chrono::steady_clock::now() - before_loss, HeadSignal::kReopenAfter);
    EXPECT_GT(polls, 0u);
    EXPECT_TRUE(heads.subscribed());
    EXPECT_EQ(heads.subscriptions(), 2u);
    EXPECT_EQ(heads.heads(), 1u);
    second.get();
}

TEST(load_heads, a_refused_subscription_or_no_node_is_polled) {
    FakeNode node;
    // An endpoint with WebSockets but no such subscription (go-ethereum without the eth
    // namespace on it): an error answer.
    auto refused = node.serve_one([&](auto& ws, const std::string&) {
        send(
            ws,
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"the method eth_subscribe does not exist/is not available"}})");
    });
    HeadSignal heads{node.url(), HeadSignal::Protocol::ethereum};
    EXPECT_FALSE(heads.subscribed());
    refused.get();
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(heads.wait(10s, 30ms));  // the poll, not the timeout
    EXPECT_GE(std::chrono::steady_clock::now() - start, 30ms);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);

    // Nothing listening (port 1 on loopback): refused at once, polled.
    HeadSignal none{HttpUrl{HostPort{"127.0.0.1", 1}, "/"}, HeadSignal::Protocol::cometbft};
    EXPECT_FALSE(none.subscribed());
    EXPECT_FALSE(none.wait(10s, 1ms));
    EXPECT_EQ(none.subscriptions(), 0u);
    EXPECT_EQ(none.heads(), 0u);
}
