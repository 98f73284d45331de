// The HTTP server through real sockets: keep-alive, each limit (body, header, connections,
// timeouts), the status of each request that is not a call, and that a connection breaking a
// limit or a slow request leaves the others served.

#include "http_client.hpp"
#include "rpc/http_server.hpp"
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

namespace barrel::rpc {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using test::Client;

/// Echoes the body; a body "wait" blocks until released (the seam for a slow request), "throw"
/// throws std::bad_alloc (the seam for a handler that fails), "big:N" answers N bytes.
class EchoHandler final : public HttpHandler {
public:
    HttpResponse post(std::string_view body) override {
        ++calls;
        if (body == "wait") {
            if (++waiting_count == 1) waiting.set_value();
            release_future.wait();
        }
        if (body == "throw") throw std::bad_alloc{};
        if (body.substr(0, 4) == "big:")
            return HttpResponse{200, "application/json",
                                std::string(std::stoul(std::string{body.substr(4)}), 'x')};
        return HttpResponse{200, "application/json", "echo:" + std::string{body}};
    }
    HttpResponse metrics() override {
        if (throw_on_metrics) throw std::runtime_error{"metrics broke"};
        return HttpResponse{200, "text/plain", "m 1\n"};
    }

    std::atomic<bool> throw_on_metrics{false};
    std::atomic<int> calls{0};
    std::atomic<int> waiting_count{0};
    std::promise<void> waiting;
    std::promise<void> release;
    std::shared_future<void> release_future{release.get_future().share()};
};

class RpcHttp : public ::testing::Test {
protected:
    void start(HttpOptions o = {}) {
        o.port = 0;
        server = std::make_unique<HttpServer>(o, handler);
        ASSERT_TRUE(server->start().has_value());
    }
    uint16_t port() const { return server->port(); }

