#include "net_load.hpp"

#include <barrel/core/base64.hpp>

#include "common/args.hpp"
#include "common/stats.hpp"
#include "net_shared.hpp"
#include "node_process.hpp"
#include "responses.hpp"
#include "ticker.hpp"

#include <cstdio>
#include <functional>
#include <iostream>
#include <thread>

namespace barrel::load {

using net::Clock;
using net::seconds;
using net::Shared;

namespace {
using bench::fail;
}  // namespace

// ---- The workloads ---------------------------------------------------------------------------

std::string kv_transaction(size_t i, size_t size) {
    char key[32];
    std::snprintf(key, sizeof key, "k%012zu=", i);
    std::string tx{key};
    const size_t length = std::max(size, tx.size() + 1);
    for (size_t k = 0; tx.size() < length; ++k) tx += static_cast<char>('a' + k % 26);
    return tx;
}

NetWorkload barrel_workload(const Workload& base) {
    NetWorkload w;
    w.base = &base;
    return w;
}

NetWorkload kv_workload(const Workload& base) {
    NetWorkload w;
    w.app = App::kvstore;
    w.base = &base;
    const size_t n = base.hashes.size();
    w.kv_base64.resize(n);
    for (size_t i = 0; i < n; ++i) w.kv_base64[i] = base64(kv_transaction(i, base.sizes[i]));
    w.kv_index.reserve(n);
    for (size_t i = 0; i < n; ++i) w.kv_index.emplace(w.kv_base64[i], static_cast<uint32_t>(i));
    w.kv_bodies = batch_bodies(base.schedule, [&](uint32_t i) {
        return R"("method":"broadcast_tx_async","params":{"tx":")" + w.kv_base64[i] + "\"}";
    });
    return w;
}

std::string_view perturbation_name(Perturbation p) noexcept {
    switch (p) {
        case Perturbation::kill: return "kill";
        case Perturbation::pause: return "pause";
        case Perturbation::disconnect: return "disconnect";
        case Perturbation::partition: return "partition";
    }
    return "?";
}

std::optional<Perturbation> parse_perturbation(std::string_view name) noexcept {
    for (const auto p : {Perturbation::kill, Perturbation::pause, Perturbation::disconnect,
                         Perturbation::partition})
        if (name == perturbation_name(p)) return p;
    return std::nullopt;
}

namespace {

// ---- Sending ---------------------------------------------------------------------------------

/// Whether a refusal means a node has the transaction already: a batch sent again after its node
/// failed finds what reached a node before.
bool already_there(App app, const std::string& message) {
    if (app == App::kvstore) return message.starts_with("tx already exists in cache");
    return message.starts_with("already known") || message.starts_with("nonce too low");
}

/// One connection's node, moved to the next node when it fails.
struct Route {
    const std::vector<HttpUrl>& urls;
    size_t node;
    std::unique_ptr<HttpConnection> conn;

    /// What a post got: the answer, from which node, and whether the batch was sent before (to
    /// a node that failed: what reached it may be there already).
    struct Posted {
        std::string body;
        size_t node{0};
        bool again{false};
    };

