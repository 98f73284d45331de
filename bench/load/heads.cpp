#include "heads.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <thread>

namespace barrel::load {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

}  // namespace

// Every operation is asynchronous on a context of the watcher's own, run by the watcher's
// thread only while it waits: a deadline is then a bound on that run, and a read still pending
// when wait() gives up stays pending for the next wait, so no notification is lost between two.
struct HeadSignal::Impl {
    Impl(const HttpUrl& node, Protocol kind) : url{node}, protocol{kind} {}
    ~Impl() { close(); }

    /// Connects, upgrades and subscribes; on any failure (or kOpenTimeout) nothing is left open.
    void open() {
        close();
        last_try = Clock::now();
        const auto deadline = last_try + kOpenTimeout;
        ws.emplace(ioc);
        beast::error_code ec;
        tcp::resolver resolver{ioc};
        const auto endpoints =
            resolver.resolve(url.endpoint.host, std::to_string(url.endpoint.port), ec);
        if (ec) return close();
        start([&] {
            asio::async_connect(ws->next_layer(), endpoints,
                                [this](beast::error_code e, const tcp::endpoint&) { finish(e); });
        });
        if (!run_until(deadline)) return close();
        start([&] {
            const std::string target = protocol == Protocol::cometbft ? "/websocket" : url.target;
            ws->async_handshake(url.endpoint.text(), target,
                                [this](beast::error_code e) { finish(e); });
        });
        if (!run_until(deadline)) return close();
        request =
            protocol == Protocol::cometbft
                ? R"({"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"query":"tm.event='NewBlockHeader'"}})"
                : R"({"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]})";
        start([&] {
            ws->async_write(asio::buffer(request),
                            [this](beast::error_code e, size_t) { finish(e); });
        });
        if (!run_until(deadline)) return close();
        start([&] { ws->async_read(buffer, [this](beast::error_code e, size_t) { finish(e); }); });
        if (!run_until(deadline)) return close();
        // The subscription's answer: a result (eth: its id; CometBFT: {}), never an error.
        const auto answer = nlohmann::json::parse(beast::buffers_to_string(buffer.data()), nullptr,
                                                  /*allow_exceptions=*/false);
        buffer.consume(buffer.size());
        if (!answer.is_object() || !answer.contains("result") || answer.contains("error"))
            return close();
        subscribed = true;
        ++subscriptions;
    }

    void close() {
        subscribed = false;
        if (!ws) return;
        beast::error_code ignored;
        ws->next_layer().close(ignored);  // a pending operation ends, operation_aborted
        ioc.restart();
        ioc.run();
        ws.reset();
        buffer.consume(buffer.size());
        pending = false;
    }

    template <class Start>
    void start(Start&& begin) {
        pending = true;
        failed = false;
        begin();
    }
    void finish(beast::error_code e) {
        pending = false;
        failed = static_cast<bool>(e);
    }
    /// Runs the context until the pending operation ends or `deadline`; whether it succeeded.
    bool run_until(Clock::time_point deadline) {
        ioc.restart();
        while (pending && Clock::now() < deadline) ioc.run_one_until(deadline);
        return !pending && !failed;
    }

    HttpUrl url;
    Protocol protocol;
    asio::io_context ioc;
    std::optional<websocket::stream<tcp::socket>> ws;
    beast::flat_buffer buffer;
    std::string request;  ///< the subscription's, alive while it is written
    bool pending{false};  ///< an operation was started and has not ended
    bool failed{false};   ///< how the last one ended
    bool subscribed{false};
    Clock::time_point last_try{};
    size_t heads{0};
    size_t subscriptions{0};
};

HeadSignal::HeadSignal(const HttpUrl& url, Protocol protocol)
    : m_impl{std::make_unique<Impl>(url, protocol)} {
    m_impl->open();
}

HeadSignal::~HeadSignal() = default;

bool HeadSignal::wait(std::chrono::milliseconds timeout, std::chrono::milliseconds poll) {
    Impl& s = *m_impl;
    if (!s.subscribed && Clock::now() - s.last_try >= kReopenAfter) s.open();
    if (!s.subscribed) {
        std::this_thread::sleep_for(poll);
        return false;
    }
    if (!s.pending)
        s.start([&] {
            s.ws->async_read(s.buffer, [&s](beast::error_code e, size_t) { s.finish(e); });
        });
    if (s.pending) {
        const auto deadline = Clock::now() + timeout;
        s.ioc.restart();
        while (s.pending && Clock::now() < deadline) s.ioc.run_one_until(deadline);
        if (s.pending) return false;  // still waiting: the read carries over to the next wait
    }
    if (s.failed) {  // the node closed it (stopped, restarted): polled until a new one is open
        s.close();
        s.last_try = Clock::now();
        return false;
    }
    s.buffer.consume(s.buffer.size());
    ++s.heads;
    return true;
}

bool HeadSignal::subscribed() const noexcept { return m_impl->subscribed; }

size_t HeadSignal::heads() const noexcept { return m_impl->heads; }

size_t HeadSignal::subscriptions() const noexcept { return m_impl->subscriptions; }

}  // namespace barrel::load
