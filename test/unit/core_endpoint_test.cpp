// The one HOST:PORT and http:// URL parser every listener and client uses (core/endpoint.hpp).

#include <barrel/core/endpoint.hpp>

#include <gtest/gtest.h>

#include <string>

using namespace barrel;

TEST(core_endpoint, host_port_forms) {
    EXPECT_EQ(parse_host_port("127.0.0.1:8545").value(), (HostPort{"127.0.0.1", 8545}));
    EXPECT_EQ(parse_host_port("localhost:0").value(), (HostPort{"localhost", 0}));
    EXPECT_EQ(parse_host_port("[::1]:8545").value(), (HostPort{"::1", 8545}));
    EXPECT_EQ(parse_host_port("[fe80::1%lo]:65535").value(), (HostPort{"fe80::1%lo", 65535}));
    EXPECT_EQ(parse_host_port("0.0.0.0:1").value(), (HostPort{"0.0.0.0", 1}));
}

TEST(core_endpoint, host_port_text_brackets_ipv6_again) {
    EXPECT_EQ((HostPort{"::1", 8545}).text(), "[::1]:8545");
    EXPECT_EQ((HostPort{"127.0.0.1", 0}).text(), "127.0.0.1:0");
    EXPECT_EQ((HostPort{"localhost", 26657}).text(), "localhost:26657");
    for (const char* text : {"[::1]:8545", "127.0.0.1:1", "node-3.local:26657"})
        EXPECT_EQ(parse_host_port(text)->text(), text);
}

TEST(core_endpoint, host_port_errors_name_the_text) {
    const auto error = [](const char* text) { return parse_host_port(text).error(); };
    EXPECT_EQ(error("8545"), "expected HOST:PORT, got '8545'");
    EXPECT_EQ(error(":8545"), "expected HOST:PORT, got ':8545'");
    EXPECT_EQ(error(""), "expected HOST:PORT, got ''");
    EXPECT_EQ(error("[::1]"), "expected HOST:PORT, got '[::1]'");
    EXPECT_EQ(error("[::1"), "expected HOST:PORT, got '[::1'");
    EXPECT_EQ(error("[]:1"), "expected HOST:PORT, got '[]:1'");
    EXPECT_EQ(error("[::1]8545"), "expected HOST:PORT, got '[::1]8545'");
    EXPECT_EQ(error("a]:1"), "expected HOST:PORT, got 'a]:1'");
    EXPECT_EQ(error("::1:8545"), "an IPv6 address goes in brackets ([::1]:PORT), got '::1:8545'");
    for (const char* text : {"h:65536", "h:x", "h:", "h:-1", "h:+1", "h:1 ", "[::1]:99999"})
        EXPECT_EQ(error(text),
                  "the port must be a number from 0 to 65535, got '" + std::string{text} + "'");
}

TEST(core_endpoint, http_urls) {
    const auto a = parse_http_url("http://127.0.0.1:8545").value();
    EXPECT_EQ(a.endpoint, (HostPort{"127.0.0.1", 8545}));
    EXPECT_EQ(a.target, "/");
    EXPECT_EQ(a.text(), "http://127.0.0.1:8545");
    const auto b = parse_http_url("http://localhost/rpc?x=1").value();
    EXPECT_EQ(b.endpoint, (HostPort{"localhost", 80}));
    EXPECT_EQ(b.target, "/rpc?x=1");
    EXPECT_EQ(b.text(), "http://localhost:80/rpc?x=1");
    const auto c = parse_http_url("http://[::1]:9000/").value();
    EXPECT_EQ(c.endpoint, (HostPort{"::1", 9000}));
    EXPECT_EQ(c.text(), "http://[::1]:9000");
    EXPECT_EQ(parse_http_url("http://[::1]/a")->endpoint, (HostPort{"::1", 80}));

    const auto error = [](const char* text) { return parse_http_url(text).error(); };
    EXPECT_EQ(error("https://x:1"), "expected http://HOST:PORT, got 'https://x:1'");
    EXPECT_EQ(error("127.0.0.1:8545"), "expected http://HOST:PORT, got '127.0.0.1:8545'");
    EXPECT_EQ(error("http://:1"), "expected http://HOST:PORT, got 'http://:1'");
    EXPECT_EQ(error("http://"), "expected http://HOST:PORT, got 'http://'");
    EXPECT_EQ(error("http://x:99999"),
              "the port must be a number from 0 to 65535, got 'http://x:99999'");
    EXPECT_EQ(error("http://x:12a/"),
              "the port must be a number from 0 to 65535, got 'http://x:12a/'");
    EXPECT_EQ(error("http://::1:80/"),
              "an IPv6 address goes in brackets ([::1]:PORT), got 'http://::1:80/'");
}