    /// Posts `body` to the node, or to the next ones in turn while it fails, until `give_up`.
    Posted post(const std::string& body, Shared& sh, std::chrono::seconds give_up) {
        const auto deadline = Clock::now() + give_up;
        for (size_t tries = 0;; ++tries) {
            try {
                if (!conn) conn = std::make_unique<HttpConnection>(urls[node]);
                return {conn->post(body), node, tries > 0};
            } catch (const bench::Failure& f) {
                conn.reset();
                if (sh.stop.load() || Clock::now() > deadline) throw;
                node = (node + 1) % urls.size();
                // A whole round of nodes refused: wait a little before the next round.
                if ((tries + 1) % urls.size() == 0)
                    std::this_thread::sleep_for(std::chrono::milliseconds{100});
            }
        }
    }
};

/// Counts one batch's answers; `again`: the batch was sent before, to a node that failed.
void take_answers(const NetWorkload& w, const std::vector<SendAnswer>& answers, size_t node,
                  bool again, Shared& sh, std::map<std::string, size_t>& rejections) {
    size_t accepted = 0, rejected = 0;
    for (const SendAnswer& a : answers) {
        const bool ok = !a.error || (again && already_there(w.app, *a.error));
        if (ok && w.app == App::barrel && !a.error && (!a.hash || *a.hash != w.base->hashes[a.id]))
            ++rejections["(answered with another hash)"];
        if (sh.outcome[a.id] == net::kAccepted) continue;  // counted when first sent
        if (ok) {
            sh.outcome[a.id] = net::kAccepted;
            sh.sent_to[a.id] = static_cast<uint8_t>(node);
            ++accepted;
        } else if (sh.outcome[a.id] == net::kUnanswered) {
            sh.outcome[a.id] = net::kRejected;
            ++rejections[a.error->substr(0, a.error->find(": "))];
            ++rejected;
        }
    }
    sh.accepted.fetch_add(accepted);
    sh.rejected.fetch_add(rejected);
}

/// Waits for pacing and the window before a batch of `size`; false if the run stops.
bool wait_turn(const Config& config, size_t size, Clock::time_point t0, Shared& sh) {
    if (config.rate > 0) {
        const size_t k = sh.claimed.fetch_add(size);
        std::this_thread::sleep_until(
            t0 + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(static_cast<double>(k) / config.rate)));
    }
    std::unique_lock lock{sh.mutex};
    if (config.window > 0)
        sh.changed.wait(lock, [&] {
            const size_t done = sh.mined_max() + sh.rejected.load();
            const size_t outstanding = sh.dispatched > done ? sh.dispatched - done : 0;
            return sh.stop.load() || outstanding + size <= config.window || outstanding == 0;
        });
    if (sh.stop.load()) return false;
    sh.dispatched += size;
    return true;
}

void send_batches(const Config& config, const NetWorkload& w, size_t c, Route& route,
                  Clock::time_point t0, Shared& sh, net::SenderStats& stats) {
    const auto& batches = w.base->schedule[c];
    ResponseReader reader;
    std::vector<uint8_t> seen;
    for (size_t b = 0; b < batches.size(); ++b) {
        const Batch& batch = batches[b];
        if (!wait_turn(config, batch.size(), t0, sh)) return;
        const auto sent = Clock::now();
        if (!stats.first_send) stats.first_send = sent;
        for (const uint32_t i : batch) sh.send_time[i] = sent;
        const auto posted = route.post(w.bodies()[c][b], sh, config.stall);
        stats.last_answer = Clock::now();
        const auto answers = w.app == App::barrel
                                 ? reader.send_answers(posted.body, batch.size())
                                 : reader.broadcast_answers(posted.body, batch.size());
        const char* method =
            w.app == App::barrel ? "eth_sendRawTransaction: " : "broadcast_tx_async: ";
        if (!answers) fail(method + answers.error());
        if (auto wrong = check_answer_ids(*answers, batch, seen)) fail(method + *wrong);
        take_answers(w, *answers, posted.node, posted.again, sh, stats.rejections);
        sh.answered.fetch_add(batch.size());
        sh.moved();
    }
}

}  // namespace

std::vector<std::thread> net::start_senders(const Config& config, const NetWorkload& w,
                                            const std::vector<HttpUrl>& urls,
                                            std::optional<size_t> via, Clock::time_point t0,
                                            Shared& sh, std::vector<SenderStats>& stats,
                                            std::vector<std::unique_ptr<HttpConnection>> opened) {
    const size_t connections = w.base->schedule.size();
    stats.assign(connections, {});
    opened.resize(connections);
    sh.senders_left.store(connections);
    std::vector<std::thread> threads;
    for (size_t c = 0; c < connections; ++c)
        // t0, via and the connection by value: they are this call's, which returns first.
        threads.emplace_back([&, c, via, t0, conn = std::move(opened[c])]() mutable {
            Route route{urls, via.value_or(c % urls.size()), std::move(conn)};
            try {
                send_batches(config, w, c, route, t0, sh, stats[c]);
            } catch (...) {
                sh.fail_with(std::current_exception());
            }
            sh.senders_left.fetch_sub(1);
        });
    return threads;
}

