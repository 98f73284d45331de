// HOST:PORT and http:// URLs (core/endpoint.hpp).

#include <barrel/core/endpoint.hpp>

#include <charconv>

namespace barrel {

namespace {

enum class Fault : uint8_t { shape, port, unbracketed_v6 };

/// HOST:PORT into its parts, or what is wrong with it.
Expected<HostPort, Fault> split(std::string_view text) {
    std::string_view host;
    std::string_view port;
    if (text.starts_with('[')) {
        const size_t close = text.find(']');
        if (close == std::string_view::npos || close == 1 || close + 1 >= text.size() ||
            text[close + 1] != ':')
            return unexpected(Fault::shape);
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        const size_t colon = text.rfind(':');
        if (colon == std::string_view::npos || colon == 0) return unexpected(Fault::shape);
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (host.find(':') != std::string_view::npos) return unexpected(Fault::unbracketed_v6);
        if (host.find_first_of("[]") != std::string_view::npos) return unexpected(Fault::shape);
    }
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || value > 65535)
        return unexpected(Fault::port);
    return HostPort{std::string{host}, static_cast<uint16_t>(value)};
}

std::string describe(Fault fault, std::string_view what, std::string_view expected) {
    switch (fault) {
        case Fault::port:
            return "the port must be a number from 0 to 65535, got '" + std::string{what} + "'";
        case Fault::unbracketed_v6:
            return "an IPv6 address goes in brackets ([::1]:PORT), got '" + std::string{what} + "'";
        case Fault::shape: break;
    }
    return "expected " + std::string{expected} + ", got '" + std::string{what} + "'";
}

}  // namespace

std::string HostPort::text() const {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Expected<HostPort, std::string> parse_host_port(std::string_view text) {
    auto parsed = split(text);
    if (!parsed) return unexpected(describe(parsed.error(), text, "HOST:PORT"));
    return std::move(*parsed);
}

std::string HttpUrl::text() const {
    return "http://" + endpoint.text() + (target == "/" ? "" : target);
}

Expected<HttpUrl, std::string> parse_http_url(std::string_view text) {
    constexpr std::string_view kScheme = "http://";
    constexpr std::string_view kShape = "http://HOST:PORT";
    if (!text.starts_with(kScheme)) return unexpected(describe(Fault::shape, text, kShape));
    std::string_view authority = text.substr(kScheme.size());
    HttpUrl url;
    if (const size_t slash = authority.find('/'); slash != std::string_view::npos) {
        url.target = std::string{authority.substr(slash)};
        authority = authority.substr(0, slash);
    }
    // No port: http's own, 80 (RFC 3986). A colon inside an IPv6 literal's brackets is no port.
    const size_t colon = authority.rfind(':');
    const size_t bracket = authority.rfind(']');
    const bool has_port =
        colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket);
    auto parsed = split(has_port ? std::string{authority} : std::string{authority} + ":80");
    if (!parsed) return unexpected(describe(parsed.error(), text, kShape));
    url.endpoint = std::move(*parsed);
    return url;
}

}  // namespace barrel
