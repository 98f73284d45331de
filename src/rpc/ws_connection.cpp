// A WebSocket connection of the server (rpc/http_server.hpp): the HTTP connection it was until
// its Upgrade hands it its socket and its slot in the connection count.
//
// One message is read at a time, and one work runs at a time on the server's workers (the
// message's, or the handler's notifications after a wake): the next message is not read while
// one waits, so a client that sends faster than it is served is slowed by TCP, not buffered.
// What the works answer is queued and written in order; a client that does not read is dropped
// once its queue would pass HttpOptions::max_ws_unsent_bytes.

#include "rpc/connection.hpp"
#include <boost/asio/post.hpp>
#include <boost/beast/websocket.hpp>

#include <deque>

namespace barrel::rpc {

namespace {

namespace websocket = beast::websocket;

/// The most of a message read at once.
constexpr size_t kReadPart = 64 * 1024;

/// The answer to a message whose work threw: JSON-RPC's internal error, for want of its id.
constexpr std::string_view kInternalError =
    R"({"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}})";

class WsSession final : public Connection, public WsConnection {
public:
    /// It takes the slot its HTTP connection held (hand_over_slot).
    WsSession(HttpServer::Impl& server, beast::tcp_stream&& stream)
        : Connection{server, /*counted=*/true},
          m_executor{stream.get_executor()},
          m_ws{std::move(stream)} {}
    /// The handler first: its listeners may call wake() until it is gone.
    ~WsSession() override { m_handler.reset(); }

    void start(http::request<http::string_body> upgrade) {
        enlist();
        try {
            m_handler = m_server.handler.open_websocket(*this);
        } catch (...) {
            log_exception("websocket");
        }
        if (!m_handler) return refuse();
        m_upgrade = std::move(upgrade);
        beast::get_lowest_layer(m_ws).expires_never();
        // The handshake within the header timeout; an idle connection is pinged at half the
        // idle timeout and closed if nothing came back by its end.
        m_ws.set_option(websocket::stream_base::timeout{m_server.options.header_timeout,
                                                        m_server.options.idle_timeout,
                                                        /*keep_alive_pings=*/true});
        m_ws.set_option(websocket::stream_base::decorator(
            [](websocket::response_type& res) { res.set(http::field::server, "barrel"); }));
        // Messages are read a part at a time and the size limit is checked here (on_read_part).
        m_ws.read_message_max(0);
        m_ws.text(true);
        m_ws.async_accept(m_upgrade, [self = shared_self()](beast::error_code ec) {
            self->m_upgrade = {};
            if (ec) return self->shut();
            self->next();
        });
    }

    void close() override {
        asio::post(m_executor, [self = shared_self()] { self->shut(); });
    }

    void wake() noexcept override {
        if (m_wake_posted.exchange(true)) return;
        try {
            asio::post(m_executor, [weak = weak_from_this()] {
                if (auto self = weak.lock()) static_cast<WsSession&>(*self).on_wake();
            });
        } catch (...) {
            m_wake_posted.store(false);
        }
    }

    void drop() noexcept override {
        try {
            asio::post(m_executor, [weak = weak_from_this()] {
                auto self = weak.lock();
                if (!self) return;
                auto& session = static_cast<WsSession&>(*self);
                if (!session.m_closed) session.m_server.ws_dropped.fetch_add(1);
                session.shut();
            });
        } catch (...) {
        }
    }

private:
    std::shared_ptr<WsSession> shared_self() {
        return std::static_pointer_cast<WsSession>(shared_from_this());
    }

    /// No handler for WebSocket: the upgrade is answered as an unknown target.
    void refuse() {
        auto res = std::make_shared<http::response<http::string_body>>(http::status::not_found, 11);
        res->set(http::field::server, "barrel");
        res->set(http::field::content_type, "text/plain; charset=utf-8");
        res->body() = "not found\n";
        res->keep_alive(false);
        res->prepare_payload();
        m_ws.next_layer().expires_after(m_server.options.write_timeout);
        http::async_write(m_ws.next_layer(), *res,
                          [self = shared_self(), res](beast::error_code, size_t) { self->shut(); });
    }

    /// Starts what comes next, unless a work runs: a message read, then notifications asked
    /// for, else reading the next message.
    void next() {
        if (m_closed) return;
        if (!m_busy) {
            if (m_held) {
                std::string text = std::move(*m_held);
                m_held.reset();
                run(/*message=*/true, [&] { return m_handler->begin_message(std::move(text)); });
            } else if (m_wake_pending) {
                m_wake_pending = false;
                run(/*message=*/false, [&] { return m_handler->begin_notify(); });
            } else if (!m_reading) {
                read();
            }
        }
        refresh_state();
    }

    void on_wake() {
        m_wake_posted.store(false);
        m_wake_pending = true;
        next();
    }

