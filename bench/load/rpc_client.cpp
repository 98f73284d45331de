#include "rpc_client.hpp"

#include <barrel/core/uint256.hpp>

#include "common/args.hpp"
#include <boost/asio/connect.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/http/span_body.hpp>

namespace barrel::load {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

using bench::fail;

HttpConnection::HttpConnection(const HttpUrl& url) : m_url{url}, m_socket{m_ioc} {
    boost::system::error_code ec;
    tcp::resolver resolver{m_ioc};
    const auto endpoints =
        resolver.resolve(url.endpoint.host, std::to_string(url.endpoint.port), ec);
    if (!ec) asio::connect(m_socket, endpoints, ec);
    if (ec) fail("cannot connect to " + url.text() + ": " + ec.message());
    // Requests are small and answered at once: Nagle's delay would hold back a request's
    // last segment until the previous response's ACK.
    m_socket.set_option(tcp::no_delay{true}, ec);
}

std::string HttpConnection::request(bool post, std::string_view target, std::string_view body) {
    // The body is sent from where it lies (a batch of sends is tens of KB, prepared before the
    // clock): a span, not a copy into the request.
    http::request<http::span_body<const char>> req{post ? http::verb::post : http::verb::get,
                                                   std::string{target}, 11};
    req.set(http::field::host, m_url.endpoint.text());
    req.keep_alive(true);
    if (post) {
        req.set(http::field::content_type, "application/json");
        req.body() = {body.data(), body.size()};
    }
    req.prepare_payload();
    boost::system::error_code ec;
    http::write(m_socket, req, ec);
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    if (!ec) http::read(m_socket, m_buffer, parser, ec);
    if (ec) fail(m_url.text() + ": " + std::string{target} + ": " + ec.message());
    auto res = parser.release();
    if (res.result() != http::status::ok)
        fail(m_url.text() + ": " + std::string{target} + ": HTTP " +
             std::to_string(res.result_int()) + ": " + res.body().substr(0, 200));
    return std::move(res.body());
}

std::string HttpConnection::post(std::string_view json) {
    return request(true, m_url.target, json);
}

std::string HttpConnection::get(std::string_view target) { return request(false, target, {}); }

namespace {
nlohmann::json result_of(const nlohmann::json& response, std::string_view method) {
    if (response.is_object() && response.contains("error"))
        fail(std::string{method} + ": " + response["error"].value("message", response.dump()));
    if (!response.is_object() || !response.contains("result"))
        fail(std::string{method} + ": not a JSON-RPC response: " + response.dump().substr(0, 200));
    return response["result"];
}

nlohmann::json parse_json(const std::string& body, std::string_view method) {
    auto doc = nlohmann::json::parse(body, nullptr, false);
    if (doc.is_discarded()) fail(std::string{method} + ": the response is not JSON");
    return doc;
}
}  // namespace

nlohmann::json HttpConnection::call(std::string_view method, nlohmann::json params) {
    const nlohmann::json req = {
        {"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", std::move(params)}};
    return result_of(parse_json(post(req.dump()), method), method);
}

std::vector<nlohmann::json> HttpConnection::call_batch(std::string_view method,
                                                       const std::vector<nlohmann::json>& params) {
    if (params.empty()) return {};
    nlohmann::json req = nlohmann::json::array();
    for (size_t i = 0; i < params.size(); ++i)
        req.push_back({{"jsonrpc", "2.0"}, {"id", i}, {"method", method}, {"params", params[i]}});
    const nlohmann::json res = parse_json(post(req.dump()), method);
    if (!res.is_array() || res.size() != params.size())
        fail(std::string{method} + ": a batch of " + std::to_string(params.size()) +
             " calls was answered by " + res.dump().substr(0, 200));
    std::vector<nlohmann::json> out(params.size());
    for (const auto& r : res) {
        const size_t id = r.is_object() ? r.value("id", params.size()) : params.size();
        if (id >= params.size()) fail(std::string{method} + ": a response with an unknown id");
        out[id] = result_of(r, method);
    }
    return out;
}

uint64_t quantity(const nlohmann::json& v, std::string_view what) {
    const auto n = v.is_string() ? parse_u64(v.get<std::string>()) : std::nullopt;
    if (!n) fail(std::string{what} + ": expected a quantity, got " + v.dump());
    return *n;
}

}  // namespace barrel::load
