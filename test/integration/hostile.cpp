// barrel-hostile: an honest client's latency while hostile clients load a barrel-node of its own
// (docs/rpc.md, "Fairness under hostile load"). It fills the chain with full blocks, then runs at
// once: batches of full blocks and of eth_feeHistory(1,024 blocks), clients that send batches
// and never read, idle and dribbling connections past the connection limit, and a pool flood.
// Once every one of those is in progress, an honest client times eth_blockNumber and
// eth_sendRawTransaction in windows of --seconds: in one of --windows windows both p99s must stay
// under --bound-ms, with no error, and its transactions must be mined. Exit 0 if so, 1 if not
// (--report-only: 0 once measured).

#include <barrel/core/hex.hpp>
#include <barrel/gen/transfer.hpp>
#include <barrel/gen/workload.hpp>
#include <barrel/tx/transaction.hpp>

#include "common/args.hpp"
#include "common/stats.hpp"
#include "load.hpp"
#include "node_process.hpp"
#include <boost/asio.hpp>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace barrel::load {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr uint64_t kSeed = 7;
constexpr size_t kAccounts = 2000;
constexpr size_t kBlockTxs = 2500;

struct Args {
    std::string node;
    double seconds{4};
    size_t windows{3};
    double bound_ms{100};
    size_t fill_blocks{8};
    size_t idle{300}, dribbling{300};
    bool report_only{false};
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) throw bench::Failure{2, arg + " needs a value"};
            return argv[++i];
        };
        if (arg == "--node")
            a.node = next();
        else if (arg == "--seconds")
            a.seconds = std::stod(next());
        else if (arg == "--windows")
            a.windows = std::stoul(next());
        else if (arg == "--bound-ms")
            a.bound_ms = std::stod(next());
        else if (arg == "--fill-blocks")
            a.fill_blocks = std::stoul(next());
        else if (arg == "--idle")
            a.idle = std::stoul(next());
        else if (arg == "--dribbling")
            a.dribbling = std::stoul(next());
        else if (arg == "--report-only")
            a.report_only = true;
        else
            throw bench::Failure{2, "unknown argument " + arg};
    }
    return a;
}

void raise_open_files_limit() {
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

std::string call_text(size_t id, const std::string& method, const json& params) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump();
}

std::string batch_of(size_t n, const std::function<std::string(size_t)>& call) {
    std::string body = "[";
    for (size_t i = 0; i < n; ++i) body += (i ? "," : "") + call(i);
    return body + "]";
}

std::string post_request(const HttpUrl& url, const std::string& body) {
    return "POST " + url.target + " HTTP/1.1\r\nHost: " + url.endpoint.text() +
           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
}

/// Idle and dribbling connections, all on one thread: each reconnects whenever the node
/// closes it, so that there are always this many trying to hold a place.
class Squatters {
public:
    Squatters(const HttpUrl& url, size_t idle, size_t dribbling)
        : m_endpoint{asio::ip::make_address(url.endpoint.host == "localhost" ? "127.0.0.1"
                                                                             : url.endpoint.host),
                     url.endpoint.port} {
        for (size_t i = 0; i < idle + dribbling; ++i) open(i >= idle);
        m_thread = std::thread{[this] { m_ioc.run(); }};
    }
    ~Squatters() {
        m_ioc.stop();
        m_thread.join();
    }
    size_t connected() const { return m_connected.load(); }
    size_t closed_by_node() const { return m_closed.load(); }

private:
    struct Conn {
        explicit Conn(asio::io_context& ioc) : socket{ioc}, timer{ioc} {}
        tcp::socket socket;
        asio::steady_timer timer;
        char byte{};
        bool dribbling{false};
    };

    void open(bool dribbling) {
        auto c = std::make_shared<Conn>(m_ioc);
        c->dribbling = dribbling;
        c->socket.async_connect(m_endpoint, [this, c](boost::system::error_code ec) {
            if (ec) return retry(c);
            ++m_connected;
            // Wait for the node to close it (it never answers a request that never comes).
            c->socket.async_read_some(asio::buffer(&c->byte, 1),
                                      [this, c](boost::system::error_code, size_t) {
                                          ++m_closed;
                                          c->timer.cancel();
                                          retry(c);
                                      });
            if (c->dribbling) dribble(c, 0);
        });
    }

