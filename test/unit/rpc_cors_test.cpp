// Who may call the node from a browser (rpc/cors.hpp): the Host check against DNS rebinding
// (--http-vhosts), CORS for HTTP (--http-cors-origins: preflights and simple requests) and the
// WebSocket upgrade's Origin check, as go-ethereum answers each; first as tables of the rules,
// then through the server's sockets, with the headers a browser sends.

#include "http_client.hpp"
#include "rpc/cors.hpp"
#include "rpc/http_server.hpp"
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

namespace barrel::rpc {
namespace {

namespace http = boost::beast::http;
using test::Client;

TEST(rpc_cors, a_host_is_served_if_listed_or_an_ip_address) {
    const AccessPolicy policy;  // vhosts: localhost, as go-ethereum's default
    struct Case {
        std::string host;
        bool served;
    };
    for (const Case& c : std::vector<Case>{
             {"localhost", true},
             {"localhost:8545", true},
             {"LocalHost:8545", true},
             {"127.0.0.1:8545", true},
             {"127.0.0.1", true},
             {"[::1]:8545", true},
             {"10.1.2.3:80", true},
             {"", true},  // HTTP/1.0: no browser's
             {"evil.example", false},
             {"evil.example:8545", false},
             {"localhost.evil.example:8545", false},
             {"127.0.0.1.nip.io:8545", false},
         })
        EXPECT_EQ(host_allowed(policy, c.host), c.served) << c.host;
    EXPECT_TRUE(host_allowed({.vhosts = {"node.example"}}, "Node.Example:8545"));
    EXPECT_FALSE(host_allowed({.vhosts = {"node.example"}}, "localhost:8545"));
    EXPECT_TRUE(host_allowed({.vhosts = {"*"}}, "anything.example"));
}

TEST(rpc_cors, an_origin_is_allowed_if_listed_exactly_or_by_its_one_star) {
    const AccessPolicy none;
    EXPECT_EQ(allow_origin(none, "http://localhost:5173"), std::nullopt);
    const AccessPolicy one{.cors_origins = {"http://localhost:5173"}};
    EXPECT_EQ(allow_origin(one, "http://localhost:5173"), "http://localhost:5173");
    EXPECT_EQ(allow_origin(one, "HTTP://LOCALHOST:5173"), "HTTP://LOCALHOST:5173");
    EXPECT_EQ(allow_origin(one, "http://localhost:5174"), std::nullopt);
    EXPECT_EQ(allow_origin(one, "http://localhost"), std::nullopt);
    EXPECT_EQ(allow_origin(one, ""), std::nullopt);  // not a browser's cross-origin call
    const AccessPolicy ports{.cors_origins = {"http://localhost:*"}};
    EXPECT_EQ(allow_origin(ports, "http://localhost:3000"), "http://localhost:3000");
    EXPECT_EQ(allow_origin(ports, "http://localhost.evil.example"), std::nullopt);
    EXPECT_EQ(allow_origin(ports, "https://localhost:3000"), std::nullopt);
    const AccessPolicy any{.cors_origins = {"*"}};
    EXPECT_EQ(allow_origin(any, "https://dapp.example"), "*");
}

TEST(rpc_cors, a_websocket_origin_is_checked_only_when_a_browser_sends_one) {
    const AccessPolicy none;
    EXPECT_TRUE(websocket_origin_allowed(none, std::nullopt));
    // No origins configured: pages of http://localhost, as go-ethereum's default --ws.origins.
    EXPECT_TRUE(websocket_origin_allowed(none, "http://localhost"));
    EXPECT_TRUE(websocket_origin_allowed(none, "http://localhost:5173"));
    EXPECT_FALSE(websocket_origin_allowed(none, "https://evil.example"));
    EXPECT_FALSE(websocket_origin_allowed(none, "http://localhost.evil.example"));
    const AccessPolicy one{.cors_origins = {"https://dapp.example"}};
    EXPECT_TRUE(websocket_origin_allowed(one, "https://dapp.example"));
    EXPECT_FALSE(websocket_origin_allowed(one, "http://localhost:5173"));
    EXPECT_TRUE(websocket_origin_allowed({.cors_origins = {"*"}}, "https://any.example"));
}

TEST(rpc_cors, lists_parse_into_lower_case_items_and_bad_items_are_named) {
    EXPECT_EQ(parse_cors_origins("http://LocalHost:5173, https://dapp.example").value(),
              (std::vector<std::string>{"http://localhost:5173", "https://dapp.example"}));
    EXPECT_EQ(parse_cors_origins("*").value(), std::vector<std::string>{"*"});
    EXPECT_EQ(parse_vhosts("localhost,Node.Example").value(),
              (std::vector<std::string>{"localhost", "node.example"}));
    EXPECT_EQ(parse_cors_origins("http://a.example/").error(),
              "an origin has no path (a browser sends scheme://host[:port]), got "
              "'http://a.example/'");
    EXPECT_EQ(parse_cors_origins("://a.example").error(),
              "expected an origin (scheme://host[:port], as a browser sends it: "
              "http://localhost:5173) or *, got '://a.example'");
    EXPECT_EQ(parse_cors_origins("http://").error(),
              "expected an origin (scheme://host[:port], as a browser sends it: "
              "http://localhost:5173) or *, got 'http://'");
    EXPECT_EQ(parse_vhosts("localhost,").error(), "an empty host in the list");
    EXPECT_EQ(parse_vhosts("[::1]").error(),
              "expected a host name (no scheme, no port: localhost, node.example) or *, got "
              "'[::1]'");
}

/// Answers every call "ok"; no WebSocket handler (an upgrade that passes the Origin check is
/// then 404, one that does not is 403).
class OkHandler final : public HttpHandler {
public:
    HttpResponse post(std::string_view) override {
        ++calls;
        return {200, "application/json", "ok"};
    }
    HttpResponse metrics() override { return {200, "text/plain", ""}; }
    std::atomic<int> calls{0};
};

class RpcCors : public ::testing::Test {
protected:
    void start(AccessPolicy access) {
        server = std::make_unique<HttpServer>(HttpOptions{.port = 0, .access = std::move(access)},
                                              handler);
        ASSERT_TRUE(server->start().has_value());
    }
    /// The response to `verb /` with these headers (and a JSON body for a POST).
    http::response<http::string_body> request(
        http::verb verb, std::vector<std::pair<std::string, std::string>> headers) {
        Client c{server->port()};
        std::string raw = std::string{http::to_string(verb)} + " / HTTP/1.1\r\n";
        for (const auto& [name, value] : headers) raw += name + ": " + value + "\r\n";
        if (verb == http::verb::post)
            raw += "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        else
            raw += "\r\n";
        c.send_raw(raw);
        return c.receive();
    }

