#include "abci/server.hpp"

#include <barrel/core/endpoint.hpp>

#include "abci/frame.hpp"
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/socket_base.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstring>
#include <exception>
#include <list>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <utility>
#include <vector>

namespace barrel::abci {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using local = asio::local::stream_protocol;
// One socket type for TCP and Unix connections: what is read and written is the same.
using Protocol = asio::generic::stream_protocol;

namespace {

/// Bytes asked of the socket per read: a CheckTx is a few hundred bytes, a proposal up to
/// max_tx_bytes, which arrives in several reads.
constexpr size_t kReadChunk = 64 * 1024;
/// Responses are written at each Flush; a client that sends many requests without one still
/// gets them once this much is waiting, so an unflushed connection holds bounded memory.
constexpr size_t kWriteEarlyBytes = 1 << 20;
/// After a failed accept (no file descriptors left), the listener waits this long before the
/// next one instead of spinning on the error.
constexpr auto kAcceptRetry = std::chrono::milliseconds{100};

struct ParsedAddress {
    bool is_unix{false};
    HostPort tcp;      // tcp
    std::string path;  // unix
};

std::string usage_error(const std::string& address) {
    return "abci address '" + address + "': expected tcp://HOST:PORT or unix://PATH";
}

Expected<ParsedAddress, std::string> parse_address(const std::string& address) {
    constexpr std::string_view kTcp = "tcp://", kUnix = "unix://";
    const std::string_view text{address};
    ParsedAddress parsed;
    if (text.starts_with(kUnix)) {
        parsed.is_unix = true;
        parsed.path = std::string{text.substr(kUnix.size())};
        if (parsed.path.empty()) return unexpected(usage_error(address));
        if (parsed.path.size() >= sizeof(sockaddr_un{}.sun_path)) {
            return unexpected("abci address '" + address + "': a Unix socket path has at most " +
                              std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes");
        }
        return parsed;
    }
    if (!text.starts_with(kTcp)) return unexpected(usage_error(address));
    auto endpoint = parse_host_port(text.substr(kTcp.size()));
    if (!endpoint) return unexpected("abci address '" + address + "': " + endpoint.error());
    parsed.tcp = std::move(*endpoint);
    return parsed;
}

std::string tcp_text(const tcp::endpoint& endpoint) {
    return HostPort{endpoint.address().to_string(), endpoint.port()}.text();
}

tcp::endpoint as_tcp(const Protocol::endpoint& endpoint) {
    tcp::endpoint out;
    std::memcpy(out.data(), endpoint.data(), endpoint.size());
    out.resize(endpoint.size());
    return out;
}

/// The answer to a request whose application call threw.
pb::Response application_failed(const std::exception& e) {
    pb::Response response;
    response.mutable_exception()->set_error(std::string{"the application failed: "} + e.what());
    return response;
}

/// The socket file a unix:// listener made, removed at stop if it is still that file.
struct SocketFile {
    std::string path;
    dev_t device{};
    ino_t inode{};
};

}  // namespace

struct Server::Impl {
    struct Connection {
        Connection(uint64_t id_, std::string peer_, Protocol::socket socket_)
            : id{id_}, peer{std::move(peer_)}, socket{std::move(socket_)} {}
        const uint64_t id;
        const std::string peer;  // for the log: "127.0.0.1:53012", "unix"
        Protocol::socket socket;
        // stop() shuts the socket down from its thread while the connection's thread may be
        // closing it: this orders the two, so no shutdown reaches a reused descriptor.
        std::mutex close_mutex;
        bool closed{false};
        // Cleared when the connection's thread is done with it (only its log line and closing
        // the socket are left): it no longer counts against the limit, and joining it waits
        // for nothing the peer does.
        std::atomic<bool> serving{true};
        std::thread thread;
    };

    Impl(const ServerConfig& config_, Application& app_, Log log_)
        : config{config_}, app{app_}, log_sink{std::move(log_)} {}

    const ServerConfig config;
    Application& app;
    const Log log_sink;
    std::mutex log_mutex;  // the sink is called from every connection's thread

    asio::io_context io;  // runs only the listener, on accept_thread
    asio::basic_socket_acceptor<Protocol> acceptor{io};
    asio::steady_timer retry_timer{io};
    bool is_tcp{true};
    std::string address;  // resolved
    std::optional<SocketFile> socket_file;
    std::thread accept_thread;

    // Changed by the listener's thread while it runs, then by stop().
    mutable std::mutex connections_mutex;
    std::list<std::unique_ptr<Connection>> connections;
    uint64_t next_id{1};

