#pragma once
// JSON-RPC 2.0 framing (https://www.jsonrpc.org/specification), independent of HTTP and of the
// methods: a request body becomes calls, results become a response body. What the body may hold
// is checked here, once, before any method runs: its size (by the server), its nesting depth,
// the batch size, and the shape of each call object.

#include <barrel/core/expected.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::rpc {

using nlohmann::json;

/// The error codes of JSON-RPC 2.0, and go-ethereum's for the conditions it adds.
namespace code {
inline constexpr int parse_error = -32700;
inline constexpr int invalid_request = -32600;
inline constexpr int method_not_found = -32601;
inline constexpr int invalid_params = -32602;
inline constexpr int internal_error = -32603;
/// A rejected transaction, an unknown block: go-ethereum's generic server error.
inline constexpr int server_error = -32000;
}  // namespace code

struct Error {
    int code{code::internal_error};
    std::string message;
};

struct Limits {
    /// Calls in one batch (go-ethereum's BatchRequestLimit).
    size_t max_batch{1000};
    /// Nesting of arrays and objects in a body: deeper is never a valid call, and refusing it
    /// before parsing keeps a hostile body from costing more than its bytes.
    size_t max_depth{64};
};

/// One call of a request: a valid request object.
struct Call {
    json id;                   ///< a number, a string or null
    bool notification{false};  ///< no "id" member: the call gets no response
    std::string method;
    json params = json::array();  ///< an array (by position) or an object (by name)
};

/// A request object that is not a valid call gets this error in its place, with its id when
/// one could be read.
struct BadCall {
    json id;
    Error error;
};

struct Request {
    bool batch{false};
    std::vector<Expected<Call, BadCall>> calls;
};

/// json::parse(text, nullptr, false): the same values of the same types, the same documents
/// accepted (a discarded value for the others), in a fraction of the time. simdjson parses and
/// its DOM is converted; whatever simdjson rejects is left to nlohmann, so that the odd
/// documents (integers past 64 bits, a byte-order mark) keep nlohmann's answer.
json parse_json(std::string_view text);

/// Parses a request body. A body that is not JSON is parse_error; one that is neither an object
/// nor a non-empty array, or a batch over the limit, is invalid_request. Each element of a batch
/// is checked on its own, as the specification says.
Expected<Request, Error> parse_request(std::string_view body, const Limits& limits);

/// The response object of one call.
json result_response(const json& id, json result);
json error_response(const json& id, const Error& error);

/// Writes the response body call by call, with the bytes response_body would write for the
/// same result_response and error_response objects, without building them: the framing is
/// text, only the id and a result that is not a plain string or integer go through nlohmann's
/// serialiser.
class ResponseWriter {
public:
    explicit ResponseWriter(bool batch) : m_batch{batch} {}
    void result(const json& id, const json& result);
    void error(const json& id, const Error& error);
    /// The body; empty when nothing was written (a batch of notifications).
    std::string finish() &&;

private:
    void open_response();
    bool m_batch;
    size_t m_count{0};
    std::string m_body;
};

/// The response body: a single object, or for a batch an array of the responses to the calls
/// that were not notifications; empty when there is nothing to send (only notifications).
std::string response_body(const Request& request, const std::vector<json>& responses);

}  // namespace barrel::rpc