std::vector<HttpUrl> net::app_urls(const std::vector<NetNode>& nodes, App app) {
    std::vector<HttpUrl> urls;
    for (const NetNode& n : nodes)
        urls.push_back(app == App::barrel ? *n.json_rpc : n.cometbft_rpc);
    return urls;
}

namespace {

// ---- The processes' CPU and memory -----------------------------------------------------------

/// CPU seconds of each node's processes over the run, from their pid files: a process started
/// during the run (a restart) counts from its start, one running at the first sample from there.
class ProcessMeter {
public:
    explicit ProcessMeter(const std::vector<NetNode>& nodes) : m_nodes{nodes} {
        m_cpu.resize(2 * nodes.size());
        m_rss.resize(2 * nodes.size());
        m_pid.resize(2 * nodes.size());
        m_mid.resize(2 * nodes.size());
        sample(true);
    }

    /// The RSS of each process now, as the middle of the run (the first call counts).
    void mark_middle() {
        if (m_mid_marked) return;
        m_mid_marked = true;
        for (size_t slot = 0; slot < m_mid.size(); ++slot)
            if (m_pid[slot] && m_rss[slot]) m_mid[slot] = {*m_pid[slot], *m_rss[slot]};
    }

    void sample(bool first = false) {
        for (size_t k = 0; k < m_nodes.size(); ++k)
            for (size_t kind = 0; kind < 2; ++kind) {
                const testnet::Node& n = m_nodes[k].layout;
                const auto pid = kind == 0 ? testnet::barrel_pid(n) : testnet::cometbft_pid(n);
                if (!pid) continue;
                const auto cpu = process_cpu_seconds(*pid);
                if (!cpu) continue;
                auto& per_pid = m_cpu[2 * k + kind];
                auto [it, added] = per_pid.try_emplace(*pid, first ? *cpu : 0.0, *cpu);
                it->second.second = *cpu;
                if (const auto rss = process_rss_mib(*pid)) {
                    m_rss[2 * k + kind] = *rss;
                    m_pid[2 * k + kind] = *pid;
                }
            }
    }

