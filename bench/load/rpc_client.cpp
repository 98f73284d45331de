#include "rpc_client.hpp"

#include <barrel/core/uint256.hpp>

#include "common/args.hpp"

namespace barrel::load {

using bench::fail;

HttpConnection::HttpConnection(const HttpUrl& url)
    : m_client{url, http::Options{.timeout = kTimeout, .max_body = SIZE_MAX}} {
    // Connected now: a node that is not there fails the run before its clock starts.
    if (auto connected = m_client.connect(); !connected) fail(connected.error());
}

std::string HttpConnection::body_of(Expected<http::Response, std::string> answer,
                                    std::string_view target) {
    if (!answer) fail(answer.error());
    if (answer->status != 200)
        fail(HttpUrl{url().endpoint, std::string{target}}.text() + ": HTTP " +
             std::to_string(answer->status) + ": " + answer->body.substr(0, 200));
    return std::move(answer->body);
}

std::string HttpConnection::post(std::string_view json) {
    return body_of(m_client.post(json), url().target);
}

std::string HttpConnection::get(std::string_view target) {
    return body_of(m_client.get(target), target);
}

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
