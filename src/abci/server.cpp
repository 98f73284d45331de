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
#include <condition_variable>
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

const pb::Request& flush_request() {
    static const pb::Request request = [] {
        pb::Request flush;
        flush.mutable_flush();
        return flush;
    }();
    return request;
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

    /// A request read, with the bytes of its frame.
    struct Queued {
        pb::Request request;
        size_t bytes;
    };
    /// What a connection's reader hands its answerer: two threads per connection, so that the
    /// socket is read while the application answers (ServerConfig::max_unanswered_bytes).
    struct Inbox {
        std::mutex mutex;
        std::condition_variable changed;    // requests queued or answered, reader or answerer done
        std::vector<Queued> requests;       // read, not yet taken
        size_t bytes{0};                    // the frames read and not yet answered
        std::optional<std::string> ending;  // set when the reader stopped: why
        bool answerer_done{false};
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
    /// The connection's reader: reads and parses requests into `inbox` until the peer closes,
    /// sends a malformed frame or the answerer is done, then sets the inbox's ending.
    void read_requests(Connection& connection, Inbox& inbox);
    /// Why the reader stopped ("closed by the peer", "closed: <error>"; "" if the answerer was
    /// done first).
    std::string read_until_done(Connection& connection, Inbox& inbox);
    /// Counts `answered` bytes of frames as answered (and zeroes it), then moves what the reader
    /// has queued into `work` (empty), waiting for some if `wait`; the reader's ending once it
    /// has stopped and nothing is left.
    static std::optional<std::string> take(Inbox& inbox, std::vector<Queued>& work,
                                           size_t& answered, bool wait);
    /// Answers what the reader queues until the connection ends; why it did.
    std::string answer_requests(Connection& connection, Inbox& inbox);
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
    Inbox inbox;
    std::thread reader;
    std::string ending;  // why it closed, logged unless the server is stopping
    try {
        reader = std::thread([this, &c, &inbox] { read_requests(c, inbox); });
        ending = answer_requests(c, inbox);
    } catch (const std::exception& e) {
        ending = std::string{"failed: "} + e.what();  // no memory for a response, no thread
    }
    if (reader.joinable()) {
        bool reader_done = false;
        {
            std::lock_guard lock{inbox.mutex};
            inbox.answerer_done = true;  // a reader waiting for room stops
            reader_done = inbox.ending.has_value();
            inbox.changed.notify_all();
        }
        if (!reader_done) {
            // A reader blocked in a read returns. Nothing is sent: on TCP the peer sees nothing
            // of it, on a Unix socket its further sends fail (the connection closes anyway).
            std::lock_guard lock{c.close_mutex};
            if (!c.closed) ::shutdown(c.socket.native_handle(), SHUT_RD);
        }
        reader.join();
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

void Server::Impl::read_requests(Connection& c, Inbox& inbox) {
    std::string ending;
    try {
        ending = read_until_done(c, inbox);
    } catch (const std::exception& e) {
        ending = std::string{"failed: "} + e.what();  // no memory for a frame or a request
    }
    std::lock_guard lock{inbox.mutex};
    inbox.ending = std::move(ending);
    inbox.changed.notify_all();
}

std::string Server::Impl::read_until_done(Connection& c, Inbox& inbox) {
    FrameReader reader{config.max_frame_bytes};
    std::vector<uint8_t> chunk(kReadChunk);
    std::vector<Queued> parsed;  // the requests of one read
    boost::system::error_code ec;
    for (;;) {
        {
            std::unique_lock lock{inbox.mutex};
            inbox.changed.wait(lock, [&] {
                return inbox.bytes < config.max_unanswered_bytes || inbox.answerer_done;
            });
            if (inbox.answerer_done) return {};
        }
        const size_t n = c.socket.read_some(asio::buffer(chunk), ec);
        if (ec == asio::error::eof || ec == asio::error::connection_reset) {
            return reader.between_frames() ? "closed by the peer"
                                           : "closed by the peer in the middle of a frame";
        }
        if (ec) return "closed: reading failed: " + ec.message();
        reader.feed({chunk.data(), n});
        std::string malformed;
        for (;;) {
            auto frame = reader.next();
            if (!frame) {
                malformed = "closed: " + frame.error();
                break;
            }
            if (!frame->has_value()) break;  // the rest of the frame is still to come
            auto request = parse_request(**frame);
            if (!request) {
                malformed = "closed: " + request.error();
                break;
            }
            parsed.push_back({std::move(*request), (*frame)->size()});
        }
        if (!parsed.empty()) {
            std::lock_guard lock{inbox.mutex};
            for (Queued& queued : parsed) {
                inbox.bytes += queued.bytes;
                inbox.requests.push_back(std::move(queued));
            }
            inbox.changed.notify_all();
        }
        parsed.clear();
        // The requests before a malformed frame are answered, as if read one by one.
        if (!malformed.empty()) return malformed;
    }
}

std::optional<std::string> Server::Impl::take(Inbox& inbox, std::vector<Queued>& work,
                                              size_t& answered, bool wait) {
    std::unique_lock lock{inbox.mutex};
    inbox.bytes -= answered;
    answered = 0;
    inbox.changed.notify_all();  // a reader waiting for room reads on
    if (wait) {
        inbox.changed.wait(lock, [&] { return !inbox.requests.empty() || inbox.ending; });
    }
    work.swap(inbox.requests);
    if (work.empty() && inbox.ending) return inbox.ending;
    return std::nullopt;
}

std::string Server::Impl::answer_requests(Connection& c, Inbox& inbox) {
    std::vector<Queued> work;  // taken from the inbox, answered in order from `next`
    size_t next = 0;
    size_t answered = 0;  // bytes of frames answered since the last take
    Bytes out;            // the answers since the last write
    // A run: consecutive CheckTx requests, answered together (Application::check_txs), with the
    // Flushes among them. CometBFT's client flushes after nearly every CheckTx when it can (its
    // flush timer waits 20 ns), so a run that ended at each Flush would be a request or two; a
    // Flush's answer instead goes out after the run's answers before it, in order, which is all
    // a Flush promises, and the run goes on.
    std::vector<pb::Request> checks;
    std::vector<size_t> flushes;  // for each Flush in the run, the CheckTx requests before it
    size_t run_bytes = 0;         // the frames of the run's requests
    bool write_now = false;       // a Flush or an exception was answered
    // Writes what is waiting when it must go (a Flush, an exception) or has grown past the
    // bound; "" or why the connection closes.
    const auto write_if_due = [&]() -> std::string {
        if (!write_now && out.size() <= kWriteEarlyBytes) return {};
        write_now = false;
        return write(c, out);
    };
    const auto answer_run = [&]() -> std::string {
        const std::vector<pb::Response> responses = answer_check_txs(checks);
        size_t flush = 0;
        for (size_t i = 0; i <= responses.size(); ++i) {
            for (; flush < flushes.size() && flushes[flush] == i; ++flush) {
                append_frame(answer(flush_request()), out);
                write_now = true;
            }
            if (i == responses.size()) break;
            append_frame(responses[i], out);
            write_now = write_now || responses[i].has_exception();
        }
        checks.clear();
        flushes.clear();
        answered += run_bytes;
        run_bytes = 0;
        return write_if_due();
    };
    for (;;) {
        // Once the server stops, nothing more is asked of the application.
        if (stopping.load(std::memory_order_relaxed)) return {};
        if (next == work.size()) {
            work.clear();
            next = 0;
            // A run goes on with what was read meanwhile, and is answered once nothing was.
            const auto ending = take(inbox, work, answered, checks.empty());
            if (work.empty()) {
                if (!checks.empty()) {
                    if (auto failed = answer_run(); !failed.empty()) return failed;
                    continue;
                }
                if (ending) return *ending;
                continue;
            }
        }
        Queued& queued = work[next++];
        pb::Request& request = queued.request;
        if (request.has_check_tx() || (request.has_flush() && !checks.empty())) {
            run_bytes += queued.bytes;
            if (request.has_check_tx()) {
                checks.push_back(std::move(request));
            } else {
                flushes.push_back(checks.size());
            }
            // The bound counts the Flushes too: their answers wait in the run.
            if (checks.size() + flushes.size() < kMaxCheckRun) continue;
            if (auto failed = answer_run(); !failed.empty()) return failed;
            continue;
        }
        if (!checks.empty()) {
            if (auto failed = answer_run(); !failed.empty()) return failed;
        }
        const pb::Response response = answer(request);
        answered += queued.bytes;
        append_frame(response, out);
        // The client waits for Flush's answer; an exception is written at once, since
        // CometBFT stops on it and may not flush again.
        write_now = request.has_flush() || response.has_exception();
        if (auto failed = write_if_due(); !failed.empty()) return failed;
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
    // No connection is accepted any more. A connection's reader or answerer blocked in a read
    // or a write returns once its socket is shut down; an answerer inside the application
    // returns when the call does, and then asks the application nothing more (`stopping`).
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
    if (config.max_unanswered_bytes == 0) {
        return unexpected(std::string{"abci: max_unanswered_bytes must be at least 1"});
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
