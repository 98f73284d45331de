#pragma once
// What the server's two kinds of connection share (http_server.cpp: HTTP; ws_connection.cpp:
// WebSocket): the server's state, and a connection's place in it (its slot in the connection
// count, its unsent bytes, what it is doing, for choosing one to close at the limit).

#include "rpc/http_server.hpp"
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <list>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace barrel::rpc {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

class Connection;

struct HttpServer::Impl {
    HttpOptions options;
    HttpHandler& handler;
    asio::io_context ioc;
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
    std::optional<tcp::acceptor> acceptor;
    std::optional<asio::steady_timer> accept_retry;
    std::vector<std::thread> threads;
    uint16_t bound_port{0};
    std::atomic<size_t> open{0};
    std::atomic<size_t> unsent{0};
    std::atomic<bool> stopping{false};
    std::mutex sessions_mutex;
    std::list<std::weak_ptr<Connection>> sessions;
    std::atomic<size_t> ws_peak_unsent{0};
    std::atomic<size_t> ws_dropped{0};
    FairQueue queue;

    Impl(const HttpOptions& o, HttpHandler& h)
        : options{o}, handler{h}, queue{std::max(1u, o.workers)} {}
    void accept();
    void on_accept(beast::error_code ec, tcp::socket socket);
    /// At the connection limit: the connection to close so that a new one can be served, if
    /// any is not executing a request.
    std::shared_ptr<Connection> reclaimable();
};

/// A connection's place in the server. Its handlers run on its strand; its requests' work on
/// the server's queue, one at a time, as one fairness flow.
class Connection : public std::enable_shared_from_this<Connection> {
public:
    /// What a connection is doing, for choosing one to close at the connection limit: the
    /// order of the values is the order of preference. `fresh`: new, nothing received yet;
    /// `idle`: waiting for a request (kept alive after a response, or a WebSocket connection
    /// with nothing to do).
    enum class State : uint8_t { fresh, idle, reading, writing, executing };

    /// `counted`: it holds a slot of the connection count (one refused at the limit does not).
    Connection(HttpServer::Impl& server, bool counted) : m_server{server}, m_counted{counted} {}
    virtual ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    /// Enters the server's list (for stop() and the connection limit).
    void enlist();
    /// From stop() or the connection limit: closes the socket on the connection's strand.
    virtual void close() = 0;

    State state() const noexcept { return m_state.load(std::memory_order_relaxed); }
    /// When the current state began (steady clock, ns).
    int64_t since() const noexcept { return m_since.load(std::memory_order_relaxed); }
    /// Whether it may be closed for a new connection: not executing, not a refused one, not
    /// already chosen.
    bool reclaimable() const noexcept {
        return m_counted.load(std::memory_order_relaxed) && state() != State::executing &&
               !m_claimed.load(std::memory_order_relaxed);
    }
    /// Marks the connection for closing; false if it already was.
    bool claim() noexcept { return !m_claimed.exchange(true); }

protected:
    void set_state(State s) noexcept;
    /// Its slot in the connection count goes to the WebSocket connection it became.
    void hand_over_slot() noexcept {
        m_counted.store(false);
        claim();
    }

    HttpServer::Impl& m_server;
    std::atomic<bool> m_counted;
    size_t m_unsent{0};  ///< this connection's part of Impl::unsent

private:
    bool m_enlisted{false};
    std::list<std::weak_ptr<Connection>>::iterator m_entry;
    std::atomic<State> m_state{State::fresh};
    std::atomic<int64_t> m_since;
    std::atomic<bool> m_claimed{false};
};

/// Makes the WebSocket connection that `stream` becomes by `upgrade` (ws_connection.cpp), in
/// the connection count's slot its HTTP connection had.
void start_websocket(HttpServer::Impl& server, beast::tcp_stream stream,
                     http::request<http::string_body> upgrade);

/// One line on stderr for the exception being handled; never throws itself.
void log_exception(const char* where) noexcept;

int64_t now_ns();

}  // namespace barrel::rpc