    EchoHandler handler;
    std::unique_ptr<HttpServer> server;
};

TEST_F(RpcHttp, serves_posts_on_a_keep_alive_connection) {
    start();
    Client c{port()};
    for (int i = 0; i < 3; ++i) {
        const auto res = c.post("body" + std::to_string(i));
        EXPECT_EQ(res.result_int(), 200u);
        EXPECT_EQ(res.body(), "echo:body" + std::to_string(i));
        EXPECT_EQ(res[http::field::content_type], "application/json");
        EXPECT_TRUE(res.keep_alive());
    }
    EXPECT_EQ(handler.calls.load(), 3);
}

TEST_F(RpcHttp, answers_what_is_not_a_call_with_its_status) {
    start();
    Client c{port()};
    c.send(http::verb::get, "/metrics", "", "");
    auto res = c.receive();
    EXPECT_EQ(res.result_int(), 200u);
    EXPECT_EQ(res.body(), "m 1\n");
    c.send(http::verb::get, "/", "", "");
    EXPECT_EQ(c.receive().result_int(), 200u);  // a health check
    c.send(http::verb::put, "/", "{}");
    res = c.receive();
    EXPECT_EQ(res.result_int(), 405u);
    EXPECT_EQ(res.body(), "method not allowed\n");
    c.send(http::verb::post, "/other", "{}");
    EXPECT_EQ(c.receive().result_int(), 404u);
    c.send(http::verb::post, "/", "{}", "text/plain");
    res = c.receive();
    EXPECT_EQ(res.result_int(), 415u);
    EXPECT_EQ(res.body(), "invalid content type, only application/json is supported\n");
    c.send(http::verb::post, "/", "{}", "Application/JSON; charset=utf-8");
    EXPECT_EQ(c.receive().result_int(), 200u);
    EXPECT_EQ(handler.calls.load(), 1);
}

/// A handler with a status page.
class PageHandler final : public HttpHandler {
public:
    HttpResponse post(std::string_view) override { return {}; }
    HttpResponse metrics() override { return {}; }
    std::optional<HttpResponse> status_page() override {
        return HttpResponse{200, "text/html; charset=utf-8", "<p>status</p>"};
    }
};

TEST(rpc_http, get_slash_is_the_status_page_unless_it_is_off) {
    PageHandler handler;
    for (const bool on : {true, false}) {
        HttpServer server{{.port = 0, .status_page = on}, handler};
        ASSERT_TRUE(server.start().has_value());
        Client c{server.port()};
        c.send(http::verb::get, "/", "", "");
        const auto res = c.receive();
        EXPECT_EQ(res.result_int(), 200u);
        EXPECT_EQ(res.body(), on ? "<p>status</p>" : "");
        EXPECT_EQ(res[http::field::content_type],
                  on ? "text/html; charset=utf-8" : "text/plain; charset=utf-8");
    }
}

TEST_F(RpcHttp, a_body_over_the_limit_is_413_and_the_server_goes_on) {
    start({.max_body_bytes = 100});
    Client big{port()};
    big.send(http::verb::post, "/", std::string(101, 'x'));
    const auto res = big.receive();
    EXPECT_EQ(res.result_int(), 413u);
    EXPECT_EQ(res.body(), "request body too large (limit 100 bytes)\n");
    EXPECT_TRUE(big.closed_by_server());
    Client ok{port()};
    EXPECT_EQ(ok.post(std::string(100, 'y')).result_int(), 200u);
    EXPECT_EQ(handler.calls.load(), 1);
}

TEST_F(RpcHttp, a_header_over_the_limit_is_431) {
    start({.max_header_bytes = 512});
    Client c{port()};
    c.send_raw("POST / HTTP/1.1\r\nHost: localhost\r\nX-Big: " + std::string(1000, 'a') +
               "\r\n\r\n");
    EXPECT_EQ(c.receive().result_int(), 431u);
    EXPECT_TRUE(c.closed_by_server());
}

TEST_F(RpcHttp, malformed_http_is_400) {
    start();
    Client c{port()};
    c.send_raw("NOT HTTP AT ALL\r\n\r\n");
    EXPECT_EQ(c.receive().result_int(), 400u);
    EXPECT_TRUE(c.closed_by_server());
}

TEST_F(RpcHttp, a_client_that_sends_half_a_request_is_cut_off_at_the_read_timeout) {
    start({.read_timeout = 300ms});
    Client half{port()};
    half.send_raw(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Content-Length: 100\r\n\r\n{\"jsonrpc\"");
    // Served meanwhile.
    Client other{port()};
    EXPECT_EQ(other.post("x").body(), "echo:x");
    // The read blocks until the server gives up on the half request: not at once, and long
    // before the default 30 s (a generous bound: the suite runs on busy machines and under
    // sanitizers).
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(half.closed_by_server());
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 100ms);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
    EXPECT_EQ(handler.calls.load(), 1);
}

TEST_F(RpcHttp, an_idle_keep_alive_connection_is_closed_at_the_idle_timeout) {
    start({.idle_timeout = 200ms});
    Client c{port()};
    EXPECT_EQ(c.post("a").result_int(), 200u);
    // Long before the default 120 s (generously: busy machines, sanitizers).
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(c.closed_by_server());
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
}

TEST_F(RpcHttp, connections_over_the_limit_get_503_when_every_one_is_executing) {
    start({.max_connections = 2, .workers = 2});
    Client a{port()}, b{port()};
    a.send(http::verb::post, "/", "wait");
    b.send(http::verb::post, "/", "wait");
    while (handler.waiting_count.load() < 2) std::this_thread::yield();
    Client c{port()};
    c.send(http::verb::post, "/", "c");
    const auto res = c.receive();
    EXPECT_EQ(res.result_int(), 503u);
    EXPECT_EQ(res.body(), "too many connections\n");
    EXPECT_TRUE(c.closed_by_server());
    // Those already open are still served.
    handler.release.set_value();
    EXPECT_EQ(a.receive().body(), "echo:wait");
    EXPECT_EQ(b.receive().body(), "echo:wait");
    EXPECT_EQ(a.post("a2").body(), "echo:a2");
}

TEST_F(RpcHttp, at_the_connection_limit_the_longest_idle_connection_makes_room) {
    start({.max_connections = 2});
    Client a{port()}, b{port()};
    EXPECT_EQ(a.post("a").result_int(), 200u);
    EXPECT_EQ(b.post("b").result_int(), 200u);
    // Both idle now; a the longer. A third client is served, and a is closed for it.
    Client c{port()};
    EXPECT_EQ(c.post("c").body(), "echo:c");
    a.set_receive_timeout(5s);
    EXPECT_TRUE(a.closed_by_server());
    EXPECT_EQ(b.post("b2").body(), "echo:b2");
}

TEST_F(RpcHttp, at_the_connection_limit_a_slowloris_makes_room) {
    start({.max_connections = 2, .read_timeout = 60s, .header_timeout = 60s});
    Client a{port()}, slow{port()};
    slow.send_raw("POST / HTTP/1.1\r\nHost: localhost\r\n");  // and never the rest
    // An idle connection would go first: a is executing.
    a.send(http::verb::post, "/", "wait");
    handler.waiting.get_future().wait();
    Client c{port()};
    c.set_receive_timeout(5s);
    slow.set_receive_timeout(5s);
    EXPECT_TRUE(slow.closed_by_server());
    handler.release.set_value();
    EXPECT_EQ(c.post("c").body(), "echo:c");
    EXPECT_EQ(a.receive().body(), "echo:wait");
}

TEST_F(RpcHttp, a_handler_that_throws_is_500_and_the_server_goes_on) {
    start();
    Client c{port()};
    c.set_receive_timeout(5s);
    const auto res = c.post("throw");
    EXPECT_EQ(res.result_int(), 500u);
    EXPECT_EQ(res.body(), "internal error\n");
    EXPECT_EQ(c.post("after").body(), "echo:after");
    Client d{port()};
    EXPECT_EQ(d.post("other").body(), "echo:other");
}

TEST_F(RpcHttp, a_metrics_handler_that_throws_is_500_and_the_server_goes_on) {
    handler.throw_on_metrics = true;
    start();
    Client c{port()};
    c.set_receive_timeout(5s);
    c.send(http::verb::get, "/metrics", "", "");
    const auto res = c.receive();
    EXPECT_EQ(res.result_int(), 500u);
    EXPECT_EQ(res.body(), "internal error\n");
    EXPECT_EQ(c.post("after").body(), "echo:after");
}

TEST_F(RpcHttp, a_header_must_arrive_within_the_header_timeout) {
    start({.read_timeout = 30s, .header_timeout = 200ms});
    // A new connection that sends nothing, and one that sends half a header.
    Client silent{port()}, half{port()};
    half.send_raw("POST / HTTP/1.1\r\nHost: localhost\r\n");
    silent.set_receive_timeout(5s);
    half.set_receive_timeout(5s);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(silent.closed_by_server());
    EXPECT_TRUE(half.closed_by_server());
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(took, 100ms);
    EXPECT_LT(took, 5s);
    // On a keep-alive connection the header's time runs from the request's first byte.
    Client kept{port()};
    EXPECT_EQ(kept.post("a").body(), "echo:a");
    std::this_thread::sleep_for(400ms);  // idle, under the idle timeout: still open
    EXPECT_EQ(kept.post("b").body(), "echo:b");
}

TEST_F(RpcHttp, a_dribbled_body_is_cut_off_at_the_read_timeout) {
    start({.read_timeout = 300ms, .header_timeout = 5s});
    Client c{port()};
    c.set_receive_timeout(5s);
    c.send_raw(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Content-Length: 100\r\n\r\n");
    const auto t0 = std::chrono::steady_clock::now();
    // A byte every 50 ms keeps any per-read timeout from firing; only the whole request's does.
    try {
        while (std::chrono::steady_clock::now() - t0 < 5s) {
            c.send_raw("x");
            std::this_thread::sleep_for(50ms);
        }
    } catch (const boost::system::system_error&) {
        // Closed by the server: the write fails.
    }
    EXPECT_TRUE(c.closed_by_server());
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST_F(RpcHttp, expect_100_continue_is_answered_before_the_body) {
    start();
    Client c{port()};
    c.set_receive_timeout(5s);
    c.send_raw(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Expect: 100-continue\r\nContent-Length: 4\r\n\r\n");
    EXPECT_EQ(c.receive_raw(), "HTTP/1.1 100 Continue\r\n\r\n");
    c.send_raw("body");
    EXPECT_EQ(c.receive().body(), "echo:body");
}

TEST_F(RpcHttp, a_transfer_coding_other_than_chunked_is_501) {
    start();
    Client c{port()};
    c.set_receive_timeout(5s);
    c.send_raw(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: gzip, chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n");
    const auto res = c.receive();
    EXPECT_EQ(res.result_int(), 501u);
    EXPECT_EQ(res.body(), "unsupported transfer encoding\n");
    EXPECT_TRUE(c.closed_by_server());
    EXPECT_EQ(handler.calls.load(), 0);
    // Plain chunked is read.
    Client d{port()};
    d.send_raw(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n");
    EXPECT_EQ(d.receive().body(), "echo:body");
}

TEST_F(RpcHttp, large_responses_past_the_unsent_budget_are_503) {
    start({.max_unsent_bytes = 100'000});
    Client c{port()};
    const auto big = c.post("big:200000");
    EXPECT_EQ(big.result_int(), 503u);
    EXPECT_EQ(big.body(), "server busy: too many responses unsent, retry later\n");
    EXPECT_EQ(c.post("big:90000").body().size(), 90'000u);
    EXPECT_EQ(c.post("small").body(), "echo:small");
}

TEST_F(RpcHttp, a_slow_request_does_not_hold_up_other_connections) {
    start({.threads = 2, .workers = 2});
    Client slow{port()};
    slow.send(http::verb::post, "/", "wait");
    handler.waiting.get_future().wait();  // the slow request is inside the handler now
    Client fast{port()};
    EXPECT_EQ(fast.post("quick").body(), "echo:quick");
    handler.release.set_value();
    EXPECT_EQ(slow.receive().body(), "echo:wait");
}

TEST_F(RpcHttp, many_connections_at_once) {
    start({.threads = 2, .workers = 2});
    constexpr int kClients = 32, kRequests = 5;
    std::vector<std::thread> threads;
    std::atomic<int> ok{0};
    for (int i = 0; i < kClients; ++i)
        threads.emplace_back([&, i] {
            Client c{port()};
            for (int r = 0; r < kRequests; ++r) {
                const std::string body = std::to_string(i) + "/" + std::to_string(r);
                if (c.post(body).body() == "echo:" + body) ++ok;
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(ok.load(), kClients * kRequests);
}

TEST_F(RpcHttp, a_port_in_use_is_a_clear_error) {
    start();
    HttpOptions o;
    o.port = port();
    HttpServer second{o, handler};
    const auto r = second.start();
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(),
              "cannot listen on 127.0.0.1:" + std::to_string(port()) + ": Address already in use");
}

TEST_F(RpcHttp, stop_closes_open_connections) {
    start();
    Client c{port()};
    EXPECT_EQ(c.post("a").result_int(), 200u);
    server->stop();
    EXPECT_TRUE(c.closed_by_server());
}

}  // namespace
}  // namespace barrel::rpc
