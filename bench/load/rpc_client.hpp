#pragma once
// The load generator's side of the wire: JSON-RPC calls over one keep-alive connection of the
// project's HTTP client (src/http/client.hpp). Every failure (refused, closed, timed out, a
// status other than 200, an error object where a result was needed) throws bench::Failure with
// exit status 1, naming what failed: the node is at fault or gone, and the run cannot go on.

#include <barrel/core/endpoint.hpp>

#include "http/client.hpp"
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::load {

class HttpConnection {
public:
    explicit HttpConnection(const HttpUrl& url);

    /// POSTs a JSON body to the URL's path; the response body.
    std::string post(std::string_view json);
    /// GETs `target` (e.g. "/metrics"); the response body.
    std::string get(std::string_view target);

    /// One call; its result (null included). An error object throws, with its message.
    nlohmann::json call(std::string_view method, nlohmann::json params);

    /// Calls of one method, one per params element, as a batch; their results in order.
    std::vector<nlohmann::json> call_batch(std::string_view method,
                                           const std::vector<nlohmann::json>& params);

    const HttpUrl& url() const noexcept { return m_client.url(); }

    /// How long the node may keep a request waiting: the node is gone before then (a stalled
    /// run ends by --stall-timeout first, 60 s by default).
    static constexpr std::chrono::seconds kTimeout{300};

private:
    /// The answer's body; anything else throws.
    std::string body_of(Expected<http::Response, std::string> answer, std::string_view target);

    http::Client m_client;
};

/// A JSON-RPC quantity ("0x1a") as a number; throws Failure naming `what` if it is not one.
uint64_t quantity(const nlohmann::json& v, std::string_view what);

}  // namespace barrel::load
