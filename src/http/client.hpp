#pragma once
// The one HTTP client of the node and its tools: CometBFT's RPC (the node's broadcasts and
// polls), `barrel-node testnet`'s probes and barrel-load's JSON-RPC. HTTP/1.1 over one
// connection, kept alive between requests; errors are values naming the URL.
//
// Blocking, on a socket of its own: every caller has a thread per connection already, and a
// blocking send and receive are the fewest system calls per request (barrel-load's send path
// is one sendmsg and, for a batch's answer, one recv). The timeout bounds each wait for the
// other side (connect, each send, each receive: SO_SNDTIMEO and SO_RCVTIMEO), so a peer that
// stops answering fails the request instead of hanging its caller.

#include <barrel/core/endpoint.hpp>
#include <barrel/core/expected.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::http {

struct Options {
    /// The most one wait for the server takes: the connect, each send, each receive.
    std::chrono::milliseconds timeout{5000};
    /// The largest answer body read; a larger one fails the request.
    size_t max_body{size_t{64} << 20};
};

struct Response {
    int status{0};
    std::string body;
};

/// One connection to the server of `url`, opened by the first request (or connect()) and kept
/// open while the server keeps it. A request on a kept connection the server has closed in the
/// meantime (its idle timeout) is sent once more on a new one, when no byte of an answer came.
/// A client is one thread's at a time.
class Client {
public:
    explicit Client(HttpUrl url, Options options = {});
    ~Client();
    Client(Client&& other) noexcept;
    Client& operator=(Client&& other) noexcept;
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    /// Opens the connection now if it is not open: for a caller that would know before its
    /// clock starts that the server is there.
    Expected<void, std::string> connect();

    /// POSTs `body` as application/json to the URL's path. The answer whatever its status.
    Expected<Response, std::string> post(std::string_view body);
    /// GETs `target` ("/status", "/metrics") of the URL's server.
    Expected<Response, std::string> get(std::string_view target);

    const HttpUrl& url() const noexcept { return m_url; }

private:
    Expected<Response, std::string> exchange(std::string_view method, std::string_view target,
                                             std::string_view body);
    /// One attempt on the open connection; `answered` tells whether any byte of an answer came.
    Expected<Response, std::string> attempt(std::string_view method, std::string_view target,
                                            std::string_view body, bool& answered);
    Expected<void, std::string> open();
    void close() noexcept;
    /// "<url with target>: <what>".
    std::string failure(std::string_view target, std::string_view what) const;

    HttpUrl m_url;
    Options m_options;
    int m_fd{-1};
    std::string m_host_header;  ///< "Host: HOST:PORT\r\n", made once
    std::vector<char> m_in;     ///< what receives read into, allocated once
    size_t m_parsed{0};         ///< m_in's bytes up to here are parsed
    size_t m_received{0};       ///< m_in's bytes up to here were received
};

}  // namespace barrel::http