    /// Reads the next message a part at a time, so that one past the size limit is refused
    /// once its first bytes past it have come.
    void read() {
        m_reading = true;
        m_ws.async_read_some(m_in, kReadPart, [self = shared_self()](beast::error_code ec, size_t) {
            self->on_read_part(ec);
        });
    }

    void on_read_part(beast::error_code ec) {
        // A close from the client, a peer gone silent past the idle timeout, a broken frame.
        if (ec) {
            m_reading = false;
            return shut();
        }
        if (m_in.size() > m_server.options.max_body_bytes) return refuse_too_big();
        if (!m_ws.is_message_done()) return read();
        m_reading = false;
        m_held = beast::buffers_to_string(m_in.data());
        m_in.consume(m_in.size());
        next();
    }

    /// The close handshake with code 1009 (message too big). Beast's own limit would close the
    /// socket while the client still sends the message, and the client would see the
    /// connection reset (1006) rather than the code; async_close reads and discards the rest
    /// (within the handshake timeout) before it closes.
    void refuse_too_big() {
        m_in.clear();
        m_in.shrink_to_fit();
        m_ws.async_close(websocket::close_reason{websocket::close_code::too_big},
                         [self = shared_self()](beast::error_code) {
                             self->m_reading = false;
                             self->shut();
                         });
    }

    /// Runs the work `begin` makes on the server's workers; its messages come back here.
    template <class Begin>
    void run(bool message, Begin&& begin) {
        std::unique_ptr<WsWork> work;
        try {
            work = begin();
        } catch (...) {
            log_exception("websocket");
            if (message) enqueue(std::string{kInternalError});
            return;
        }
        m_busy = true;
        auto* raw = work.get();
        m_server.queue.submit(
            m_flow, std::move(work), [self = shared_self(), raw, message](bool finished) {
                std::vector<std::string> out;
                try {
                    if (!finished) throw;
                    out = raw->messages();
                } catch (...) {
                    log_exception(message ? "websocket message" : "websocket notifications");
                    out.clear();
                    if (message) out.emplace_back(kInternalError);
                }
                asio::post(self->m_executor, [self, out = std::move(out)]() mutable {
                    self->m_busy = false;
                    for (std::string& m : out)
                        if (!m.empty()) self->enqueue(std::move(m));
                    self->next();
                });
            });
    }

    /// Queues a message, or drops the connection if its unsent bytes would pass the bound (a
    /// message is always taken when nothing else waits).
    void enqueue(std::string message) {
        if (m_closed) return;
        const size_t size = message.size();
        const HttpOptions& o = m_server.options;
        if (m_unsent > 0 && (m_unsent + size > o.max_ws_unsent_bytes ||
                             m_server.unsent.load() + size > o.max_unsent_bytes)) {
            m_server.ws_dropped.fetch_add(1);
            return shut();
        }
        m_unsent += size;
        m_server.unsent.fetch_add(size);
        size_t peak = m_server.ws_peak_unsent.load();
        while (m_unsent > peak && !m_server.ws_peak_unsent.compare_exchange_weak(peak, m_unsent)) {
        }
        m_out.push_back(std::move(message));
        if (!m_writing) write();
    }

    void write() {
        m_writing = true;
        m_ws.async_write(asio::buffer(m_out.front()),
                         [self = shared_self()](beast::error_code ec, size_t) {
                             const size_t size = self->m_out.front().size();
                             self->m_out.pop_front();
                             self->m_unsent -= size;
                             self->m_server.unsent.fetch_sub(size);
                             self->m_writing = false;
                             if (ec) return self->shut();
                             if (!self->m_out.empty()) self->write();
                             self->refresh_state();
                         });
    }

    void refresh_state() {
        const State s = m_busy ? State::executing : m_writing ? State::writing : State::idle;
        if (s != state()) set_state(s);
    }

    void shut() {
        if (m_closed) return;
        m_closed = true;
        beast::error_code ignored;
        auto& stream = beast::get_lowest_layer(m_ws);
        stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        stream.close();
    }

    const beast::tcp_stream::executor_type m_executor;  ///< the strand, for other threads
    websocket::stream<beast::tcp_stream> m_ws;
    http::request<http::string_body> m_upgrade;
    beast::flat_buffer m_in;
    std::unique_ptr<WsHandler> m_handler;
    std::shared_ptr<FairQueue::Flow> m_flow{std::make_shared<FairQueue::Flow>()};
    std::optional<std::string> m_held;  ///< a message read while a work ran
    std::deque<std::string> m_out;      ///< unsent, the first being written when m_writing
    std::atomic<bool> m_wake_posted{false};
    // The strand's alone:
    bool m_wake_pending{false};
    bool m_busy{false};
    bool m_reading{false};
    bool m_writing{false};
    bool m_closed{false};
};

}  // namespace

void start_websocket(HttpServer::Impl& server, beast::tcp_stream stream,
                     http::request<http::string_body> upgrade) {
    std::make_shared<WsSession>(server, std::move(stream))->start(std::move(upgrade));
}

}  // namespace barrel::rpc
