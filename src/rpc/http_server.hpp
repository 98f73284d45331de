#pragma once
// The transport of the node's JSON-RPC service, on Boost.Beast: HTTP/1.1 keep-alive
// connections, `POST /` with a JSON body for calls and `GET /metrics`, and WebSocket
// connections reached by an HTTP Upgrade on the same port; every limit an option. The server
// knows nothing of JSON-RPC: it hands each POST body to an HttpHandler, and each WebSocket
// message to the connection's WsHandler, and writes back what they return. A connection that
// breaks a limit gets its error and is closed; the others are served on.
//
// The I/O threads only read and write. A POST's work runs on the server's workers, a step at
// a time, in fair order across connections (rpc/fair_queue.hpp), so that no client can delay
// another's small call by more than a step. An exception from a handler is its request's
// error (HTTP 500 if the handler could not answer), never the process's end.

#include <barrel/core/expected.hpp>

#include "rpc/cors.hpp"
#include "rpc/fair_queue.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::rpc {

struct HttpOptions {
    std::string address{"127.0.0.1"};
    uint16_t port{8545};  ///< 0: any free port (tests); port() says which
    /// Largest request body (go-ethereum: 5 MiB); larger is 413 and the connection closes.
    size_t max_body_bytes{5 * 1024 * 1024};
    /// Largest request header block.
    size_t max_header_bytes{16 * 1024};
    /// Connections open at once. One more closes the longest idle keep-alive connection, else
    /// the one reading its request for longest, else the one that has been writing its response
    /// for longest; only when every connection is executing a request is it answered 503.
    size_t max_connections{512};
    /// A request must arrive whole within this once its first byte has (go-ethereum: 30 s).
    std::chrono::milliseconds read_timeout{std::chrono::seconds{30}};
    /// A request's header must arrive within this, on a new connection from its opening, on a
    /// keep-alive one from the request's first byte. go-ethereum allows 30 s; a header is a few
    /// hundred bytes, and a slow one only holds a connection that others may need.
    std::chrono::milliseconds header_timeout{std::chrono::seconds{5}};
    /// A keep-alive connection with no request for this long is closed (go-ethereum: 120 s).
    std::chrono::milliseconds idle_timeout{std::chrono::seconds{120}};
    /// A response must be taken by the client within this (go-ethereum: 30 s).
    std::chrono::milliseconds write_timeout{std::chrono::seconds{30}};
    /// Threads reading and writing the connections.
    unsigned threads{1};
    /// Threads running the requests (oneTBB's threads do the parallel work of a request).
    unsigned workers{1};
    /// Bytes of responses written but not yet taken by their clients, all connections together,
    /// past which a response over kAlwaysSent is replaced by 503: clients that never read can
    /// only hold this much of the node's memory (each connection holds one response at most).
    size_t max_unsent_bytes{256 * 1024 * 1024};
    /// A response this small is always sent (the budget above is for large ones).
    static constexpr size_t kAlwaysSent = 64 * 1024;
    /// Bytes of messages (responses, notifications) a WebSocket connection may hold unsent: a
    /// message that would pass it, while others wait, drops the connection (a client that does
    /// not read). A single message is always taken: its size is bounded by the response limit.
    /// A WebSocket connection's unsent bytes also count against max_unsent_bytes.
    size_t max_ws_unsent_bytes{16 * 1024 * 1024};
    /// Which Host a request may name, and which pages of other origins may call (CORS) or open
    /// a WebSocket connection: a Host not allowed is 403 (rpc/cors.hpp).
    AccessPolicy access{};
    /// GET / answers the handler's status page (HttpHandler::status_page); off, an empty 200
    /// (a health check, as go-ethereum answers a GET).
    bool status_page{true};
};

struct HttpResponse {
    unsigned status{200};
    std::string content_type{"application/json"};  ///< none when empty
    std::string body;
    std::vector<Header> headers{};  ///< more headers (CORS)
};

/// A POST's work, run a step at a time on the server's workers (SteppedWork::step), then
/// answered with response().
class HttpWork : public SteppedWork {
public:
    virtual HttpResponse response() = 0;
};

/// A WebSocket connection, as its WsHandler sees it. Both calls are thread-safe and never
/// block: an Events listener may make them.
class WsConnection {
public:
    virtual ~WsConnection() = default;
    /// Asks for the handler's begin_notify() work to run, in the connection's turn; several
    /// wakes before it runs make one run.
    virtual void wake() noexcept = 0;
    /// Closes the connection: its handler has more to send than it may hold.
    virtual void drop() noexcept = 0;
};

/// Work whose answer is WebSocket messages, sent in order.
class WsWork : public SteppedWork {
public:
    virtual std::vector<std::string> messages() = 0;
};

/// One WebSocket connection's side of the handler, made at its upgrade and destroyed with it.
/// The connection runs one work at a time on the server's workers (its requests and its
/// notifications are one fairness flow), so a work's messages are queued before the next work
/// begins: a response is sent before the notifications of a subscription it created.
class WsHandler {
public:
    virtual ~WsHandler() = default;
    /// The work of a message (a JSON-RPC request); its messages are the response (none for
    /// notifications only).
    virtual std::unique_ptr<WsWork> begin_message(std::string text) = 0;
    /// The work that turns what happened since the last one into notifications; begun after
    /// WsConnection::wake().
    virtual std::unique_ptr<WsWork> begin_notify() = 0;
};

class HttpHandler {
public:
    virtual ~HttpHandler() = default;
    /// A JSON-RPC body (POST /). Called from the server's workers, several at once.
    virtual HttpResponse post(std::string_view body) = 0;
    /// The work of a POST; by default one step that calls post(). A handler whose work can be
    /// split (a batch's calls) returns work of several steps.
    virtual std::unique_ptr<HttpWork> begin_post(std::string body);
    /// GET /metrics.
    virtual HttpResponse metrics() = 0;
    /// GET / when HttpOptions::status_page is on; none (the default): an empty 200.
    virtual std::optional<HttpResponse> status_page();
    /// The handler of a new WebSocket connection (which outlives it); none (the default): the
    /// upgrade is refused (HTTP 404).
    virtual std::unique_ptr<WsHandler> open_websocket(WsConnection& connection);
};

/// What the server's WebSocket connections have done, for tests and metrics.
struct WsStats {
    /// The most bytes one WebSocket connection ever held unsent.
    size_t peak_unsent{0};
    /// Connections dropped for holding too much unsent (WsConnection::drop() included).
    size_t dropped{0};
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

    /// Connections open now, WebSocket ones included (for tests and metrics).
    size_t connections() const noexcept;
    WsStats ws_stats() const noexcept;

    struct Impl;  // shared with the connections (rpc/connection.hpp)

private:
    std::unique_ptr<Impl> m_impl;
};

}  // namespace barrel::rpc
