#include "rpc/http_server.hpp"

#include "log/logger.hpp"
#include "rpc/connection.hpp"
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>

namespace barrel::rpc {

void log_exception(const char* where) noexcept {
    try {
        try {
            throw;
        } catch (const std::exception& e) {
            log::standard_error().write(log::Level::error, "rpc",
                                        std::string{where} + ": " + e.what());
        } catch (...) {
            log::standard_error().write(log::Level::error, "rpc",
                                        std::string{where} + ": unknown exception");
        }
    } catch (...) {
    }
}

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

Connection::~Connection() {
    if (m_counted) m_server.open.fetch_sub(1);
    if (m_unsent > 0) m_server.unsent.fetch_sub(m_unsent);
    std::lock_guard lock{m_server.sessions_mutex};
    if (m_enlisted) m_server.sessions.erase(m_entry);
}

void Connection::enlist() {
    set_state(State::fresh);
    std::lock_guard lock{m_server.sessions_mutex};
    m_entry = m_server.sessions.insert(m_server.sessions.end(), weak_from_this());
    m_enlisted = true;
}

void Connection::set_state(State s) noexcept {
    m_since.store(now_ns(), std::memory_order_relaxed);
    m_state.store(s, std::memory_order_relaxed);
}

namespace {

bool is_json_content_type(std::string_view value) {
    // "application/json", any case, optionally followed by parameters ("; charset=utf-8").
    constexpr std::string_view kJson = "application/json";
    if (value.size() < kJson.size()) return false;
    for (size_t i = 0; i < kJson.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(value[i])) != kJson[i]) return false;
    const std::string_view rest = value.substr(kJson.size());
    return rest.empty() || rest.front() == ';' || rest.front() == ' ';
}

HttpResponse text(unsigned status, std::string body) {
    return HttpResponse{status, "text/plain; charset=utf-8", std::move(body) + "\n"};
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

std::string_view header(const http::request<http::string_body>& req, http::field name) {
    const auto value = req[name];
    return {value.data(), value.size()};
}

std::string_view trimmed(std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
}

/// The default HttpHandler::begin_post: the whole request in one step.
class OneStep final : public HttpWork {
public:
    OneStep(HttpHandler& handler, std::string body) : m_handler{handler}, m_body{std::move(body)} {}
    bool step() override {
        m_response = m_handler.post(m_body);
        return false;
    }
    HttpResponse response() override { return std::move(m_response); }

private:
    HttpHandler& m_handler;
    std::string m_body;
    HttpResponse m_response;
};

}  // namespace

std::unique_ptr<HttpWork> HttpHandler::begin_post(std::string body) {
    return std::make_unique<OneStep>(*this, std::move(body));
}

std::unique_ptr<WsHandler> HttpHandler::open_websocket(WsConnection&) { return nullptr; }

std::optional<HttpResponse> HttpHandler::status_page() { return std::nullopt; }

/// An HTTP connection: read a request, answer it, again while the client keeps it alive; or
/// become a WebSocket connection at an Upgrade.
class Session final : public Connection {
public:
    Session(tcp::socket&& socket, HttpServer::Impl& server, bool over_limit)
        : Connection{server, !over_limit}, m_stream{std::move(socket)}, m_over_limit{over_limit} {}

    void start() {
        enlist();
        asio::dispatch(m_stream.get_executor(), [self = shared_self()] {
            if (self->m_over_limit) {
                self->respond(text(503, "too many connections"), false);
                return;
            }
            self->wait_for_request(/*first=*/true);
        });
    }

    void close() override {
        if (m_handed_over.load()) return;  // its socket is the WebSocket connection's now
        asio::post(m_stream.get_executor(), [self = shared_self()] {
            beast::error_code ignored;
            self->m_stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
            self->m_stream.close();
        });
    }

private:
    std::shared_ptr<Session> shared_self() {
        return std::static_pointer_cast<Session>(shared_from_this());
    }

    /// Waits for the first byte of a request (unless pipelined bytes are already here): on a
    /// new connection up to the header timeout, on a keep-alive one up to the idle timeout.
    void wait_for_request(bool first) {
        set_state(first ? State::fresh : State::idle);
        if (m_buffer.size() > 0) return read_header();
        m_stream.expires_after(first ? m_server.options.header_timeout
                                     : m_server.options.idle_timeout);
        m_stream.async_read_some(m_buffer.prepare(4096),
                                 [self = shared_self()](beast::error_code ec, size_t n) {
                                     if (ec) return self->shut();
                                     self->m_buffer.commit(n);
                                     self->read_header();
                                 });
    }

