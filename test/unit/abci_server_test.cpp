// The ABCI socket server (src/abci/server.hpp) with a fake application, over TCP and a Unix
// socket, driven by a plain POSIX client that speaks the framing as CometBFT's socket client
// does: requests, then a Flush, then the answers in order.
//
// Nothing waits on time to pass: the client's reads give up after a generous bound only so that
// a broken server fails the test instead of hanging it, and what the server does on its own
// threads is waited for through its log lines. One exception: to tell that the server has stopped
// reading at its bound, a client sends until half a second passes with nothing taken (a slow
// server only makes it send less, which the test allows).

#include "abci/frame.hpp"
#include "abci/server.hpp"
#include "test_files.hpp"
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace barrel;
using namespace barrel::abci;

namespace {

constexpr auto kPatience = std::chrono::seconds{20};  // only a broken server waits this long

/// Answers Info and CheckTx (its code = the transaction's first byte), fails Query, throws on
/// Commit; counts the calls so a test knows how far the server has read.
class FakeApp final : public BaseApplication {
public:
    Answer<pb::ResponseInfo> info(const pb::RequestInfo& request) override {
        called();
        pb::ResponseInfo response;
        response.set_data("fake app for " + request.version());
        response.set_last_block_height(7);
        return response;
    }
    Answer<pb::ResponseQuery> query(const pb::RequestQuery&) override {
        called();
        return unexpected(std::string{"the store failed"});
    }
    Answer<pb::ResponseCheckTx> check_tx(const pb::RequestCheckTx& request) override {
        called();
        {
            // The seam for a slow application: held, it answers nothing until released.
            std::unique_lock lock{m_mutex};
            m_changed.wait_for(lock, kPatience, [&] { return !m_held; });
        }
        if (request.tx() == kThrow) throw std::runtime_error("boom in check_tx");
        pb::ResponseCheckTx response;
        response.set_code(request.tx().empty() ? 0 : static_cast<uint8_t>(request.tx()[0]));
        return response;
    }
    Answer<pb::ResponseCommit> commit(const pb::RequestCommit&) override {
        called();
        throw std::runtime_error("boom");
    }

    std::vector<Answer<pb::ResponseCheckTx>> check_txs(
        std::span<const pb::RequestCheckTx* const> requests) override {
        {
            std::lock_guard lock{m_mutex};
            m_runs.push_back(requests.size());
        }
        return BaseApplication::check_txs(requests);
    }
    /// The sizes of the runs of CheckTx the server handed over, in order.
    std::vector<size_t> runs() {
        std::lock_guard lock{m_mutex};
        return m_runs;
    }
    /// A CheckTx of this transaction throws.
    static constexpr std::string_view kThrow = "\xee";

    /// While held, a CheckTx waits inside the application (once it has counted as a call).
    void hold(bool held) {
        std::lock_guard lock{m_mutex};
        m_held = held;
        m_changed.notify_all();
    }