    std::vector<NodeUsage> usage() const {
        std::vector<NodeUsage> out(m_nodes.size());
        for (size_t k = 0; k < m_nodes.size(); ++k) {
            auto total = [&](size_t kind) -> std::optional<double> {
                const auto& per_pid = m_cpu[2 * k + kind];
                if (per_pid.empty()) return std::nullopt;
                double sum = 0;
                for (const auto& [pid, span] : per_pid) sum += span.second - span.first;
                return sum;
            };
            auto middle = [&](size_t slot) -> std::optional<double> {
                const auto& mid = m_mid[slot];
                if (!mid || m_pid[slot] != mid->first) return std::nullopt;
                return mid->second;
            };
            NodeUsage& u = out[k];
            u.barrel_cpu_s = total(0);
            u.cometbft_cpu_s = total(1);
            u.barrel_rss_mib = m_rss[2 * k];
            u.cometbft_rss_mib = m_rss[2 * k + 1];
            u.barrel_rss_mid_mib = middle(2 * k);
            u.cometbft_rss_mid_mib = middle(2 * k + 1);
        }
        return out;
    }

private:
    const std::vector<NetNode>& m_nodes;
    std::vector<std::map<pid_t, std::pair<double, double>>> m_cpu;  ///< per pid: first, last
    std::vector<std::optional<double>> m_rss;
    std::vector<std::optional<pid_t>> m_pid;  ///< the process last sampled, per slot
    std::vector<std::optional<std::pair<pid_t, double>>> m_mid;
    bool m_mid_marked{false};
};

// ---- The fault and the progress line ---------------------------------------------------------

/// Starts config.fault's perturbation at its time and ends it at its own; records both instants.
void run_fault(const NetConfig& config, Network& net, Clock::time_point t0, Shared& sh,
               NetRunResult& r) {
    const FaultPlan& f = config.fault;
    auto wait_until = [&](Clock::time_point at) {
        std::unique_lock lock{sh.mutex};
        return !sh.finished.wait_until(lock, at, [&] { return sh.stop.load(); });
    };
    std::string what = "node " + std::to_string(*f.node);
    if (*f.kind == Perturbation::partition) {
        what = "nodes";
        for (size_t i : f.side) what += " " + std::to_string(i);
    }
    auto say = [&](const char* done, double at) {
        std::cerr << "barrel-load: " << what << " " << done << " at "
                  << static_cast<int>(at * 10) / 10.0 << " s\n";
    };
    // What starts and ends the perturbation, and what the log says of each.
    std::function<void()> start, end;
    const char *started = "", *ended = "";
    switch (*f.kind) {
        case Perturbation::kill:
            start = [&] { net.kill(*f.node); };
            end = [&] { net.restart(*f.node); };
            started = "killed (SIGKILL)", ended = "restarted";
            break;
        case Perturbation::pause:
            start = [&] { net.pause(*f.node); };
            end = [&] { net.resume(); };
            started = "paused (SIGSTOP)", ended = "resumed (SIGCONT)";
            break;
        case Perturbation::disconnect:
            start = [&] { net.isolate({*f.node}); };
            end = [&] { net.heal(); };
            started = "cut off from its peers", ended = "reconnected";
            break;
        case Perturbation::partition:
            start = [&] { net.isolate(f.side); };
            end = [&] { net.heal(); };
            started = "partitioned from the rest", ended = "healed";
            break;
    }
    if (!wait_until(t0 + f.kill_after)) return;
    const auto begun = Clock::now();
    r.killed_at_s = seconds(begun - t0);
    start();
    say(started, *r.killed_at_s);
    // A killed node stays down if the run ends first (as before); a paused or cut-off one is
    // given back however the run ends: its processes would stay stopped, its links cut.
    if (!wait_until(begun + f.restart_after) && *f.kind == Perturbation::kill) return;
    r.restarted_at_s = seconds(Clock::now() - t0);
    end();
    say(ended, *r.restarted_at_s);
}

/// Samples the timeline every 100 ms and the processes and a progress line every second.
void watch_progress(const std::string& label, size_t n, Clock::time_point t0, Shared& sh,
                    ProcessMeter& meter, const std::atomic<bool>& done, NetRunResult& r) {
    size_t last = 0;
    auto sample = [&] {
        const double t = seconds(Clock::now() - t0);
        const size_t answered = sh.answered.load(), everywhere = sh.mined_min();
        r.timeline.push_back({t, static_cast<double>(answered), static_cast<double>(everywhere),
                              static_cast<double>(sh.mined_max())});
        return std::tuple{t, answered, everywhere};
    };
    auto print = [&](double t, size_t answered, size_t everywhere) {
        std::string heights;
        for (const auto& s : sh.seen) heights += " " + std::to_string(s->height.load());
        char line[256];
        std::snprintf(line, sizeof line,
                      "barrel-load: %s: %.0f s: sent %zu/%zu (%zu rejected), mined on every node "
                      "%zu, %zu TPS in the last second; heights%s\n",
                      label.c_str(), t, answered, n, sh.rejected.load(), everywhere,
                      everywhere - last, heights.c_str());
        std::cerr << line << std::flush;
        last = everywhere;
    };
    tick_every_100ms(sh.mutex, sh.finished, done, t0, [&](size_t tick) {
        const auto [t, answered, everywhere] = sample();
        if (tick % 10 != 0) return;
        meter.sample();
        if (2 * everywhere >= n) meter.mark_middle();
        print(t, answered, everywhere);
    });
    const auto [t, answered, everywhere] = sample();
    meter.sample();
    print(t, answered, everywhere);
}

/// A thread running `body`, whose exception stops the run (rethrown by run_network_load).
std::thread guarded(Shared& sh, std::function<void()> body) {
    return std::thread{[&sh, body = std::move(body)] {
        try {
            body();
        } catch (...) {
            sh.fail_with(std::current_exception());
        }
    }};
}

/// The run's threads from the first send until every watcher is done: the connections, a
/// watcher per node, the progress line, the fault.
void run_threads(const NetConfig& config, const NetWorkload& w, Network& net, Clock::time_point t0,
                 Shared& sh, ProcessMeter& meter, NetRunResult& r,
                 std::vector<net::SenderStats>& stats) {
    const auto urls = net::app_urls(net.nodes(), w.app);
    auto senders = net::start_senders(config.load, w, urls, config.via, t0, sh, stats);
    std::vector<std::thread> watchers;
    for (size_t k = 0; k < urls.size(); ++k)
        watchers.push_back(
            guarded(sh, [&, k] { net::watch_node(config.load, w, urls[k], k, 1, sh); }));
    std::atomic<bool> done{false};
    std::thread progress{[&] { watch_progress(config.load.label, r.txs, t0, sh, meter, done, r); }};
    std::thread fault;
    if (config.fault.kind) fault = guarded(sh, [&] { run_fault(config, net, t0, sh, r); });
    for (auto& t : watchers) t.join();
    sh.end(done);
    for (auto& t : senders) t.join();
    progress.join();
    if (fault.joinable()) fault.join();
    if (sh.error) std::rethrow_exception(sh.error);
}

}  // namespace