    /// The header within the header timeout, the whole request within the read timeout.
    void read_header() {
        set_state(State::reading);
        m_allow_origin.reset();
        m_parser.emplace();
        m_parser->body_limit(m_server.options.max_body_bytes);
        m_parser->header_limit(static_cast<uint32_t>(m_server.options.max_header_bytes));
        m_read_deadline = std::chrono::steady_clock::now() + m_server.options.read_timeout;
        m_stream.expires_after(
            std::min(m_server.options.header_timeout, m_server.options.read_timeout));
        http::async_read_header(
            m_stream, m_buffer, *m_parser,
            [self = shared_self()](beast::error_code ec, size_t) { self->on_header(ec); });
    }

    void on_header(beast::error_code ec) {
        if (ec) return on_read(ec);
        const auto& req = m_parser->get();
        // Beast reads any coding list ending in chunked as chunked; a body still compressed
        // would then be read as plain JSON. Go's net/http answers 501, as RFC 9112 says.
        if (const auto te = req[http::field::transfer_encoding];
            !te.empty() && !iequals(trimmed({te.data(), te.size()}), "chunked"))
            return respond(text(501, "unsupported transfer encoding"), false);
        const auto expect = req[http::field::expect];
        if (!expect.empty() && iequals(trimmed({expect.data(), expect.size()}), "100-continue") &&
            !m_parser->is_done()) {
            // The client waits for this before it sends the body (curl: 1 s, then sends anyway).
            auto interim =
                std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
            m_stream.expires_after(m_server.options.write_timeout);
            return http::async_write(
                m_stream, *interim,
                [self = shared_self(), interim](beast::error_code write_ec, size_t) {
                    if (write_ec) return self->shut();
                    self->read_body();
                });
        }
        read_body();
    }

    void read_body() {
        if (m_parser->is_done()) return on_read({});
        m_stream.expires_at(m_read_deadline);
        http::async_read(
            m_stream, m_buffer, *m_parser,
            [self = shared_self()](beast::error_code ec, size_t) { self->on_read(ec); });
    }

    void on_read(beast::error_code ec) {
        if (ec == http::error::body_limit)
            return respond(
                text(413, "request body too large (limit " +
                              std::to_string(m_server.options.max_body_bytes) + " bytes)"),
                false);
        if (ec == http::error::header_limit)
            return respond(text(431, "request header too large"), false);
        if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
            ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
            ec == asio::error::eof)
            return shut();
        if (ec) return respond(text(400, "bad request: " + ec.message()), false);

        auto& req = m_parser->get();
        const AccessPolicy& access = m_server.options.access;
        // Before anything else, as go-ethereum checks it: a page whose name was rebound to this
        // address names its own host.
        if (!host_allowed(access, header(req, http::field::host)))
            return respond(text(403, "invalid host specified"), false);
        if (beast::websocket::is_upgrade(req) && !m_server.stopping.load()) {
            const bool has_origin = req.find(http::field::origin) != req.end();
            if (!websocket_origin_allowed(
                    access,
                    has_origin ? std::optional{header(req, http::field::origin)} : std::nullopt))
                return respond(text(403, "origin not allowed"), false);
            hand_over_slot();
            m_handed_over.store(true);
            return start_websocket(m_server, std::move(m_stream), m_parser->release());
        }
        const bool keep_alive = req.keep_alive() && !m_server.stopping.load();
        m_allow_origin = allow_origin(access, header(req, http::field::origin));
        if (auto answer = answer_inline(req)) return respond(std::move(*answer), keep_alive);
        execute(std::move(req.body()), keep_alive);
    }

    /// The answer to anything but a call, which needs no worker.
    std::optional<HttpResponse> answer_inline(const http::request<http::string_body>& req) {
        const std::string_view target{req.target().data(), req.target().size()};
        if (req.method() == http::verb::get && target == "/metrics") {
            try {
                return m_server.handler.metrics();
            } catch (...) {
                log_exception("GET /metrics");
                return text(500, "internal error");
            }
        }
        if (req.method() == http::verb::get && target == "/" && req.body().empty()) {
            if (m_server.options.status_page) {
                try {
                    if (auto page = m_server.handler.status_page()) return page;
                } catch (...) {
                    log_exception("GET /");
                    return text(500, "internal error");
                }
            }
            // A GET without a body is a health check (as go-ethereum answers it).
            return HttpResponse{200, "text/plain; charset=utf-8", ""};
        }
        if (target != "/") return text(404, "not found");
        if (req.method() == http::verb::options) return preflight(req);
        if (req.method() != http::verb::post) return text(405, "method not allowed");
        const auto type = req[http::field::content_type];
        if (!is_json_content_type({type.data(), type.size()}))
            return text(415, "invalid content type, only application/json is supported");
        return std::nullopt;
    }

