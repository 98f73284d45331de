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
/// A batch's call past the response size limit (go-ethereum's errcodeResponseTooLarge).
inline constexpr int response_too_large = -32003;
/// A query that needs blocks the node no longer holds (go-ethereum ≥ 1.16's
/// history.PrunedHistoryError, core/history/historymode.go).
inline constexpr int pruned_history = 4444;
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
    /// Bytes of a batch's response past which its remaining calls are answered -32003
    /// "response too large" instead of run (go-ethereum's BatchResponseMaxSize, 25 MB).
    size_t max_response_bytes{25 * 1000 * 1000};
};

/// One call of a request: a valid request object.
struct Call {
    json id;  ///< a number, a string or null
    /// The id's text as sent, when `id` would not print the same: a number with a fraction or
    /// an exponent, or an integer past 64 bits (2^64 stays 18446744073709551616, 1e2 stays
    /// 1e2, as go-ethereum echoes its raw id). Empty otherwise.
    std::string id_text{};
    bool notification{false};  ///< no "id" member: the call gets no response
    std::string method;
    json params = json::array();  ///< an array (by position) or an object (by name)
};

/// A request object that is not a valid call gets this error in its place, with its id when
/// one could be read.
struct BadCall {
    json id;
    Error error;
    std::string id_text;  ///< as Call::id_text
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
///
/// Each response is written whole or not at all: if writing one throws (std::bad_alloc), the
/// body is left as it was before it.
class ResponseWriter {
public:
    explicit ResponseWriter(bool batch) : m_batch{batch} {}
    /// `id_text`, when not empty, is written instead of `id` (Call::id_text).
    void result(const json& id, const json& result, std::string_view id_text = {});
    void error(const json& id, const Error& error, std::string_view id_text = {});
    /// Bytes written so far.
    size_t size() const noexcept { return m_body.size(); }
    /// The body; empty when nothing was written (a batch of notifications).
    std::string finish() &&;

private:
    void open_response();
    void append_id(const json& id, std::string_view id_text);
    /// Runs `write` on the body; if it throws, undoes its part and rethrows.
    template <class Write>
    void whole(Write&& write);
    bool m_batch;
    size_t m_count{0};
    std::string m_body;
};

/// The response body: a single object, or for a batch an array of the responses to the calls
/// that were not notifications; empty when there is nothing to send (only notifications).
std::string response_body(const Request& request, const std::vector<json>& responses);

}  // namespace barrel::rpc
