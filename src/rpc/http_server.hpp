#pragma once
// The HTTP/1.1 side of the node's JSON-RPC service, on Boost.Beast: keep-alive connections,
// `POST /` with a JSON body for calls and `GET /metrics`, every limit an option. The server
// knows nothing of JSON-RPC: it hands each POST body to an HttpHandler and writes back what
// the handler returns. A connection that breaks a limit gets its HTTP error and is closed; the
// others are served on.

#include <barrel/core/expected.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace barrel::rpc {

struct HttpOptions {
    std::string address{"127.0.0.1"};
    uint16_t port{8545};  ///< 0: any free port (tests); port() says which
    /// Largest request body (go-ethereum: 5 MiB); larger is 413 and the connection closes.
    size_t max_body_bytes{5 * 1024 * 1024};
    /// Largest request header block.
    size_t max_header_bytes{16 * 1024};
    /// Connections open at once; one more is answered 503 and closed.
    size_t max_connections{512};
    /// A request must arrive whole within this once its first byte has (go-ethereum: 30 s).
    std::chrono::milliseconds read_timeout{std::chrono::seconds{30}};
    /// A keep-alive connection with no request for this long is closed (go-ethereum: 120 s).
    std::chrono::milliseconds idle_timeout{std::chrono::seconds{120}};
    /// A response must be taken by the client within this (go-ethereum: 30 s).
    std::chrono::milliseconds write_timeout{std::chrono::seconds{30}};
    /// Threads running the connections (oneTBB's threads do the parallel work of a request).
    unsigned threads{1};
};

struct HttpResponse {
    unsigned status{200};
    std::string content_type{"application/json"};
    std::string body;
};

class HttpHandler {
public:
    virtual ~HttpHandler() = default;
    /// A JSON-RPC body (POST /). Called from the server's threads, several at once.
    virtual HttpResponse post(std::string_view body) = 0;
    /// GET /metrics.
    virtual HttpResponse metrics() = 0;
};

class HttpServer {
public:
    HttpServer(const HttpOptions& options, HttpHandler& handler);
    ~HttpServer();  ///< stop()
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    /// Binds and starts serving; fails with one line ("cannot listen on 127.0.0.1:8545: Address
    /// already in use").
    Expected<void, std::string> start();
    /// The port bound (the chosen one when options.port was 0).
    uint16_t port() const noexcept;
    /// Stops accepting, closes every connection once its current response is written, and joins
    /// the threads. Idempotent.
    void stop();

    /// Connections open now (for tests and metrics).
    size_t connections() const noexcept;

private:
    struct Impl;
    friend class Session;  // a connection, defined in http_server.cpp
    std::unique_ptr<Impl> m_impl;
};

}  // namespace barrel::rpc