    /// The answer to OPTIONS: a CORS preflight's headers if its origin and method are allowed,
    /// none otherwise (the browser then refuses the call).
    HttpResponse preflight(const http::request<http::string_body>& req) {
        m_allow_origin.reset();  // the preflight's own headers say it
        HttpResponse answer{204, "", ""};
        answer.headers =
            preflight_headers(m_server.options.access, header(req, http::field::origin),
                              header(req, http::field::access_control_request_method),
                              header(req, http::field::access_control_request_headers));
        answer.headers.push_back({"Allow", "GET, POST, OPTIONS"});
        answer.headers.push_back(
            {"Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"});
        return answer;
    }

    /// Queues the call's work; its response comes back to this strand.
    void execute(std::string body, bool keep_alive) {
        set_state(State::executing);
        std::unique_ptr<HttpWork> work;
        try {
            work = m_server.handler.begin_post(std::move(body));
        } catch (...) {
            log_exception("POST /");
            return respond(text(500, "internal error"), keep_alive);
        }
        auto* raw = work.get();
        m_server.queue.submit(
            m_flow, std::move(work), [self = shared_self(), raw, keep_alive](bool finished) {
                std::optional<HttpResponse> response;
                if (finished) {
                    try {
                        response = raw->response();
                    } catch (...) {
                        log_exception("POST / response");
                    }
                } else {
                    log_exception("POST /");
                }
                if (!response) response = text(500, "internal error");
                asio::post(self->m_stream.get_executor(),
                           [self, keep_alive, response = std::move(*response)]() mutable {
                               self->respond(std::move(response), keep_alive);
                           });
            });
    }

    void respond(HttpResponse response, bool keep_alive) {
        set_state(State::writing);
        // A large response counts against the budget of unsent bytes while it is written.
        const size_t size = response.body.size();
        if (size > HttpOptions::kAlwaysSent) {
            if (m_server.unsent.fetch_add(size) + size > m_server.options.max_unsent_bytes) {
                m_server.unsent.fetch_sub(size);
                response = text(503, "server busy: too many responses unsent, retry later");
            } else {
                m_unsent = size;
            }
        }
        auto res = std::make_shared<http::response<http::string_body>>(
            static_cast<http::status>(response.status), 11);
        res->set(http::field::server, "barrel");
        if (!response.content_type.empty())
            res->set(http::field::content_type, response.content_type);
        for (const Header& h : response.headers) res->set(h.name, h.value);
        if (m_allow_origin) {
            res->set(http::field::access_control_allow_origin, *m_allow_origin);
            res->set(http::field::vary, "Origin");
        }
        res->keep_alive(keep_alive);
        res->body() = std::move(response.body);
        // A 204 has no body, and says no length (RFC 9110, 8.6).
        if (res->result() != http::status::no_content) res->prepare_payload();
        m_stream.expires_after(m_server.options.write_timeout);
        http::async_write(
            m_stream, *res,
            [self = shared_self(), res, keep_alive](beast::error_code ec, size_t) mutable {
                res.reset();
                if (self->m_unsent > 0) {
                    self->m_server.unsent.fetch_sub(self->m_unsent);
                    self->m_unsent = 0;
                }
                if (ec || !keep_alive) return self->shut();
                self->wait_for_request(/*first=*/false);
            });
    }

    void shut() {
        beast::error_code ignored;
        m_stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        m_stream.close();
    }

    beast::tcp_stream m_stream;
    beast::flat_buffer m_buffer;
    std::optional<http::request_parser<http::string_body>> m_parser;
    std::chrono::steady_clock::time_point m_read_deadline;
    bool m_over_limit;
    std::atomic<bool> m_handed_over{false};
    /// The current request's Access-Control-Allow-Origin (none: no CORS headers).
    std::optional<std::string> m_allow_origin;
    std::shared_ptr<FairQueue::Flow> m_flow{std::make_shared<FairQueue::Flow>()};
};

std::shared_ptr<Connection> HttpServer::Impl::reclaimable() {
    // Collected under the lock, examined and released after it: the last reference to a
    // session may be one of these, and its destructor takes the same lock.
    std::vector<std::shared_ptr<Connection>> live;
    {
        std::lock_guard lock{sessions_mutex};
        live.reserve(sessions.size());
        for (auto& weak : sessions)
            if (auto s = weak.lock()) live.push_back(std::move(s));
    }
    std::shared_ptr<Connection> best;
    for (auto& s : live) {
        if (!s->reclaimable()) continue;
        if (!best || s->state() < best->state() ||
            (s->state() == best->state() && s->since() < best->since()))
            best = s;
    }
    if (best && !best->claim()) return nullptr;  // raced with another claim: rare, 503 then
    return best;
}