    /// A header a byte every 200 ms: it never ends.
    void dribble(const std::shared_ptr<Conn>& c, size_t sent) {
        static const std::string kHeader = "POST / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ";
        const char byte = sent < kHeader.size() ? kHeader[sent] : 'a';
        boost::system::error_code ec;
        c->socket.write_some(asio::buffer(&byte, 1), ec);
        if (ec) return;
        c->timer.expires_after(std::chrono::milliseconds{200});
        c->timer.async_wait([this, c, sent](boost::system::error_code wait_ec) {
            if (!wait_ec) dribble(c, sent + 1);
        });
    }

    void retry(const std::shared_ptr<Conn>& c) {
        boost::system::error_code ignored;
        c->socket.close(ignored);
        auto timer = std::make_shared<asio::steady_timer>(m_ioc, std::chrono::milliseconds{50});
        timer->async_wait([this, timer, dribbling = c->dribbling](boost::system::error_code) {
            open(dribbling);
        });
    }

    asio::io_context m_ioc;
    tcp::endpoint m_endpoint;
    std::atomic<size_t> m_connected{0}, m_closed{0};
    std::thread m_thread;
};

/// A client that sends batches with big answers on a few connections and never reads them.
class NeverReaders {
public:
    NeverReaders(const HttpUrl& url, size_t connections, size_t head) {
        const tcp::endpoint to{
            asio::ip::make_address(url.endpoint.host == "localhost" ? "127.0.0.1"
                                                                    : url.endpoint.host),
            url.endpoint.port};
        const std::string body = batch_of(1000, [&](size_t i) {
            return call_text(i, "eth_getBlockByNumber", {to_hex_quantity(1 + i % head), false});
        });
        const std::string request = post_request(url, body);
        for (size_t i = 0; i < connections; ++i) {
            m_sockets.emplace_back(m_ioc);
            m_sockets.back().connect(to);
            // Pipelined: three requests at once, none of whose answers is ever read.
            for (int k = 0; k < 3; ++k) {
                boost::system::error_code ec;
                m_sockets.back().non_blocking(true);
                asio::write(m_sockets.back(), asio::buffer(request), ec);
            }
        }
    }

private:
    asio::io_context m_ioc;
    std::list<tcp::socket> m_sockets;
};

struct Latencies {
    std::vector<double> block_number_ms, send_ms;
    size_t errors{0};
    std::string first_error;
};

double p(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return bench::percentile_of_sorted(v, q);
}

bool window_ok(const Latencies& w, double bound_ms) {
    return w.errors == 0 && !w.block_number_ms.empty() && !w.send_ms.empty() &&
           p(w.block_number_ms, 0.99) < bound_ms && p(w.send_ms, 0.99) < bound_ms;
}

std::string figures(const std::string& what, const std::vector<double>& ms) {
    char line[200];
    std::snprintf(line, sizeof line, "%-24s n=%zu p50=%.1f ms p99=%.1f ms max=%.1f ms",
                  what.c_str(), ms.size(), p(ms, 0.5), p(ms, 0.99),
                  ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end()));
    return line;
}