NetRunResult run_network_load(const NetConfig& config, const NetWorkload& w, Network& net) {
    NetRunResult r;
    r.app = w.app;
    r.validators = net.nodes().size();
    r.txs = w.size();
    r.killed_node = config.fault.node;
    r.perturbation = config.fault.kind;
    bench::RecoverRates ceiling;
    ceiling.sample(w.base->recover_loop, config.load.ceiling_threads);

    Shared sh{r.txs, net.nodes().size()};
    ProcessMeter meter{net.nodes()};
    std::vector<net::SenderStats> stats;
    const double self_cpu_before = self_cpu_seconds();
    const auto t0 = Clock::now();
    sh.moved();
    run_threads(config, w, net, t0, sh, meter, r, stats);
    r.generator_cpu_s = self_cpu_seconds() - self_cpu_before;
    r.nodes = meter.usage();
    for (size_t k = 0; k < r.nodes.size() && k < sh.seen.size(); ++k) {
        r.nodes[k].watcher_asks = static_cast<double>(sh.seen[k]->asks);
        r.nodes[k].heads_pushed = static_cast<double>(sh.seen[k]->heads_pushed);
        r.nodes[k].subscriptions = static_cast<double>(sh.seen[k]->subscriptions);
    }
    Clock::time_point last{};
    for (const auto& s : stats) {
        for (const auto& [message, count] : s.rejections) r.rejections[message] += count;
        last = std::max(last, s.last_answer);
    }
    r.submit_seconds = seconds(last - t0);
    r.submit_tps = r.submit_seconds > 0 ? static_cast<double>(r.txs) / r.submit_seconds : 0;
    net::summarise(w, sh, t0, r);
    // The rounds from a node that was not perturbed (its store has every height).
    net::read_rounds(net.nodes()[config.fault.node == size_t{0} ? 1 % r.validators : 0], r);
    if (w.app == App::barrel) r.proposals_rejected = net::proposals_rejected(net.nodes());

    ceiling.sample(w.base->recover_loop, config.load.ceiling_threads);
    r.ceiling_tps = bench::median(ceiling.all_threads);
    r.ceiling_per_node_tps = r.ceiling_tps / static_cast<double>(r.validators);
    r.ceiling_ratio = r.ceiling_per_node_tps > 0 ? r.end_to_end_tps / r.ceiling_per_node_tps : 0;
    r.recovery_cpu_us = bench::median(ceiling.cpu_us);
    return r;
}

}  // namespace barrel::load