void HttpServer::Impl::accept() {
    acceptor->async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket s) {
        on_accept(ec, std::move(s));
    });
}

void HttpServer::Impl::on_accept(beast::error_code ec, tcp::socket socket) {
    if (stopping.load() || ec == asio::error::operation_aborted) return;
    if (ec) {
        // Out of file descriptors (or another passing failure): accepting again at once would
        // spin on the same error. Free one if any connection can go, and retry shortly.
        if (auto victim = reclaimable()) victim->close();
        accept_retry->expires_after(std::chrono::milliseconds{20});
        accept_retry->async_wait([this](beast::error_code wait_ec) {
            if (!wait_ec && !stopping.load()) accept();
        });
        return;
    }
    // A response is written as soon as it is whole: without this, the tail segment of a
    // large one waits for the client's delayed ACK (Nagle), tens of milliseconds per batch.
    // A failure leaves the default, which is slower but correct.
    beast::error_code ignored;
    socket.set_option(tcp::no_delay{true}, ignored);
    bool over = open.fetch_add(1) >= options.max_connections;
    if (over) {
        // The new connection takes the place of one that is idle, slow or stuck; the count
        // drops when that one's last handler has run.
        if (auto victim = reclaimable()) {
            victim->close();
            over = false;
        }
    }
    if (over) open.fetch_sub(1);
    std::make_shared<Session>(std::move(socket), *this, over)->start();
    accept();
}

HttpServer::HttpServer(const HttpOptions& options, HttpHandler& handler)
    : m_impl{std::make_unique<Impl>(options, handler)} {}

HttpServer::~HttpServer() { stop(); }

Expected<void, std::string> HttpServer::start() {
    Impl& s = *m_impl;
    const std::string where = s.options.address + ":" + std::to_string(s.options.port);
    beast::error_code ec;
    const auto address = asio::ip::make_address(s.options.address, ec);
    if (ec) return unexpected("cannot listen on " + where + ": " + ec.message());
    const tcp::endpoint endpoint{address, s.options.port};
    tcp::acceptor acceptor{s.ioc};
    if (acceptor.open(endpoint.protocol(), ec); ec)
        return unexpected("cannot listen on " + where + ": " + ec.message());
    if (acceptor.set_option(asio::socket_base::reuse_address(true), ec); ec)
        return unexpected("cannot listen on " + where + ": " + ec.message());
    if (acceptor.bind(endpoint, ec); ec)
        return unexpected("cannot listen on " + where + ": " + ec.message());
    if (acceptor.listen(asio::socket_base::max_listen_connections, ec); ec)
        return unexpected("cannot listen on " + where + ": " + ec.message());
    s.bound_port = acceptor.local_endpoint().port();
    s.acceptor.emplace(std::move(acceptor));
    s.accept_retry.emplace(s.ioc);
    s.work.emplace(s.ioc.get_executor());
    s.accept();
    for (unsigned i = 0; i < std::max(1u, s.options.threads); ++i)
        s.threads.emplace_back([&s] {
            // A handler's exception leaves the I/O thread, never the process: the connection
            // it served is dropped with it, and the thread serves on.
            for (;;) {
                try {
                    s.ioc.run();
                    return;
                } catch (...) {
                    log_exception("connection");
                }
            }
        });
    return {};
}

uint16_t HttpServer::port() const noexcept { return m_impl->bound_port; }

size_t HttpServer::connections() const noexcept { return m_impl->open.load(); }

WsStats HttpServer::ws_stats() const noexcept {
    return WsStats{m_impl->ws_peak_unsent.load(), m_impl->ws_dropped.load()};
}

void HttpServer::stop() {
    Impl& s = *m_impl;
    if (s.threads.empty() || s.stopping.exchange(true)) return;
    asio::post(s.ioc, [&s] {
        beast::error_code ignored;
        if (s.acceptor) s.acceptor->close(ignored);
    });
    // Collected first: the last reference to a session may go here, and its destructor takes
    // the same lock.
    std::vector<std::shared_ptr<Connection>> live;
    {
        std::lock_guard lock{s.sessions_mutex};
        for (auto& weak : s.sessions)
            if (auto session = weak.lock()) live.push_back(std::move(session));
    }
    for (auto& session : live) session->close();
    live.clear();
    // The workers first: what they finish posts its response to the I/O threads, still running.
    s.queue.stop();
    asio::post(s.ioc, [&s] {
        if (s.accept_retry) s.accept_retry->cancel();
    });
    s.work.reset();
    for (auto& t : s.threads) t.join();
    s.threads.clear();
}

}  // namespace barrel::rpc
