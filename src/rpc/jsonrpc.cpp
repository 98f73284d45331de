#include "rpc/jsonrpc.hpp"

namespace barrel::rpc {

namespace {

/// The deepest nesting of arrays and objects in `text`, counted outside strings, stopping as
/// soon as it passes `limit`. A linear scan that allocates nothing.
size_t nesting_depth(std::string_view text, size_t limit) {
    size_t depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        switch (c) {
            case '"': in_string = true; break;
            case '[':
            case '{':
                deepest = std::max(deepest, ++depth);
                if (deepest > limit) return deepest;
                break;
            case ']':
            case '}':
                if (depth > 0) --depth;
                break;
            default: break;
        }
    }
    return deepest;
}

bool valid_id(const json& id) { return id.is_null() || id.is_string() || id.is_number(); }

Expected<Call, BadCall> parse_call(json& element) {
    auto bad = [](json id, std::string message) {
        return unexpected(BadCall{std::move(id), Error{code::invalid_request, std::move(message)}});
    };
    if (!element.is_object()) return bad(nullptr, "invalid request: not an object");
    Call call;
    const auto id = element.find("id");
    call.notification = id == element.end();
    if (!call.notification) {
        if (!valid_id(*id))
            return bad(nullptr, "invalid request: id must be a string, a number or null");
        call.id = std::move(*id);
    }
    const auto version = element.find("jsonrpc");
    if (version == element.end() || *version != "2.0")
        return bad(call.id, "invalid request: jsonrpc must be \"2.0\"");
    const auto method = element.find("method");
    if (method == element.end() || !method->is_string())
        return bad(call.id, "invalid request: method must be a string");
    call.method = method->get<std::string>();
    const auto params = element.find("params");
    if (params != element.end() && !params->is_null()) {
        if (!params->is_array() && !params->is_object())
            return bad(call.id, "invalid request: params must be an array or an object");
        call.params = std::move(*params);
    }
    return call;
}

}  // namespace

Expected<Request, Error> parse_request(std::string_view body, const Limits& limits) {
    if (nesting_depth(body, limits.max_depth) > limits.max_depth)
        return unexpected(Error{code::invalid_request, "invalid request: nested deeper than " +
                                                           std::to_string(limits.max_depth)});
    json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return unexpected(Error{code::parse_error, "parse error"});
    Request request;
    if (doc.is_array()) {
        request.batch = true;
        if (doc.empty()) return unexpected(Error{code::invalid_request, "empty batch"});
        if (doc.size() > limits.max_batch)
            return unexpected(Error{code::invalid_request, "batch too large"});
        request.calls.reserve(doc.size());
        for (json& element : doc) request.calls.push_back(parse_call(element));
        return request;
    }
    if (!doc.is_object())
        return unexpected(
            Error{code::invalid_request, "invalid request: not an object or an array"});
    request.calls.push_back(parse_call(doc));
    return request;
}

json result_response(const json& id, json result) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json error_response(const json& id, const Error& error) {
    return json{{"jsonrpc", "2.0"},
                {"id", id},
                {"error", json{{"code", error.code}, {"message", error.message}}}};
}

std::string response_body(const Request& request, const std::vector<json>& responses) {
    if (responses.empty()) return {};
    // Replace, never throw: a string we echo (an id) is valid UTF-8 since the parser checked it,
    // but a response must not be lost to a serialiser exception either way.
    constexpr auto replace = json::error_handler_t::replace;
    if (!request.batch) return responses.front().dump(-1, ' ', false, replace);
    return json(responses).dump(-1, ' ', false, replace);
}

}  // namespace barrel::rpc
