#pragma once
// The load generator's side of the wire: an http:// URL, one blocking keep-alive HTTP/1.1
// connection (Boost.Beast), and JSON-RPC calls over it. Every failure (refused, closed, a status
// other than 200, an error object where a result was needed) throws bench::Failure with exit
// status 1, naming what failed: the node is at fault or gone, and the run cannot go on.

#include <barrel/core/endpoint.hpp>
#include <barrel/core/expected.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

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

    const HttpUrl& url() const noexcept { return m_url; }

private:
    std::string request(bool post, std::string_view target, std::string_view body);

    HttpUrl m_url;
    boost::asio::io_context m_ioc;
    boost::asio::ip::tcp::socket m_socket;
    boost::beast::flat_buffer m_buffer;
};

/// A JSON-RPC quantity ("0x1a") as a number; throws Failure naming `what` if it is not one.
uint64_t quantity(const nlohmann::json& v, std::string_view what);

}  // namespace barrel::load