    std::atomic<bool> stopping{false};
    std::mutex stop_mutex;
    bool stopped{false};

    void log(const std::string& line) {
        if (!log_sink) return;
        std::lock_guard lock{log_mutex};
        log_sink(line);
    }

    Expected<void, std::string> listen(const ParsedAddress& parsed);
    Expected<void, std::string> listen_tcp(const ParsedAddress& parsed);
    Expected<void, std::string> listen_unix(const ParsedAddress& parsed);
    void run_listener();
    void accept_next();
    void accepted(Protocol::socket socket);
    void reap_finished();
    size_t threads() const;
    void serve(Connection& connection);
    /// Serves `connection` until it ends; why it did ("closed by the peer", "closed: <error>").
    std::string exchange(Connection& connection);
    /// Writes `out` and empties it: "" or why the connection closes.
    std::string write(Connection& connection, Bytes& out);
    pb::Response answer(const pb::Request& request);
    std::vector<pb::Response> answer_check_txs(std::span<const pb::Request> requests);
    void stop();
};

Expected<void, std::string> Server::Impl::listen(const ParsedAddress& parsed) {
    return parsed.is_unix ? listen_unix(parsed) : listen_tcp(parsed);
}

Expected<void, std::string> Server::Impl::listen_tcp(const ParsedAddress& parsed) {
    is_tcp = true;
    const std::string& wanted = config.address;
    boost::system::error_code ec;
    tcp::endpoint endpoint;
    const auto ip = asio::ip::make_address(parsed.tcp.host, ec);
    if (!ec) {
        endpoint = tcp::endpoint{ip, parsed.tcp.port};
    } else {
        // A host name (localhost): its first IPv4 address, as Go's net.Listen prefers.
        tcp::resolver resolver{io};
        const auto results = resolver.resolve(parsed.tcp.host, std::to_string(parsed.tcp.port), ec);
        if (ec || results.empty()) {
            return unexpected("cannot listen on " + wanted + ": cannot resolve '" +
                              parsed.tcp.host + "': " + (ec ? ec.message() : "no address"));
        }
        endpoint = results.begin()->endpoint();
        for (const auto& result : results) {
            if (result.endpoint().address().is_v4()) {
                endpoint = result.endpoint();
                break;
            }
        }
    }
    const Protocol::endpoint generic{endpoint};
    if (acceptor.open(generic.protocol(), ec); !ec) {
        // A restarted node binds its port again at once, past the old connections' TIME_WAIT.
        acceptor.set_option(asio::socket_base::reuse_address{true}, ec);
    }
    if (!ec) acceptor.bind(generic, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return unexpected("cannot listen on " + wanted + ": " + ec.message());
    const auto bound = acceptor.local_endpoint(ec);
    if (ec) return unexpected("cannot listen on " + wanted + ": " + ec.message());
    address = "tcp://" + tcp_text(as_tcp(bound));
    return {};
}

Expected<void, std::string> Server::Impl::listen_unix(const ParsedAddress& parsed) {
    is_tcp = false;
    const std::string& path = parsed.path;
    const std::string wanted = "unix://" + path;
    boost::system::error_code ec;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        // A socket file left by a process that died is replaced; anything else at the path is
        // someone's file, and a live socket is another server's.
        if (!S_ISSOCK(st.st_mode)) {
            return unexpected("cannot listen on " + wanted + ": " + path +
                              " exists and is not a socket");
        }
        local::socket probe{io};
        probe.connect(local::endpoint{path}, ec);
        if (!ec) {
            return unexpected("cannot listen on " + wanted +
                              ": another process is listening on it");
        }
        if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
            return unexpected("cannot listen on " + wanted +
                              ": cannot remove the stale socket: " + std::strerror(errno));
        }
    }
    const Protocol::endpoint generic{local::endpoint{path}};
    acceptor.open(generic.protocol(), ec);
    if (!ec) acceptor.bind(generic, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return unexpected("cannot listen on " + wanted + ": " + ec.message());
    if (::lstat(path.c_str(), &st) == 0) socket_file = SocketFile{path, st.st_dev, st.st_ino};
    address = wanted;
    return {};
}

void Server::Impl::run_listener() {
    for (;;) {
        try {
            io.run();  // returns once stop() closed the listener
            return;
        } catch (const std::exception& e) {
            // A handler that threw (no memory for a connection) loses that connection only.
            log(std::string{"abci: accepting a connection failed: "} + e.what());
            accept_next();
        }
    }
}

void Server::Impl::accept_next() {
    acceptor.async_accept([this](const boost::system::error_code& ec, Protocol::socket socket) {
        if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;  // stop()
        if (ec) {
            log("abci: accepting a connection failed: " + ec.message());
            retry_timer.expires_after(kAcceptRetry);
            retry_timer.async_wait([this](const boost::system::error_code& timer_ec) {
                if (!timer_ec && acceptor.is_open()) accept_next();
            });
            return;
        }
        accepted(std::move(socket));
        accept_next();
    });
}

void Server::Impl::reap_finished() {
    std::lock_guard lock{connections_mutex};
    for (auto it = connections.begin(); it != connections.end();) {
        if (!(*it)->serving.load(std::memory_order_acquire)) {
            (*it)->thread.join();
            it = connections.erase(it);
        } else {
            ++it;
        }
    }
}

void Server::Impl::accepted(Protocol::socket socket) {
    // CometBFT reconnects after each restart: the threads of its old connections are joined
    // here rather than kept until stop().
    reap_finished();
    boost::system::error_code ec;
    std::string peer = "unix";
    if (is_tcp) {
        // Go's default, which CometBFT's side has: a response goes out when written.
        socket.set_option(tcp::no_delay{true}, ec);
        const auto remote = socket.remote_endpoint(ec);
        peer = ec ? "tcp" : tcp_text(as_tcp(remote));
    }
    const uint64_t id = next_id++;
    if (const size_t open = threads(); open >= config.max_connections) {
        log("abci: connection " + std::to_string(id) + " from " + peer +
            " refused: " + std::to_string(open) + " connections open, the limit");
        socket.close(ec);
        return;
    }
    auto connection = std::make_unique<Connection>(id, std::move(peer), std::move(socket));
    Connection& c = *connection;
    {
        std::lock_guard lock{connections_mutex};
        connections.push_back(std::move(connection));
    }
    log("abci: connection " + std::to_string(id) + " from " + c.peer + " opened");
    try {
        c.thread = std::thread([this, &c] { serve(c); });
    } catch (const std::exception& e) {
        log("abci: connection " + std::to_string(id) + " closed: no thread for it: " + e.what());
        std::lock_guard lock{connections_mutex};
        connections.pop_back();  // this one: only this thread adds connections
    }
}

size_t Server::Impl::threads() const {
    std::lock_guard lock{connections_mutex};
    return connections.size();
}

pb::Response Server::Impl::answer(const pb::Request& request) {
    // A boundary around every call: an application that throws is answered like one that
    // returned an error, and the server goes on.
    try {
        return dispatch(app, request, config.on_call);
    } catch (const std::exception& e) {
        return application_failed(e);
    }
}

std::vector<pb::Response> Server::Impl::answer_check_txs(std::span<const pb::Request> requests) {
    // The same boundary for a run of CheckTx: if the application throws, no request of the run
    // can be told apart, and each is answered with the exception.
    try {
        return dispatch_check_txs(app, requests, config.on_call);
    } catch (const std::exception& e) {
        return std::vector<pb::Response>(requests.size(), application_failed(e));
    }
}

void Server::Impl::serve(Connection& c) {
    const std::string name = "abci: connection " + std::to_string(c.id);
    std::string ending;  // why it closed, logged unless the server is stopping
    try {
        ending = exchange(c);
    } catch (const std::exception& e) {
        ending = std::string{"failed: "} + e.what();  // no memory for a frame or a response
    }
    c.serving.store(false, std::memory_order_release);
    if (!ending.empty() && !stopping.load()) {
        log(name + " " + ending);  // before the peer sees the close: tests wait on it
    }
    std::lock_guard lock{c.close_mutex};
    boost::system::error_code ec;
    c.socket.close(ec);
    c.closed = true;
}

std::string Server::Impl::exchange(Connection& c) {
    FrameReader reader{config.max_frame_bytes};
    std::vector<uint8_t> chunk(kReadChunk);
    Bytes out;  // the answers since the last write
    // Consecutive CheckTx requests of one read, answered together (Application::check_txs):
    // CometBFT pipelines them and reads no answer before its Flush, which ends a run.
    std::vector<pb::Request> checks;
    boost::system::error_code ec;
    for (;;) {
        const size_t n = c.socket.read_some(asio::buffer(chunk), ec);
        if (ec == asio::error::eof || ec == asio::error::connection_reset) {
            return reader.between_frames() ? "closed by the peer"
                                           : "closed by the peer in the middle of a frame";
        }
        if (ec) return "closed: reading failed: " + ec.message();
        reader.feed({chunk.data(), n});
        bool write_now = false;  // a Flush or an exception was answered
        // Writes what is waiting when it must go (a Flush, an exception) or has grown past the
        // bound; "" or why the connection closes.
        const auto write_if_due = [&]() -> std::string {
            if (!write_now && out.size() <= kWriteEarlyBytes) return {};
            write_now = false;
            return write(c, out);
        };
        const auto answer_checks = [&]() -> std::string {
            if (checks.empty()) return {};
            for (const pb::Response& response : answer_check_txs(checks)) {
                append_frame(response, out);
                write_now = write_now || response.has_exception();
            }
            checks.clear();
            return write_if_due();
        };
        for (;;) {
            auto frame = reader.next();
            if (!frame) return "closed: " + frame.error();
            if (!frame->has_value()) break;  // the rest of the frame is still to come
            auto request = parse_request(**frame);
            if (!request) return "closed: " + request.error();
            const bool is_check = request->has_check_tx();
            if (is_check) {
                checks.push_back(std::move(*request));
                if (checks.size() < kMaxCheckRun) continue;
            }
            if (auto failed = answer_checks(); !failed.empty()) return failed;
            if (!is_check) {
                const pb::Response response = answer(*request);
                append_frame(response, out);
                // The client waits for Flush's answer; an exception is written at once, since
                // CometBFT stops on it and may not flush again.
                write_now = request->has_flush() || response.has_exception();
                if (auto failed = write_if_due(); !failed.empty()) return failed;
            }
        }
        if (auto failed = answer_checks(); !failed.empty()) return failed;
    }
}

std::string Server::Impl::write(Connection& c, Bytes& out) {
    boost::system::error_code ec;
    asio::write(c.socket, asio::buffer(out), ec);
    if (ec) return "closed: writing failed: " + ec.message();
    out.clear();
    if (out.capacity() > kWriteEarlyBytes) Bytes{}.swap(out);
    return {};
}

void Server::Impl::stop() {
    std::lock_guard stop_lock{stop_mutex};
    if (stopped) return;
    stopped = true;
    stopping.store(true);
    if (accept_thread.joinable()) {
        asio::post(io, [this] {
            boost::system::error_code ec;
            acceptor.close(ec);
            retry_timer.cancel();
        });
        accept_thread.join();  // io.run() returns: nothing is pending once the listener closed
    }
    // No connection is accepted any more. A connection's thread blocked in a read or a write
    // returns once its socket is shut down; one inside the application returns when the call
    // does, and then finds the socket shut down.
    std::lock_guard lock{connections_mutex};
    for (auto& c : connections) {
        std::lock_guard close_lock{c->close_mutex};
        if (!c->closed) ::shutdown(c->socket.native_handle(), SHUT_RDWR);
    }
    for (auto& c : connections) c->thread.join();
    connections.clear();
    if (socket_file) {
        struct stat st {};
        if (::lstat(socket_file->path.c_str(), &st) == 0 && st.st_dev == socket_file->device &&
            st.st_ino == socket_file->inode) {
            ::unlink(socket_file->path.c_str());
        }
    }
}

Expected<std::unique_ptr<Server>, std::string> Server::start(const ServerConfig& config,
                                                             Application& app, Log log) {
    auto parsed = parse_address(config.address);
    if (!parsed) return unexpected(parsed.error());
    // protobuf parses messages of at most 2 GiB - 1 (an int), CometBFT's own bound.
    if (config.max_frame_bytes == 0 || config.max_frame_bytes > INT_MAX) {
        return unexpected("abci: the frame limit must be 1 to " + std::to_string(INT_MAX) +
                          " bytes, not " + std::to_string(config.max_frame_bytes));
    }
    if (config.max_connections == 0) {
        return unexpected(std::string{"abci: max_connections must be at least 1"});
    }
    auto impl = std::make_unique<Impl>(config, app, std::move(log));
    try {
        auto listening = impl->listen(*parsed);
        if (!listening) return unexpected(listening.error());
        impl->accept_next();
        impl->accept_thread = std::thread([&i = *impl] { i.run_listener(); });
    } catch (const std::exception& e) {
        impl->stop();  // removes the socket file, if one was made
        return unexpected("cannot listen on " + config.address + ": " + e.what());
    }
    return std::unique_ptr<Server>{new Server{std::move(impl)}};
}

Server::Server(std::unique_ptr<Impl> impl) : m_impl{std::move(impl)} {}

Server::~Server() { stop(); }

void Server::stop() { m_impl->stop(); }

std::string Server::address() const { return m_impl->address; }

size_t Server::threads() const { return m_impl->threads(); }

}  // namespace barrel::abci
