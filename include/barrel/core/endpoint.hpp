#pragma once
/// @file
/// Network endpoints as users write them, on command lines and in configuration files: HOST:PORT
/// and http://HOST:PORT[/PATH], with an IPv6 address in brackets ([::1]:8545), as URLs write it
/// (RFC 3986). One parser for every listener and every client, so that each accepts what the
/// others do: the port is a number from 0 to 65535 everywhere (0 asks a listener's system for a
/// free port; a client given 0 fails to connect, naming the endpoint).

#include <barrel/core/expected.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace barrel {

struct HostPort {
    std::string host;  ///< a name, an IPv4 address, or an IPv6 address without its brackets
    uint16_t port{0};

    /// HOST:PORT, an IPv6 address in brackets again.
    std::string text() const;
    friend bool operator==(const HostPort&, const HostPort&) = default;
};

/// HOST:PORT. What is wrong with it, as one line naming the text:
/// - "expected HOST:PORT, got '8545'" (no host, no port, brackets that do not close);
/// - "the port must be a number from 0 to 65535, got 'localhost:65536'";
/// - "an IPv6 address goes in brackets ([::1]:PORT), got '::1:8545'" (it could be read two ways).
Expected<HostPort, std::string> parse_host_port(std::string_view text);

struct HttpUrl {
    HostPort endpoint;
    std::string target{"/"};  ///< the path and query; "/" when the URL has none

    /// http://HOST:PORT followed by the target unless it is "/".
    std::string text() const;
};

/// http://HOST[:PORT][/PATH], port 80 when there is none. Errors as parse_host_port's, naming the
/// whole URL; one of the wrong shape is "expected http://HOST:PORT, got '…'".
Expected<HttpUrl, std::string> parse_http_url(std::string_view text);

}  // namespace barrel
