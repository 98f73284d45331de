#include "rpc/http_server.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <list>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace barrel::rpc {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

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

}  // namespace

class Session;

struct HttpServer::Impl {
    HttpOptions options;
    HttpHandler& handler;
    asio::io_context ioc;
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
    std::optional<tcp::acceptor> acceptor;
    std::vector<std::thread> threads;
    uint16_t bound_port{0};
    std::atomic<size_t> open{0};
    std::atomic<bool> stopping{false};
    std::mutex sessions_mutex;
    std::list<std::weak_ptr<Session>> sessions;

    Impl(const HttpOptions& o, HttpHandler& h) : options{o}, handler{h} {}
    void accept();
    void on_accept(beast::error_code ec, tcp::socket socket);
};

/// One connection: read a request, answer it, again while the client keeps it alive.
class Session : public std::enable_shared_from_this<Session> {
public:
    Session(tcp::socket&& socket, HttpServer::Impl& server, bool over_limit)
        : m_stream{std::move(socket)}, m_server{server}, m_over_limit{over_limit} {}
    ~Session() {
        if (!m_over_limit) m_server.open.fetch_sub(1);
        std::lock_guard lock{m_server.sessions_mutex};
        if (m_registered) m_server.sessions.erase(m_entry);
    }

    void start() {
        {
            std::lock_guard lock{m_server.sessions_mutex};
            m_entry = m_server.sessions.insert(m_server.sessions.end(), weak_from_this());
            m_registered = true;
        }
        asio::dispatch(m_stream.get_executor(), [self = shared_from_this()] {
            if (self->m_over_limit) {
                self->respond(text(503, "too many connections"), false);
                return;
            }
            self->wait_for_request();
        });
    }

    /// From stop(): closes the socket on the connection's strand.
    void close() {
        asio::post(m_stream.get_executor(), [self = shared_from_this()] {
            beast::error_code ignored;
            self->m_stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
            self->m_stream.close();
        });
    }

private:
    /// Waits up to the idle timeout for the first byte of a request (unless pipelined bytes are
    /// already here), then gives the whole request the read timeout.
    void wait_for_request() {
        if (m_buffer.size() > 0) return read_request();
        m_stream.expires_after(m_server.options.idle_timeout);
        m_stream.async_read_some(m_buffer.prepare(4096),
                                 [self = shared_from_this()](beast::error_code ec, size_t n) {
                                     if (ec) return self->shut();
                                     self->m_buffer.commit(n);
                                     self->read_request();
                                 });
    }

    void read_request() {
        m_parser.emplace();
        m_parser->body_limit(m_server.options.max_body_bytes);
        m_parser->header_limit(static_cast<uint32_t>(m_server.options.max_header_bytes));
        m_stream.expires_after(m_server.options.read_timeout);
        http::async_read(
            m_stream, m_buffer, *m_parser,
            [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
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

        const auto& req = m_parser->get();
        const bool keep_alive = req.keep_alive() && !m_server.stopping.load();
        respond(answer(req), keep_alive);
    }

    HttpResponse answer(const http::request<http::string_body>& req) {
        const std::string_view target{req.target().data(), req.target().size()};
        if (req.method() == http::verb::get && target == "/metrics")
            return m_server.handler.metrics();
        // A GET without a body is a health check (as go-ethereum answers it).
        if (req.method() == http::verb::get && target == "/" && req.body().empty())
            return HttpResponse{200, "text/plain; charset=utf-8", ""};
        if (target != "/") return text(404, "not found");
        if (req.method() != http::verb::post) return text(405, "method not allowed");
        const auto type = req[http::field::content_type];
        if (!is_json_content_type({type.data(), type.size()}))
            return text(415, "invalid content type, only application/json is supported");
        return m_server.handler.post(req.body());
    }

    void respond(HttpResponse response, bool keep_alive) {
        auto res = std::make_shared<http::response<http::string_body>>(
            static_cast<http::status>(response.status), 11);
        res->set(http::field::server, "barrel");
        res->set(http::field::content_type, response.content_type);
        res->keep_alive(keep_alive);
        res->body() = std::move(response.body);
        res->prepare_payload();
        m_stream.expires_after(m_server.options.write_timeout);
        http::async_write(
            m_stream, *res,
            [self = shared_from_this(), res, keep_alive](beast::error_code ec, size_t) {
                if (ec || !keep_alive) return self->shut();
                self->wait_for_request();
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
    HttpServer::Impl& m_server;
    bool m_over_limit;
    bool m_registered{false};
    std::list<std::weak_ptr<Session>>::iterator m_entry;
};

void HttpServer::Impl::accept() {
    acceptor->async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket s) {
        on_accept(ec, std::move(s));
    });
}

void HttpServer::Impl::on_accept(beast::error_code ec, tcp::socket socket) {
    if (stopping.load() || ec == asio::error::operation_aborted) return;
    if (!ec) {
        // A response is written as soon as it is whole: without this, the tail segment of a
        // large one waits for the client's delayed ACK (Nagle), tens of milliseconds per batch.
        // A failure leaves the default, which is slower but correct.
        beast::error_code ignored;
        socket.set_option(tcp::no_delay{true}, ignored);
        const bool over = open.fetch_add(1) >= options.max_connections;
        if (over) open.fetch_sub(1);
        std::make_shared<Session>(std::move(socket), *this, over)->start();
    }
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
    s.work.emplace(s.ioc.get_executor());
    s.accept();
    for (unsigned i = 0; i < std::max(1u, s.options.threads); ++i)
        s.threads.emplace_back([&s] { s.ioc.run(); });
    return {};
}

uint16_t HttpServer::port() const noexcept { return m_impl->bound_port; }

size_t HttpServer::connections() const noexcept { return m_impl->open.load(); }

void HttpServer::stop() {
    Impl& s = *m_impl;
    if (s.threads.empty() || s.stopping.exchange(true)) return;
    asio::post(s.ioc, [&s] {
        beast::error_code ignored;
        if (s.acceptor) s.acceptor->close(ignored);
    });
    // Collected first: the last reference to a session may go here, and its destructor takes
    // the same lock.
    std::vector<std::shared_ptr<Session>> live;
    {
        std::lock_guard lock{s.sessions_mutex};
        for (auto& weak : s.sessions)
            if (auto session = weak.lock()) live.push_back(std::move(session));
    }
    for (auto& session : live) session->close();
    live.clear();
    s.work.reset();
    for (auto& t : s.threads) t.join();
    s.threads.clear();
}

}  // namespace barrel::rpc