int run(const Args& a) {
    raise_open_files_limit();
    gen::Options o;
    o.seed = kSeed;
    o.accounts = kAccounts;
    o.txs = kBlockTxs;
    auto genesis = gen::generate_genesis(o);
    if (!genesis) throw bench::Failure{1, genesis.error()};
    std::vector<Address> recipients;
    for (const auto& [address, account] : genesis->alloc.accounts) recipients.push_back(address);

    // The fill (full blocks) and the flood, from senders 0..499; the honest client is the last
    // account, alone.
    Config fill_config;
    fill_config.txs = a.fill_blocks * kBlockTxs;
    fill_config.senders = 500;
    fill_config.batch = 1000;
    fill_config.connections = 2;
    std::cerr << "barrel-hostile: signing " << 2 * fill_config.txs << " transfers...\n";
    const Workload fill = prepare(fill_config, kSeed, genesis->config.chain_id, recipients,
                                  std::vector<uint64_t>(fill_config.senders, 0));
    const Workload flood =
        prepare(fill_config, kSeed, genesis->config.chain_id, recipients,
                std::vector<uint64_t>(fill_config.senders, fill_config.txs / fill_config.senders));

    NodeProcess node{find_node(a.node),
                     *genesis,
                     {"--block-time", "200", "--max-block-txs", std::to_string(kBlockTxs),
                      "--txpool-max-pending", "200000", "--txpool-max-queued", "200000",
                      "--txpool-max-per-sender", "4096", "--txpool-max-queued-per-sender", "4096"}};
    const HttpUrl url = node.url();
    std::cerr << "barrel-hostile: node at " << url.text() << "; filling " << a.fill_blocks
              << " blocks\n";
    {
        std::vector<std::thread> senders;
        for (size_t c = 0; c < fill.bodies.size(); ++c)
            senders.emplace_back([&, c] {
                HttpConnection conn{url};
                for (const auto& body : fill.bodies[c]) conn.post(body);
            });
        for (auto& t : senders) t.join();
        HttpConnection conn{url};
        const auto deadline = Clock::now() + std::chrono::seconds{60};
        while (quantity(conn.call("txpool_status", json::array())["pending"], "pending") > 0) {
            if (Clock::now() > deadline) throw bench::Failure{1, "the fill was not mined"};
            std::this_thread::sleep_for(std::chrono::milliseconds{50});
        }
    }
    std::optional<HttpConnection> probe{std::in_place, url};
    const size_t head = quantity(probe->call("eth_blockNumber", json::array()), "head");
    std::cerr << "barrel-hostile: head " << head << "; starting the hostile clients\n";

    std::atomic<bool> stop{false};
    std::atomic<size_t> heavy_started{0}, heavy_answers{0}, heavy_errors{0};
    std::vector<std::thread> hostile;
    const std::string blocks_batch = batch_of(40, [&](size_t i) {
        return call_text(i, "eth_getBlockByNumber", {to_hex_quantity(1 + i % head), true});
    });
    const std::string fee_batch = batch_of(300, [&](size_t i) {
        return call_text(i, "eth_feeHistory", {"0x400", "latest", {10, 50, 90}});
    });
    for (const std::string* body : {&blocks_batch, &blocks_batch, &fee_batch, &fee_batch})
        hostile.emplace_back([&, body] {
            bool counted = false;
            while (!stop) {
                try {
                    HttpConnection conn{url};
                    while (!stop) {
                        if (!counted) {
                            counted = true;
                            ++heavy_started;
                        }
                        conn.post(*body);
                        ++heavy_answers;
                    }
                } catch (...) {
                    ++heavy_errors;
                }
            }
        });
    hostile.emplace_back([&] {  // the pool flood
        try {
            HttpConnection conn{url};
            for (size_t b = 0; b < flood.bodies[0].size() && !stop; ++b)
                for (size_t c = 0; c < flood.bodies.size() && !stop; ++c)
                    conn.post(flood.bodies[c][b]);
        } catch (...) {
            ++heavy_errors;
        }
    });
    NeverReaders never_readers{url, 4, head};
    Squatters squatters{url, a.idle, a.dribbling};
    // Every hostile situation in progress before the clock starts.
    const auto ready_by = Clock::now() + std::chrono::seconds{30};
    while (heavy_started < 4 || squatters.connected() < a.idle + a.dribbling) {
        if (Clock::now() > ready_by) throw bench::Failure{1, "the hostile clients did not start"};
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{200});

    // The honest client: eth_blockNumber every 5 ms, and a transfer every fourth round, for
    // --windows windows of --seconds each. A window meets the bound or not as a whole; one is
    // enough, so that a spike of some other process's load on a shared machine does not fail the
    // run (the code this guards against misses every window by seconds, or gets 503s).
    const size_t answers_before = heavy_answers.load();
    const Hash key = gen::account_key(kSeed, kAccounts - 1);
    const Address me = *tx::address_of(key);
    uint64_t nonce = quantity(probe->call("eth_getTransactionCount", {to_hex(me), "pending"}), "n");
    std::optional<HttpConnection> conn;
    std::vector<Latencies> windows;
    std::vector<std::string> hashes;
    for (size_t w = 0; w < a.windows; ++w) {
        Latencies& honest = windows.emplace_back();
        const auto end = Clock::now() + std::chrono::duration<double>(a.seconds);
        for (size_t round = 0; Clock::now() < end; ++round) {
            const bool send = round % 4 == 0;
            std::string raw;
            if (send) {
                raw = to_hex(
                    gen::signed_transfer({.key = key,
                                          .to = recipients.front(),
                                          .nonce = nonce,
                                          .chain_id = genesis->config.chain_id,
                                          .fee_cap = genesis->config.base_fee + 10'000'000'000ull,
                                          .tip = 5'000'000'000ull}));
            }
            const auto t0 = Clock::now();
            try {
                if (!conn) conn.emplace(url);
                if (send) {
                    const json hash = conn->call("eth_sendRawTransaction", {raw});
                    hashes.push_back(hash.get<std::string>());
                    ++nonce;
                } else {
                    conn->call("eth_blockNumber", json::array());
                }
                const double ms =
                    std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                (send ? honest.send_ms : honest.block_number_ms).push_back(ms);
            } catch (const bench::Failure& f) {
                if (honest.errors++ == 0) honest.first_error = f.message;
                conn.reset();
            } catch (const std::exception& e) {
                if (honest.errors++ == 0) honest.first_error = e.what();
                conn.reset();
            }
            std::this_thread::sleep_for(std::chrono::milliseconds{5});
        }
        if (window_ok(honest, a.bound_ms)) break;
    }
    const size_t heavy_during = heavy_answers.load() - answers_before;
    const size_t squatters_closed = squatters.closed_by_node();
    stop = true;
    for (auto& t : hostile) t.join();

    // The honest transactions mined?
    size_t mined = 0;
    const auto mined_by = Clock::now() + std::chrono::seconds{30};
    for (const auto& h : hashes) {
        for (;;) {
            json receipt;
            try {
                receipt = probe->call("eth_getTransactionReceipt", {h});
            } catch (...) {
                probe.emplace(url);
            }
            if (!receipt.is_null() && receipt.contains("status")) {
                mined += receipt["status"] == "0x1";
                break;
            }
            if (Clock::now() > mined_by) break;
            std::this_thread::sleep_for(std::chrono::milliseconds{50});
        }
    }

    std::cout << "barrel-hostile: honest calls under 2 x 40 full blocks, 2 x 300 "
              << "eth_feeHistory(1024), 4 never-reading clients, " << a.idle << " idle + "
              << a.dribbling << " dribbling connections and a pool flood\n";
    bool any_window_ok = false;
    size_t errors = 0;
    for (size_t w = 0; w < windows.size(); ++w) {
        const Latencies& honest = windows[w];
        const bool ok = window_ok(honest, a.bound_ms);
        any_window_ok = any_window_ok || ok;
        errors += honest.errors;
        std::cout << "  window " << w + 1 << " (" << a.seconds << " s): " << (ok ? "ok" : "over")
                  << "\n    " << figures("eth_blockNumber", honest.block_number_ms) << "\n    "
                  << figures("eth_sendRawTransaction", honest.send_ms) << "\n    errors "
                  << honest.errors << (honest.errors ? " (first: " + honest.first_error + ")" : "")
                  << "\n";
    }
    std::cout << "  honest transactions mined " << mined << " of " << hashes.size() << "\n"
              << "  hostile: " << heavy_during << " heavy batches answered meanwhile, "
              << squatters_closed << " idle/dribbling connections closed by the node, "
              << heavy_errors.load() << " heavy-client errors\n";
    node.stop();
    if (a.report_only) return 0;
    const bool ok = any_window_ok && errors == 0 && mined == hashes.size() && heavy_during > 0;
    std::cout << (ok ? "PASS" : "FAIL") << ": p99 bound " << a.bound_ms << " ms\n";
    return ok ? 0 : 1;
}

}  // namespace
}  // namespace barrel::load

int main(int argc, char** argv) {
    try {
        return barrel::load::run(barrel::load::parse(argc, argv));
    } catch (const barrel::bench::Failure& f) {
        std::cerr << "barrel-hostile: " << f.message << "\n";
        return f.status;
    } catch (const std::exception& e) {
        std::cerr << "barrel-hostile: " << e.what() << "\n";
        return 1;
    }
}