    /// Waits until the application has been called `n` times in all.
    bool wait_for_calls(size_t n) {
        std::unique_lock lock{m_mutex};
        return m_changed.wait_for(lock, kPatience, [&] { return m_calls >= n; });
    }

private:
    void called() {
        std::lock_guard lock{m_mutex};
        ++m_calls;
        m_changed.notify_all();
    }
    std::mutex m_mutex;
    std::condition_variable m_changed;
    size_t m_calls{0};
    bool m_held{false};
    std::vector<size_t> m_runs;
};

/// The server's log, which tests wait on.
class LogLines {
public:
    Server::Log sink() {
        return [this](std::string_view line) {
            std::lock_guard lock{m_mutex};
            m_lines.emplace_back(line);
            m_changed.notify_all();
        };
    }
    /// Waits for a line containing `text`; the line, or nullopt after kPatience.
    std::optional<std::string> wait_for(const std::string& text) {
        std::unique_lock lock{m_mutex};
        std::optional<std::string> found;
        m_changed.wait_for(lock, kPatience, [&] {
            for (const auto& line : m_lines) {
                if (line.find(text) != std::string::npos) found = line;
            }
            return found.has_value();
        });
        return found;
    }
    size_t count(const std::string& text) {
        std::lock_guard lock{m_mutex};
        size_t n = 0;
        for (const auto& line : m_lines) n += line.find(text) != std::string::npos;
        return n;
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::vector<std::string> m_lines;
};

/// A blocking client on a POSIX socket, with reads bounded by kPatience.
class Client {
public:
    explicit Client(const std::string& address) {
        if (address.starts_with("unix://")) {
            sockaddr_un sa{};
            sa.sun_family = AF_UNIX;
            const std::string path = address.substr(7);
            std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
            m_fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
            if (::connect(m_fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
                throw std::runtime_error("connect " + address + ": " + std::strerror(errno));
        } else {
            const size_t colon = address.rfind(':');
            sockaddr_in sa{};
            sa.sin_family = AF_INET;
            sa.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
            ::inet_pton(AF_INET, address.substr(6, colon - 6).c_str(), &sa.sin_addr);
            m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
            if (::connect(m_fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
                throw std::runtime_error("connect " + address + ": " + std::strerror(errno));
        }
    }
    ~Client() { ::close(m_fd); }
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    void send_raw(BytesView bytes) {
        while (!bytes.empty()) {
            const ssize_t n = ::send(m_fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (n <= 0) throw std::runtime_error(std::string{"send: "} + std::strerror(errno));
            bytes = bytes.subspan(static_cast<size_t>(n));
        }
    }
    /// Sends what the socket takes, waiting at most `patience` each time it takes nothing:
    /// the bytes sent.
    size_t send_while_taken(BytesView bytes, std::chrono::milliseconds patience) {
        size_t sent = 0;
        while (sent < bytes.size()) {
            const ssize_t n =
                ::send(m_fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                sent += static_cast<size_t>(n);
                continue;
            }
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
                throw std::runtime_error(std::string{"send: "} + std::strerror(errno));
            pollfd p{m_fd, POLLOUT, 0};
            if (::poll(&p, 1, static_cast<int>(patience.count())) != 1) break;
        }
        return sent;
    }
    /// Makes the socket's send buffer small: what a client sends beyond it must be read by the
    /// server first, however the system's defaults are set.
    void limit_send_buffer() {
        const int bytes = 16 << 10;  // the kernel doubles it
        if (::setsockopt(m_fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) != 0)
            throw std::runtime_error(std::string{"SO_SNDBUF: "} + std::strerror(errno));
    }
    void send(std::initializer_list<pb::Request> requests) {
        Bytes out;
        for (const auto& request : requests) append_frame(request, out);
        send_raw(out);
    }

    /// The next response; nullopt if the server closed the connection (or kPatience passed).
    std::optional<pb::Response> receive() {
        for (;;) {
            auto frame = m_reader.next();
            if (!frame) throw std::runtime_error("bad frame from the server: " + frame.error());
            if (frame->has_value()) {
                pb::Response response;
                if (!response.ParseFromArray((*frame)->data(), static_cast<int>((*frame)->size())))
                    throw std::runtime_error("a frame that is not a Response");
                return response;
            }
            if (!read_some()) return std::nullopt;
        }
    }

    /// Reads until the server closes: true if it did, with nothing more sent.
    bool closed_by_server() {
        if (!m_reader.between_frames()) return false;
        auto frame = m_reader.next();
        if (!frame || frame->has_value()) return false;
        return !read_some() && m_reader.between_frames() && m_eof;
    }

    /// Bytes the server has sent that were not read yet (0 if none).
    size_t pending() {
        uint8_t byte;
        const ssize_t n = ::recv(m_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        return n > 0 ? static_cast<size_t>(n) : 0;
    }

private:
    bool read_some() {
        pollfd p{m_fd, POLLIN, 0};
        const int ms = static_cast<int>(
            std::chrono::duration_cast<std::chrono::milliseconds>(kPatience).count());
        if (::poll(&p, 1, ms) != 1) return false;  // a hung server: the caller fails
        uint8_t chunk[4096];
        const ssize_t n = ::recv(m_fd, chunk, sizeof chunk, 0);
        if (n <= 0) {
            m_eof = true;
            return false;
        }
        m_reader.feed({chunk, static_cast<size_t>(n)});
        return true;
    }
    int m_fd{-1};
    FrameReader m_reader{1 << 20};
    bool m_eof{false};
};

pb::Request echo_request(const std::string& message) {
    pb::Request request;
    request.mutable_echo()->set_message(message);
    return request;
}
pb::Request flush() {
    pb::Request request;
    request.mutable_flush();
    return request;
}
pb::Request info() {
    pb::Request request;
    request.mutable_info()->set_version("0.38.26");
    return request;
}
pb::Request check_tx(uint8_t first_byte) {
    pb::Request request;
    request.mutable_check_tx()->set_tx(std::string(1, static_cast<char>(first_byte)));
    return request;
}
pb::Request query() {
    pb::Request request;
    request.mutable_query()->set_path("/x");
    return request;
}
pb::Request commit() {
    pb::Request request;
    request.mutable_commit();
    return request;
}

/// Whether the client's next response is CheckTx's, with `code`.
::testing::AssertionResult next_is_check_tx(Client& client, uint32_t code) {
    const auto r = client.receive();
    if (!r || !r->has_check_tx()) return ::testing::AssertionFailure() << "not a CheckTx answer";
    if (r->check_tx().code() != code)
        return ::testing::AssertionFailure() << "code " << r->check_tx().code() << ", not " << code;
    return ::testing::AssertionSuccess();
}

std::unique_ptr<Server> start(const ServerConfig& config, Application& app, LogLines& log) {
    auto server = Server::start(config, app, log.sink());
    if (!server) throw std::runtime_error(server.error());
    return std::move(server).value();
}

/// Echo, Info, CheckTx and Flush in one write, answered in order after the Flush.
void requests_answered_in_order(const std::string& address) {
    FakeApp app;
    LogLines log;
    auto server = start({.address = address}, app, log);
    Client client{server->address()};
    client.send({echo_request("hi"), info(), check_tx(5), flush()});

    auto r = client.receive();
    ASSERT_TRUE(r && r->has_echo());
    EXPECT_EQ(r->echo().message(), "hi");
    r = client.receive();
    ASSERT_TRUE(r && r->has_info());
    EXPECT_EQ(r->info().data(), "fake app for 0.38.26");
    EXPECT_EQ(r->info().last_block_height(), 7);
    EXPECT_TRUE(next_is_check_tx(client, 5u));
    r = client.receive();
    ASSERT_TRUE(r && r->has_flush());
    EXPECT_EQ(client.pending(), 0u);
}

}  // namespace

TEST(abci_server, tcp_requests_answered_in_order) {
    requests_answered_in_order("tcp://127.0.0.1:0");
}

TEST(abci_server, unix_requests_answered_in_order) {
    test::ScratchDir dir;
    requests_answered_in_order("unix://" + dir / "app.sock");
}

TEST(abci_server, tcp_port_0_reports_the_bound_port) {
    FakeApp app;
    LogLines log;
    auto server = start({.address = "tcp://127.0.0.1:0"}, app, log);
    const std::string address = server->address();
    ASSERT_TRUE(address.starts_with("tcp://127.0.0.1:")) << address;
    EXPECT_NE(address, "tcp://127.0.0.1:0");
    EXPECT_GT(std::stoi(address.substr(address.rfind(':') + 1)), 0);
}

TEST(abci_server, a_host_name_is_resolved_to_its_ipv4_address) {
    FakeApp app;
    LogLines log;
    auto server = start({.address = "tcp://localhost:0"}, app, log);
    ASSERT_TRUE(server->address().starts_with("tcp://127.0.0.1:")) << server->address();
    Client client{server->address()};
    client.send({echo_request("by name"), flush()});
    auto r = client.receive();
    ASSERT_TRUE(r && r->has_echo());
}

TEST(abci_server, responses_wait_for_the_flush) {
    FakeApp app;
    LogLines log;
    auto server = start({.address = "tcp://127.0.0.1:0"}, app, log);
    Client client{server->address()};
    client.send({echo_request("a"), check_tx(1), check_tx(2), info()});
    // The application answered Info, so the server has read (and would have written) the
    // answers before it: none was sent, since no Flush came.
    ASSERT_TRUE(app.wait_for_calls(3));
    EXPECT_EQ(client.pending(), 0u);

    client.send({flush()});
    auto r = client.receive();
    ASSERT_TRUE(r && r->has_echo());
    EXPECT_TRUE(next_is_check_tx(client, 1u));
    EXPECT_TRUE(next_is_check_tx(client, 2u));
    r = client.receive();
    ASSERT_TRUE(r && r->has_info());
    r = client.receive();
    ASSERT_TRUE(r && r->has_flush());
}

namespace {

/// A server on a Unix socket in a folder of its own, its application a FakeApp, and a client
/// connected to it.
struct UnixServer {
    explicit UnixServer(size_t max_unanswered_bytes = ServerConfig{}.max_unanswered_bytes)
        : server{start({.address = "unix://" + dir / "app.sock",
                        .max_unanswered_bytes = max_unanswered_bytes},
                       app, log)},
          client{std::make_unique<Client>(server->address())} {}
    test::ScratchDir dir;
    FakeApp app;
    LogLines log;
    std::unique_ptr<Server> server;
    std::unique_ptr<Client> client;
};

}  // namespace

TEST(abci_server, consecutive_check_tx_are_handed_over_as_one_run_across_flushes) {
    // One write reaches the server as one read on a Unix socket, queued at once for the
    // application: what it holds decides the runs.
    UnixServer served;
    FakeApp& app = served.app;
    Client& client = *served.client;
    client.send({check_tx(1), check_tx(2), check_tx(3), echo_request("between"), check_tx(4),
                 check_tx(5), flush(), check_tx(6), flush(), flush(), check_tx(7)});
    for (const uint32_t code : {1u, 2u, 3u}) {
        EXPECT_TRUE(next_is_check_tx(client, code));
    }
    auto r = client.receive();
    ASSERT_TRUE(r && r->has_echo());
    // The Flushes do not end the run: each is answered after the answers before it, and the
    // run's answers go out together.
    for (const uint32_t code : {4u, 5u}) {
        EXPECT_TRUE(next_is_check_tx(client, code));
    }
    r = client.receive();
    ASSERT_TRUE(r && r->has_flush());
    EXPECT_TRUE(next_is_check_tx(client, 6u));
    for (int i = 0; i < 2; ++i) {
        r = client.receive();
        ASSERT_TRUE(r && r->has_flush()) << i;
    }
    EXPECT_TRUE(next_is_check_tx(client, 7u));
    EXPECT_EQ(client.pending(), 0u);
    EXPECT_EQ(app.runs(), (std::vector<size_t>{3, 4}));
}

TEST(abci_server, a_check_tx_after_the_last_flush_waits_for_the_next) {
    UnixServer served;
    FakeApp& app = served.app;
    Client& client = *served.client;
    client.send({check_tx(1), flush(), check_tx(2)});
    EXPECT_TRUE(next_is_check_tx(client, 1u));
    auto r = client.receive();
    ASSERT_TRUE(r && r->has_flush());
    // Answered in the same run, after the Flush's answer was due: written with it.
    EXPECT_TRUE(next_is_check_tx(client, 2u));
    // The application answered Info, so the server has read (and would have written) the
    // CheckTx's answer: none was sent, since no Flush came.
    client.send({check_tx(3), info()});
    ASSERT_TRUE(app.wait_for_calls(4));
    EXPECT_EQ(client.pending(), 0u);
    client.send({flush()});
    EXPECT_TRUE(next_is_check_tx(client, 3u));
    r = client.receive();
    ASSERT_TRUE(r && r->has_info());
    r = client.receive();
    ASSERT_TRUE(r && r->has_flush());
}

namespace {

/// `count` CheckTx frames (codes below 0xee, which throws) with a Flush after each 8th.
Bytes check_txs_with_flushes(size_t count) {
    Bytes out;
    for (size_t i = 0; i < count; ++i) {
        append_frame(check_tx(i % 200), out);
        if (i % 8 == 7) append_frame(flush(), out);
    }
    append_frame(flush(), out);
    return out;
}

/// Reads the answers to check_txs_with_flushes(count), in order.
void expect_check_txs_with_flushes(Client& client, size_t count) {
    for (size_t i = 0; i < count; ++i) {
        ASSERT_TRUE(next_is_check_tx(client, i % 200)) << i;
        if (i % 8 == 7) {
            const auto r = client.receive();
            ASSERT_TRUE(r && r->has_flush()) << i;
        }
    }
    const auto r = client.receive();
    ASSERT_TRUE(r && r->has_flush());
}

}  // namespace

namespace {

/// A server on a Unix socket whose application is held inside a CheckTx (code 9, a Flush after
/// it): what the client sends meanwhile is up to the connection's reader alone.
struct HeldServer : UnixServer {
    explicit HeldServer(size_t max_unanswered_bytes = ServerConfig{}.max_unanswered_bytes)
        : UnixServer{max_unanswered_bytes} {
        client->limit_send_buffer();
        app.hold(true);
        client->send({check_tx(9), flush()});
        held = app.wait_for_calls(1);  // inside the application, held
    }
    /// Releases the application and reads the answers to the held CheckTx and to
    /// check_txs_with_flushes(count) sent after it.
    void release_and_expect(size_t count) {
        app.hold(false);
        EXPECT_TRUE(next_is_check_tx(*client, 9u));
        const auto r = client->receive();
        EXPECT_TRUE(r && r->has_flush());
        expect_check_txs_with_flushes(*client, count);
    }
    bool held{false};  ///< the application was called, and is held
};

constexpr auto kPatienceMs = std::chrono::duration_cast<std::chrono::milliseconds>(kPatience);

}  // namespace

TEST(abci_server, the_socket_is_read_while_the_application_answers) {
    // A client that writes far more than its socket holds while the application is inside a
    // call is never blocked: the server reads on (what CometBFT's socket client needs, see
    // ServerConfig::max_unanswered_bytes).
    HeldServer held;
    ASSERT_TRUE(held.held);
    constexpr size_t kCount = 20'000;  // 127 KB, against the client's 32 KiB send buffer
    const Bytes more = check_txs_with_flushes(kCount);
    EXPECT_EQ(held.client->send_while_taken(more, kPatienceMs), more.size());
    held.release_and_expect(kCount);
    // Runs of what was queued, cut at their bound: never one per Flush.
    const std::vector<size_t> runs = held.app.runs();
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(runs.front(), 1u);
    EXPECT_LT(runs.size(), 1 + kCount / 8);
}

TEST(abci_server, a_reader_stops_at_the_bound_on_unanswered_requests_and_goes_on_after) {
    constexpr size_t kBound = 64 << 10;
    HeldServer held{kBound};
    ASSERT_TRUE(held.held);
    Client& client = *held.client;
    constexpr size_t kCount = 100'000;  // 637 KB: 6-byte CheckTx frames, a 3-byte Flush per 8
    const Bytes more = check_txs_with_flushes(kCount);
    // Twice what the client's socket holds: taken only if the server reads it (waited for as
    // long as a broken server may take). Below the bound, which counts frames without their
    // length prefix (5 of 6 bytes).
    size_t sent = client.send_while_taken(BytesView{more}.first(kBound), kPatienceMs);
    ASSERT_EQ(sent, kBound);
    // Then the server stops reading: what is sent after that fills the socket and no more.
    sent +=
        client.send_while_taken(BytesView{more}.subspan(kBound), std::chrono::milliseconds{500});
    // The bound in wire bytes (6/5 of it), one 64 KiB read past it, and the client's 32 KiB
    // send buffer: 173 KiB. Without the bound, all 637 KB.
    EXPECT_LT(sent, kBound * 6 / 5 + (64u << 10) + (48u << 10));
    // Released, it reads the rest while the answers are read (the client's socket holds only
    // so many of them).
    size_t rest = 0;
    std::thread sender{[&] {
        try {
            rest = client.send_while_taken(BytesView{more}.subspan(sent), kPatienceMs);
        } catch (const std::exception&) {
            // The server closed: `rest` falls short, and the test fails below.
        }
    }};
    held.release_and_expect(kCount);
    sender.join();
    EXPECT_EQ(sent + rest, more.size());
}

TEST(abci_server, stop_while_the_application_is_inside_a_call_asks_it_nothing_more) {
    // The answerer inside the application with requests queued and no answer due (no Flush),
    // the reader at its bound: stop() wakes the reader, and once the call returns nothing more
    // is asked of the application.
    UnixServer served{64 << 10};
    FakeApp& app = served.app;
    Client& client = *served.client;
    client.limit_send_buffer();
    app.hold(true);
    client.send({check_tx(9)});
    ASSERT_TRUE(app.wait_for_calls(1));
    Bytes more;
    for (size_t i = 0; i < 100'000; ++i) append_frame(check_tx(i % 200), more);
    client.send_while_taken(more, std::chrono::milliseconds{500});
    // The call is released once stop() has shut the connection down (the client sees it close).
    std::thread releaser{[&] {
        EXPECT_TRUE(client.closed_by_server());
        app.hold(false);
    }};
    served.server->stop();
    releaser.join();
    EXPECT_EQ(served.server->threads(), 0u);
    EXPECT_EQ(app.runs(), (std::vector<size_t>{1}));
}

TEST(abci_server, a_run_is_cut_at_its_bound) {
    UnixServer served;
    FakeApp& app = served.app;
    Client& client = *served.client;
    Bytes out;
    // Codes below 0xee, which throws.
    for (size_t i = 0; i < kMaxCheckRun + 6; ++i) append_frame(check_tx(i % 200), out);
    append_frame(flush(), out);
    client.send_raw(out);
    for (size_t i = 0; i < kMaxCheckRun + 6; ++i) {
        ASSERT_TRUE(next_is_check_tx(client, i % 200)) << i;
    }
    auto r = client.receive();
    ASSERT_TRUE(r && r->has_flush());
    EXPECT_EQ(app.runs(), (std::vector<size_t>{kMaxCheckRun, 6}));
}

TEST(abci_server, a_run_of_check_tx_that_throws_is_answered_with_the_exception_each_at_once) {
    UnixServer served;
    FakeApp& app = served.app;
    Client& client = *served.client;
    pb::Request throwing;
    throwing.mutable_check_tx()->set_tx(std::string{FakeApp::kThrow});
    client.send({echo_request("before"), check_tx(1), throwing, check_tx(2)});
    // No Flush: CometBFT stops on an exception and may not send one.
    auto r = client.receive();
    ASSERT_TRUE(r && r->has_echo());
    for (int i = 0; i < 3; ++i) {
        r = client.receive();
        ASSERT_TRUE(r && r->has_exception()) << i;
        EXPECT_EQ(r->exception().error(), "the application failed: boom in check_tx");
    }
    EXPECT_EQ(app.runs(), (std::vector<size_t>{3}));
    // The connection goes on.
    client.send({check_tx(7), flush()});
    EXPECT_TRUE(next_is_check_tx(client, 7u));
}

TEST(abci_server, an_application_error_is_answered_as_an_exception) {
    FakeApp app;
    LogLines log;
    auto server = start({.address = "tcp://127.0.0.1:0"}, app, log);
    Client client{server->address()};
    client.send({query(), flush()});
    auto r = client.receive();
    ASSERT_TRUE(r && r->has_exception());
    EXPECT_EQ(r->exception().error(), "the store failed");
    r = client.receive();
    ASSERT_TRUE(r && r->has_flush());
}

TEST(abci_server, an_application_that_throws_is_answered_as_an_exception) {
    FakeApp app;
    LogLines log;
    auto server = start({.address = "tcp://127.0.0.1:0"}, app, log);
    Client client{server->address()};
    client.send({commit(), flush(), echo_request("still here"), flush()});
    auto r = client.receive();
    ASSERT_TRUE(r && r->has_exception());
    EXPECT_EQ(r->exception().error(), "the application failed: boom");
    r = client.receive();
    ASSERT_TRUE(r && r->has_flush());
    r = client.receive();
    ASSERT_TRUE(r && r->has_echo());
    EXPECT_EQ(r->echo().message(), "still here");
}

TEST(abci_server, an_exception_is_written_without_waiting_for_a_flush) {
    // CometBFT stops on an exception; it is sent at once, with what was answered before it.
    FakeApp app;
    LogLines log;
    auto server = start({.address = "tcp://127.0.0.1:0"}, app, log);
    Client client{server->address()};
    client.send({echo_request("before"), query()});
    auto r = client.receive();
    ASSERT_TRUE(r && r->has_echo());
    r = client.receive();
    ASSERT_TRUE(r && r->has_exception());
}

TEST(abci_server, a_bad_frame_closes_its_connection_and_the_others_go_on) {
    struct Case {
        Bytes bytes;
        std::string error;
    };
    Bytes garbage{0x03, 0xff, 0xff, 0xff};
    const std::vector<Case> cases{
        {{0x89, 0x27}, "frame of 5001 bytes exceeds the limit of 4096"},
        {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
         "frame of 18446744073709551615 bytes exceeds the limit of 4096"},
        {Bytes(10, 0xff), "frame length: a varint longer than 10 bytes"},
        {garbage, "a frame of 3 bytes that is not a Request"},
        {{0x00}, "a Request with no value"},
    };
    FakeApp app;
    LogLines log;
    auto server = start({.address = "tcp://127.0.0.1:0", .max_frame_bytes = 4096}, app, log);
    Client good{server->address()};
    for (size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE(cases[i].error);
        Client bad{server->address()};
        bad.send({echo_request("answered before the bad frame")});
        bad.send_raw(cases[i].bytes);
        // Connection 1 is `good`; the bad ones are 2, 3, ...
        const std::string expected =
            "abci: connection " + std::to_string(i + 2) + " closed: " + cases[i].error;
        const auto line = log.wait_for(expected);
        ASSERT_TRUE(line.has_value()) << expected;
        EXPECT_EQ(*line, expected);
        EXPECT_TRUE(bad.closed_by_server());

        good.send({echo_request("good " + std::to_string(i)), flush()});
        auto r = good.receive();
        ASSERT_TRUE(r && r->has_echo());
        EXPECT_EQ(r->echo().message(), "good " + std::to_string(i));
        ASSERT_TRUE(good.receive()->has_flush());
    }
}

TEST(abci_server, a_peer_that_closes_mid_frame_is_closed) {
    FakeApp app;
    LogLines log;
    auto server = start({.address = "tcp://127.0.0.1:0"}, app, log);
    {
        Client client{server->address()};
        Bytes frame;
        append_frame(echo_request("cut short"), frame);
        frame.resize(frame.size() - 2);
        client.send_raw(frame);
    }
    EXPECT_TRUE(log.wait_for("abci: connection 1 closed by the peer in the middle of a frame"));
    {
        Client client{server->address()};
        client.send({echo_request("x"), flush()});
        ASSERT_TRUE(client.receive().has_value());
    }
    EXPECT_TRUE(log.wait_for("abci: connection 2 closed by the peer"));
    EXPECT_EQ(log.count("middle of a frame"), 1u);
}

TEST(abci_server, stop_with_idle_connections_returns) {
    for (const bool by_destructor : {false, true}) {
        FakeApp app;
        LogLines log;
        auto server = start({.address = "tcp://127.0.0.1:0"}, app, log);
        Client idle{server->address()};
        Client mid_frame{server->address()};
        mid_frame.send_raw(Bytes{0x10, 0x12});  // 16 bytes announced, 1 sent
        Client answered{server->address()};
        answered.send({echo_request("x"), flush()});
        ASSERT_TRUE(answered.receive().has_value());
        ASSERT_TRUE(answered.receive().has_value());
        Client unflushed{server->address()};
        unflushed.send({echo_request("never flushed")});
        ASSERT_TRUE(log.wait_for("abci: connection 4 from 127.0.0.1:"));
        if (by_destructor) {
            server.reset();
        } else {
            server->stop();
            server->stop();  // a second stop does nothing
        }
        EXPECT_TRUE(idle.closed_by_server());
        EXPECT_TRUE(mid_frame.closed_by_server());
        EXPECT_TRUE(answered.closed_by_server());
        EXPECT_TRUE(unflushed.closed_by_server());
        EXPECT_EQ(log.count("closed"), 0u);  // stopping is not the connections' fault
    }
}

TEST(abci_server, stop_while_writing_to_a_client_that_does_not_read_returns) {
    FakeApp app;
    LogLines log;
    auto server = start({.address = "tcp://127.0.0.1:0"}, app, log);
    Client client{server->address()};
    // An answer of 16 MiB, more than the sockets' buffers hold while the client reads nothing:
    // the server's thread blocks writing it, until stop() shuts the socket down.
    pb::Request big = info();
    big.mutable_info()->set_version(std::string(16u << 20, 'v'));
    client.send({big, flush()});
    ASSERT_TRUE(app.wait_for_calls(1));
    server->stop();
    EXPECT_EQ(server->threads(), 0u);
}

TEST(abci_server, connections_that_come_and_go_are_joined) {
    // More connections one after another than may be open at once: the finished ones' threads
    // are joined as new ones arrive, and none is refused.
    FakeApp app;
    LogLines log;
    auto server = start({.address = "tcp://127.0.0.1:0", .max_connections = 2}, app, log);
    for (int i = 1; i <= 12; ++i) {
        {
            Client client{server->address()};
            client.send({echo_request(std::to_string(i)), flush()});
            auto r = client.receive();
            ASSERT_TRUE(r && r->has_echo());
            EXPECT_EQ(r->echo().message(), std::to_string(i));
        }
        ASSERT_TRUE(log.wait_for("abci: connection " + std::to_string(i) + " closed by the peer"));
        // Every earlier connection was joined when this one arrived.
        EXPECT_LE(server->threads(), 1u);
    }
    EXPECT_EQ(log.count("refused"), 0u);
    Client last{server->address()};
    ASSERT_TRUE(log.wait_for("abci: connection 13 from"));
    EXPECT_EQ(server->threads(), 1u);  // the 12th joined, the 13th serving
}

TEST(abci_server, a_connection_over_the_limit_is_refused) {
    FakeApp app;
    LogLines log;
    auto server = start({.address = "tcp://127.0.0.1:0", .max_connections = 2}, app, log);
    Client first{server->address()};
    Client second{server->address()};
    ASSERT_TRUE(log.wait_for("abci: connection 2 from"));
    Client third{server->address()};
    EXPECT_TRUE(third.closed_by_server());
    const auto line = log.wait_for("abci: connection 3 from 127.0.0.1:");
    ASSERT_TRUE(line.has_value());
    EXPECT_TRUE(line->ends_with(" refused: 2 connections open, the limit")) << *line;
    first.send({echo_request("one"), flush()});
    EXPECT_TRUE(first.receive().has_value());
}

TEST(abci_server, a_stale_unix_socket_is_replaced_and_removed_at_stop) {
    test::ScratchDir dir;
    const std::string path = dir / "app.sock";
    {
        // A socket file left by a server that died: bound, never removed.
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
        ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
        ::close(fd);
    }
    ASSERT_TRUE(std::filesystem::is_socket(path));
    FakeApp app;
    LogLines log;
    auto server = start({.address = "unix://" + path}, app, log);
    EXPECT_EQ(server->address(), "unix://" + path);
    {
        Client client{server->address()};
        client.send({echo_request("u"), flush()});
        ASSERT_TRUE(client.receive().has_value());
    }
    server->stop();
    EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(abci_server, a_unix_path_that_is_a_regular_file_is_an_error) {
    test::ScratchDir dir;
    const std::string path = dir.write("app.sock", as_bytes("not a socket"));
    FakeApp app;
    auto server = Server::start({.address = "unix://" + path}, app, {});
    ASSERT_FALSE(server.has_value());
    EXPECT_EQ(server.error(),
              "cannot listen on unix://" + path + ": " + path + " exists and is not a socket");
    EXPECT_EQ(test::read_text(path), "not a socket");  // left as it was
}

TEST(abci_server, a_unix_path_another_server_listens_on_is_an_error) {
    test::ScratchDir dir;
    const std::string path = dir / "app.sock";
    FakeApp app;
    LogLines log;
    auto first = start({.address = "unix://" + path}, app, log);
    auto second = Server::start({.address = "unix://" + path}, app, {});
    ASSERT_FALSE(second.has_value());
    EXPECT_EQ(second.error(),
              "cannot listen on unix://" + path + ": another process is listening on it");
    Client client{first->address()};  // the first one still serves
    client.send({echo_request("first"), flush()});
    EXPECT_TRUE(client.receive().has_value());
}

TEST(abci_server, malformed_addresses) {
    FakeApp app;
    const std::string usage = ": expected tcp://HOST:PORT or unix://PATH";
    struct Case {
        std::string address, error;
    };
    const std::vector<Case> cases{
        {"", "abci address ''" + usage},
        {"127.0.0.1:26658", "abci address '127.0.0.1:26658'" + usage},
        {"http://127.0.0.1:26658", "abci address 'http://127.0.0.1:26658'" + usage},
        {"tcp://127.0.0.1", "abci address 'tcp://127.0.0.1': expected HOST:PORT, got '127.0.0.1'"},
        {"tcp://:26658", "abci address 'tcp://:26658': expected HOST:PORT, got ':26658'"},
        {"tcp://::1:26658",
         "abci address 'tcp://::1:26658': an IPv6 address goes in brackets "
         "([::1]:PORT), got '::1:26658'"},
        {"unix://", "abci address 'unix://'" + usage},
        {"tcp://127.0.0.1:65536",
         "abci address 'tcp://127.0.0.1:65536': the port must be a "
         "number from 0 to 65535, got '127.0.0.1:65536'"},
        {"tcp://127.0.0.1:x",
         "abci address 'tcp://127.0.0.1:x': the port must be a number "
         "from 0 to 65535, got '127.0.0.1:x'"},
        {"tcp://127.0.0.1:",
         "abci address 'tcp://127.0.0.1:': the port must be a number from "
         "0 to 65535, got '127.0.0.1:'"},
        {"unix:///" + std::string(120, 'a'), "abci address 'unix:///" + std::string(120, 'a') +
                                                 "': a Unix socket path has at most 107 bytes"},
    };
    for (const auto& c : cases) {
        auto server = Server::start({.address = c.address}, app, {});
        ASSERT_FALSE(server.has_value()) << c.address;
        EXPECT_EQ(server.error(), c.error);
    }
}

TEST(abci_server, limits_out_of_range) {
    FakeApp app;
    auto zero = Server::start({.address = "tcp://127.0.0.1:0", .max_frame_bytes = 0}, app, {});
    ASSERT_FALSE(zero.has_value());
    EXPECT_EQ(zero.error(), "abci: the frame limit must be 1 to 2147483647 bytes, not 0");
    auto huge =
        Server::start({.address = "tcp://127.0.0.1:0", .max_frame_bytes = 1ull << 31}, app, {});
    ASSERT_FALSE(huge.has_value());
    EXPECT_EQ(huge.error(), "abci: the frame limit must be 1 to 2147483647 bytes, not 2147483648");
    auto unread =
        Server::start({.address = "tcp://127.0.0.1:0", .max_unanswered_bytes = 0}, app, {});
    ASSERT_FALSE(unread.has_value());
    EXPECT_EQ(unread.error(), "abci: max_unanswered_bytes must be at least 1");
    auto none = Server::start({.address = "tcp://127.0.0.1:0", .max_connections = 0}, app, {});
    ASSERT_FALSE(none.has_value());
    EXPECT_EQ(none.error(), "abci: max_connections must be at least 1");
}

TEST(abci_server, a_port_in_use_is_an_error) {
    FakeApp app;
    LogLines log;
    auto first = start({.address = "tcp://127.0.0.1:0"}, app, log);
    auto second = Server::start({.address = first->address()}, app, {});
    ASSERT_FALSE(second.has_value());
    EXPECT_EQ(second.error(), "cannot listen on " + first->address() + ": Address already in use");
}
