#pragma once
// Who may call the node from a browser, as go-ethereum decides it (node/rpcstack.go): the Host
// a request names (`--http-vhosts`, against DNS rebinding: a page of evil.example whose name
// resolves to 127.0.0.1 reaches the node with Host evil.example) and the Origin a page sends
// (`--http-cors-origins`: CORS for HTTP, the same list for a WebSocket upgrade's Origin check).
// Pure functions of the request's headers, so that the server applies them and tests table them.

#include <barrel/core/expected.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::rpc {

/// The browser-facing policy of the JSON-RPC port (rpc::HttpOptions::access).
struct AccessPolicy {
    /// Origins allowed to call from a page: "*" any; "http://localhost:5173" exactly that one
    /// (any case); one "*" within an origin ("http://localhost:*") stands for any text there, as
    /// go-ethereum's CORS library (rs/cors) reads it. Empty: no page of another origin may call
    /// (go-ethereum's default).
    std::vector<std::string> cors_origins{};
    /// Host names a request may name in its Host header ("*": any). A Host that is an IP address
    /// is always served, as go-ethereum serves it: rebinding needs a name.
    std::vector<std::string> vhosts{"localhost"};
};

/// The origins of a dapp served on this machine (a dev server: http://localhost:5173, :3000, …),
/// which a local network's nodes allow (`testnet start`, barrel-load's node): a page from any
/// other site still gets no answer.
inline constexpr std::string_view kLocalDappOrigins =
    "http://localhost:*,http://127.0.0.1:*,http://[::1]:*";

/// How long a browser may keep a preflight's answer (go-ethereum's: 600 s).
inline constexpr int kPreflightMaxAgeSeconds = 600;

/// Whether a request naming `host` (the Host header: "name", "name:port", "1.2.3.4:port",
/// "[::1]:port"; empty for HTTP/1.0) is served.
bool host_allowed(const AccessPolicy& policy, std::string_view host);

/// The Access-Control-Allow-Origin value for a request from `origin` (none: no CORS headers; an
/// absent Origin header is not a browser's cross-origin request).
std::optional<std::string> allow_origin(const AccessPolicy& policy, std::string_view origin);

/// Whether a WebSocket upgrade from `origin` (nullopt: no Origin header, not a browser) is
/// accepted: the CORS origins, or with none configured the pages of http://localhost (any
/// port), as go-ethereum's default --ws.origins.
bool websocket_origin_allowed(const AccessPolicy& policy, std::optional<std::string_view> origin);

/// A header of a response.
struct Header {
    std::string name;
    std::string value;
};

/// The CORS headers of the answer to a preflight (OPTIONS with Access-Control-Request-Method):
/// none unless the origin is allowed and the method is GET or POST; `requested_headers` (the
/// Access-Control-Request-Headers) are allowed as asked, as go-ethereum allows any.
std::vector<Header> preflight_headers(const AccessPolicy& policy, std::string_view origin,
                                      std::string_view requested_method,
                                      std::string_view requested_headers);

/// `--http-cors-origins LIST`: the comma-separated origins, or what is wrong with the list.
Expected<std::vector<std::string>, std::string> parse_cors_origins(std::string_view text);

/// `--http-vhosts LIST`: the comma-separated host names, or what is wrong with the list.
Expected<std::vector<std::string>, std::string> parse_vhosts(std::string_view text);

}  // namespace barrel::rpc