    OkHandler handler;
    std::unique_ptr<HttpServer> server;
};

const std::string kDapp = "http://localhost:5173";

TEST_F(RpcCors, a_preflight_from_an_allowed_origin_gets_methods_headers_and_max_age) {
    start({.cors_origins = {kDapp}});
    const auto res =
        request(http::verb::options, {{"Host", "127.0.0.1:8545"},
                                      {"Origin", kDapp},
                                      {"Access-Control-Request-Method", "POST"},
                                      {"Access-Control-Request-Headers", "content-type"}});
    EXPECT_EQ(res.result_int(), 204u);
    EXPECT_EQ(res["Access-Control-Allow-Origin"], kDapp);
    EXPECT_EQ(res["Access-Control-Allow-Methods"], "GET, POST");
    EXPECT_EQ(res["Access-Control-Allow-Headers"], "content-type");
    EXPECT_EQ(res["Access-Control-Max-Age"], "600");
    EXPECT_EQ(handler.calls.load(), 0);
}

TEST_F(RpcCors, a_refused_origin_or_method_gets_no_cors_headers) {
    start({.cors_origins = {kDapp}});
    for (const auto& [origin, method] : std::vector<std::pair<std::string, std::string>>{
             {"https://evil.example", "POST"}, {kDapp, "DELETE"}}) {
        const auto res = request(http::verb::options, {{"Host", "localhost:8545"},
                                                       {"Origin", origin},
                                                       {"Access-Control-Request-Method", method}});
        EXPECT_EQ(res.result_int(), 204u);
        EXPECT_EQ(res.find("Access-Control-Allow-Origin"), res.end()) << origin << " " << method;
        EXPECT_EQ(res.find("Access-Control-Allow-Methods"), res.end());
    }
    // No origins configured (the default): no page of another origin is answered.
    start({});
    const auto res = request(
        http::verb::options,
        {{"Host", "localhost:8545"}, {"Origin", kDapp}, {"Access-Control-Request-Method", "POST"}});
    EXPECT_EQ(res.find("Access-Control-Allow-Origin"), res.end());
}

TEST_F(RpcCors, a_simple_request_carries_the_allowed_origin_and_a_refused_one_none) {
    start({.cors_origins = {kDapp}});
    auto res = request(http::verb::post, {{"Host", "localhost:8545"}, {"Origin", kDapp}});
    EXPECT_EQ(res.result_int(), 200u);
    EXPECT_EQ(res.body(), "ok");
    EXPECT_EQ(res["Access-Control-Allow-Origin"], kDapp);
    EXPECT_EQ(res["Vary"], "Origin");
    res =
        request(http::verb::post, {{"Host", "localhost:8545"}, {"Origin", "https://evil.example"}});
    EXPECT_EQ(res.result_int(), 200u);  // answered; the browser withholds it from the page
    EXPECT_EQ(res.find("Access-Control-Allow-Origin"), res.end());
    res = request(http::verb::post, {{"Host", "localhost:8545"}});  // no browser
    EXPECT_EQ(res.find("Access-Control-Allow-Origin"), res.end());
    start({.cors_origins = {"*"}});
    res = request(http::verb::get, {{"Host", "localhost"}, {"Origin", "https://any.example"}});
    EXPECT_EQ(res["Access-Control-Allow-Origin"], "*");
}

TEST_F(RpcCors, a_host_not_listed_is_403_before_anything_else) {
    start({.cors_origins = {"*"}});
    for (const auto verb : {http::verb::post, http::verb::get, http::verb::options}) {
        const auto res = request(verb, {{"Host", "evil.example:8545"},
                                        {"Origin", "http://evil.example:8545"},
                                        {"Access-Control-Request-Method", "POST"}});
        EXPECT_EQ(res.result_int(), 403u) << verb;
        EXPECT_EQ(res.body(), "invalid host specified\n");
        EXPECT_EQ(res.find("Access-Control-Allow-Origin"), res.end());
    }
    EXPECT_EQ(request(http::verb::post, {{"Host", "[::1]:8545"}}).result_int(), 200u);
    start({.vhosts = {"node.example"}});
    EXPECT_EQ(request(http::verb::post, {{"Host", "node.example:8545"}}).result_int(), 200u);
    EXPECT_EQ(request(http::verb::post, {{"Host", "localhost:8545"}}).result_int(), 403u);
}

TEST_F(RpcCors, a_websocket_upgrade_from_an_origin_not_allowed_is_403) {
    start({.cors_origins = {kDapp}});
    const auto upgrade = [&](std::optional<std::string> origin) {
        std::vector<std::pair<std::string, std::string>> headers{
            {"Host", "localhost:8545"},
            {"Connection", "Upgrade"},
            {"Upgrade", "websocket"},
            {"Sec-WebSocket-Version", "13"},
            {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}};
        if (origin) headers.emplace_back("Origin", *origin);
        return request(http::verb::get, headers);
    };
    auto res = upgrade("https://evil.example");
    EXPECT_EQ(res.result_int(), 403u);
    EXPECT_EQ(res.body(), "origin not allowed\n");
    // Past the check, this handler has no WebSocket side: 404.
    EXPECT_EQ(upgrade(kDapp).result_int(), 404u);
    EXPECT_EQ(upgrade(std::nullopt).result_int(), 404u);
}

}  // namespace
}  // namespace barrel::rpc
