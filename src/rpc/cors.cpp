// Host and Origin checks of the JSON-RPC port (rpc/cors.hpp), go-ethereum's rules.

#include "rpc/cors.hpp"

#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <cctype>

namespace barrel::rpc {

namespace {

std::string lowered(std::string_view text) {
    std::string out{text};
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

bool contains(const std::vector<std::string>& list, std::string_view item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

/// The host of a Host header: without its port, an IPv6 address without its brackets.
std::string_view host_name(std::string_view host) {
    if (host.starts_with('[')) {
        const size_t close = host.find(']');
        return close == std::string_view::npos ? host : host.substr(1, close - 1);
    }
    // One colon: name:port. More: an IPv6 address without brackets (no port then).
    const size_t colon = host.find(':');
    if (colon != std::string_view::npos && host.find(':', colon + 1) == std::string_view::npos)
        return host.substr(0, colon);
    return host;
}

bool is_ip_address(std::string_view host) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(std::string{host}, ec);
    return !ec;
}

/// rs/cors's pattern: at most one '*', standing for any text (the origin at least as long as
/// the pattern's two sides together).
bool origin_matches(std::string_view pattern, std::string_view origin) {
    const size_t star = pattern.find('*');
    if (star == std::string_view::npos) return pattern == origin;
    const std::string_view prefix = pattern.substr(0, star);
    const std::string_view suffix = pattern.substr(star + 1);
    return origin.size() >= prefix.size() + suffix.size() && origin.starts_with(prefix) &&
           origin.ends_with(suffix);
}

bool origin_listed(const std::vector<std::string>& patterns, std::string_view origin) {
    const std::string key = lowered(origin);
    return std::any_of(patterns.begin(), patterns.end(),
                       [&](const std::string& p) { return origin_matches(p, key); });
}

/// The items of a comma-separated list, trimmed of spaces and in lower case; an empty item, or
/// one `fault` finds wrong, is an error.
Expected<std::vector<std::string>, std::string> parse_list(std::string_view text,
                                                           std::string_view what,
                                                           std::string (*fault)(std::string_view)) {
    std::vector<std::string> items;
    for (;;) {
        const size_t comma = text.find(',');
        std::string_view item = text.substr(0, comma);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        if (item.empty()) return unexpected("an empty " + std::string{what} + " in the list");
        if (auto wrong = fault(item); !wrong.empty()) return unexpected(std::move(wrong));
        items.push_back(lowered(item));
        if (comma == std::string_view::npos) return items;
        text.remove_prefix(comma + 1);
    }
}

/// What is wrong with a --http-cors-origins item, or "".
std::string origin_fault(std::string_view item) {
    const std::string quoted = "'" + std::string{item} + "'";
    if (item == "*") return {};
    const size_t scheme_end = item.find("://");
    if (scheme_end == std::string_view::npos || scheme_end == 0 || scheme_end + 3 == item.size())
        return "expected an origin (scheme://host[:port], as a browser sends it: "
               "http://localhost:5173) or *, got " +
               quoted;
    if (item.find('/', scheme_end + 3) != std::string_view::npos)
        return "an origin has no path (a browser sends scheme://host[:port]), got " + quoted;
    if (std::count(item.begin(), item.end(), '*') > 1)
        return "an origin may hold one * at most, got " + quoted;
    return {};
}

/// What is wrong with a --http-vhosts item, or "".
std::string vhost_fault(std::string_view item) {
    if (item == "*") return {};
    if (item.find_first_of("/:[]* ") != std::string_view::npos)
        return "expected a host name (no scheme, no port: localhost, node.example) or *, got '" +
               std::string{item} + "'";
    return {};
}

}  // namespace

bool host_allowed(const AccessPolicy& policy, std::string_view host) {
    // A request without Host (HTTP/1.0) is no browser's (go-ethereum serves it).
    if (host.empty()) return true;
    const std::string_view name = host_name(host);
    if (is_ip_address(name)) return true;
    return contains(policy.vhosts, "*") || contains(policy.vhosts, lowered(name));
}

std::optional<std::string> allow_origin(const AccessPolicy& policy, std::string_view origin) {
    if (origin.empty()) return std::nullopt;
    if (contains(policy.cors_origins, "*")) return "*";
    if (origin_listed(policy.cors_origins, origin)) return std::string{origin};
    return std::nullopt;
}

bool websocket_origin_allowed(const AccessPolicy& policy, std::optional<std::string_view> origin) {
    // Only a browser must send Origin; any other client can send what it likes, so checking it
    // would protect nothing (go-ethereum's reasoning too).
    if (!origin) return true;
    if (policy.cors_origins.empty())
        return origin_listed({"http://localhost", "http://localhost:*"}, *origin);
    return contains(policy.cors_origins, "*") || origin_listed(policy.cors_origins, *origin);
}

std::vector<Header> preflight_headers(const AccessPolicy& policy, std::string_view origin,
                                      std::string_view requested_method,
                                      std::string_view requested_headers) {
    const auto allowed = allow_origin(policy, origin);
    if (!allowed) return {};
    const std::string method = lowered(requested_method);
    if (method != "get" && method != "post") return {};
    std::vector<Header> headers{
        {"Access-Control-Allow-Origin", *allowed},
        {"Access-Control-Allow-Methods", "GET, POST"},
        {"Access-Control-Max-Age", std::to_string(kPreflightMaxAgeSeconds)},
    };
    if (!requested_headers.empty())
        headers.push_back({"Access-Control-Allow-Headers", std::string{requested_headers}});
    return headers;
}

Expected<std::vector<std::string>, std::string> parse_cors_origins(std::string_view text) {
    return parse_list(text, "origin", origin_fault);
}

Expected<std::vector<std::string>, std::string> parse_vhosts(std::string_view text) {
    return parse_list(text, "host", vhost_fault);
}

}  // namespace barrel::rpc
