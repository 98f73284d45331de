#include "cometbft/rpc_client.hpp"

#include <barrel/core/base64.hpp>

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <utility>

namespace barrel::cometbft {

using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

/// CometBFT writes its 64-bit numbers as JSON strings ("12").
uint64_t number_of(const json& j) {
    if (j.is_number_unsigned()) return j.get<uint64_t>();
    if (!j.is_string()) return 0;
    const std::string& s = j.get_ref<const std::string&>();
    uint64_t value = 0;
    std::from_chars(s.data(), s.data() + s.size(), value);
    return value;
}

json call(int id, std::string_view method, json params = json::object()) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

/// The batch's answer with `id`, or null.
const json* answer(const json& batch, int id) {
    if (!batch.is_array()) return nullptr;
    for (const json& a : batch)
        if (a.is_object() && a.value("id", -1) == id) return &a;
    return nullptr;
}

/// A broadcast batch's body: `[{"jsonrpc":"2.0","id":I,"method":"broadcast_tx_async",
/// "params":{"tx":"…"}},…]`, the call of transaction I with id I. Written as text: the base64
/// needs no escaping, and a document built only to be dumped cost more than the transactions'
/// hand-over itself (docs/benchmarks.md, "The JSON-RPC path (issue 39, target 1)").
template <class Queued>
std::string broadcast_body(std::span<const Queued> batch) {
    static constexpr std::string_view kHead = R"({"jsonrpc":"2.0","id":)";
    static constexpr std::string_view kMethod =
        R"(,"method":"broadcast_tx_async","params":{"tx":")";
    size_t size = 2;
    for (const Queued& q : batch) size += kHead.size() + 10 + kMethod.size() + q.base64.size() + 4;
    std::string body;
    body.reserve(size);
    body += '[';
    for (size_t i = 0; i < batch.size(); ++i) {
        if (i > 0) body += ',';
        body += kHead;
        body += std::to_string(i);
        body += kMethod;
        body += batch[i].base64;
        body += R"("}})";
    }
    body += ']';
    return body;
}

/// What CometBFT said of one broadcast.
enum class Verdict : uint8_t { refused, accepted, mempool_full };

/// Whether a broadcast's error answer is CometBFT's "mempool is full" (ErrMempoolIsFull, in the
/// error's data: "mempool is full: number of txs 5000 (max: 5000), total txs bytes …").
bool refused_for_full_mempool(simdjson::dom::element error) {
    for (const char* field : {"data", "message"}) {
        std::string_view text;
        if (!error[field].get_string().get(text) &&
            text.find("mempool is full") != std::string_view::npos)
            return true;
    }
    return false;
}

/// The verdict on each of a batch's `n` broadcasts from CometBFT's answer: the (first) answer
/// with id I is transaction I's. One without a `result`, or without an answer (a body that is
/// no batch, an id missing), is refused. async: a result says the request was taken (its
/// CheckTx runs later); an error is CometBFT's own refusal: the transaction is in its cache
/// already, its mempool is full.
std::vector<Verdict> verdicts(std::string_view body, size_t n) {
    std::vector<Verdict> out(n, Verdict::refused);
    // Only the client's thread reads answers; the parser keeps its buffers between batches.
    thread_local simdjson::dom::parser parser;
    const simdjson::padded_string padded{body};
    simdjson::dom::array answers;
    if (parser.parse(padded).get_array().get(answers)) return out;
    std::vector<bool> seen(n, false);
    for (const simdjson::dom::element a : answers) {
        int64_t id = -1;
        if (a["id"].get_int64().get(id) || id < 0 || static_cast<uint64_t>(id) >= n) continue;
        const size_t i = static_cast<size_t>(id);
        if (seen[i]) continue;  // a repeated id: the first answer is the one
        seen[i] = true;
        simdjson::dom::element error;
        if (!a["error"].get(error))
            out[i] = refused_for_full_mempool(error) ? Verdict::mempool_full : Verdict::refused;
        else if (!a["result"].error())
            out[i] = Verdict::accepted;
    }
    return out;
}

}  // namespace

Expected<HostPort, std::string> parse_rpc_url(std::string_view url) {
    auto parsed = parse_http_url(url);
    if (!parsed) return unexpected(parsed.error());
    if (parsed->target != "/")
        return unexpected("expected no path, got '" + std::string{url} + "'");
    return std::move(parsed->endpoint);
}

CometClient::CometClient(HostPort endpoint, ClientConfig config, Log log)
    : m_endpoint{std::move(endpoint)},
      m_config{config},
      m_log{std::move(log)},
      m_http{HttpUrl{m_endpoint}, http::Options{.timeout = m_config.timeout}} {
    m_config.batch = std::max<size_t>(m_config.batch, 1);
}

CometClient::~CometClient() { stop(); }

void CometClient::start() {
    if (!m_thread.joinable()) m_thread = std::thread{[this] { run(); }};
}

void CometClient::stop() {
    {
        std::lock_guard lock{m_mutex};
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

void CometClient::broadcast(std::span<const BytesView> encodings) {
    if (encodings.empty()) return;
    // Encoded outside the lock: the caller is a JSON-RPC worker, the lock the client thread's.
    std::vector<Queued> queued;
    queued.reserve(encodings.size());
    for (BytesView e : encodings) queued.push_back(Queued{base64(e)});
    {
        std::lock_guard lock{m_mutex};
        for (Queued& q : queued) {
            if (m_queue.size() >= m_config.max_queued) {
                m_queue.pop_front();
                ++m_counts.dropped;
            }
            m_queue.push_back(std::move(q));
        }
    }
    m_wake.notify_all();
}

EngineStatus CometClient::status() const {
    std::lock_guard lock{m_mutex};
    return m_status;
}

CometClient::Counts CometClient::counts() const {
    std::lock_guard lock{m_mutex};
    return m_counts;
}

void CometClient::run() {
    auto next_poll = Clock::now();
    // After a batch CometBFT did not take (unreachable, or its mempool full), nothing is sent
    // before the next poll: an unreachable CometBFT costs one attempt per poll interval, not a
    // loop of refused connections, and a full mempool gets a poll interval to drain.
    auto resume_sending = Clock::time_point{};
    std::vector<Queued> batch;
    while (true) {
        {
            std::unique_lock lock{m_mutex};
            const bool may_send = Clock::now() >= resume_sending;
            m_wake.wait_until(lock, next_poll,
                              [&] { return m_stopping || (may_send && !m_queue.empty()); });
            if (m_stopping) return;
            const size_t n = may_send ? std::min(m_queue.size(), m_config.batch) : 0;
            for (size_t i = 0; i < n; ++i) {
                batch.push_back(std::move(m_queue.front()));
                m_queue.pop_front();
            }
        }
        if (!batch.empty()) {
            const bool reached = send_batch(batch);
            if (!reached || !batch.empty()) {
                requeue(batch);
                next_poll = std::max(next_poll, Clock::now() + m_config.poll_interval);
                resume_sending = next_poll;
            }
        }
        batch.clear();
        if (Clock::now() >= next_poll) {
            poll_status();
            next_poll = Clock::now() + m_config.poll_interval;
        }
    }
}

void CometClient::requeue(std::vector<Queued>& batch) {
    std::lock_guard lock{m_mutex};
    for (auto it = batch.rbegin(); it != batch.rend(); ++it) m_queue.push_front(std::move(*it));
    while (m_queue.size() > m_config.max_queued) {
        m_queue.pop_front();
        ++m_counts.dropped;
    }
}

bool CometClient::send_batch(std::vector<Queued>& batch) {
    auto response = post(broadcast_body(std::span<const Queued>{batch}));
    if (!response) {
        note_unreachable(response.error());
        std::lock_guard lock{m_mutex};
        m_status.reachable = false;
        return false;
    }
    const std::vector<Verdict> said = verdicts(*response, batch.size());
    uint64_t accepted = 0, refused = 0, full = 0;
    std::vector<Queued> again;
    for (size_t i = 0; i < batch.size(); ++i) {
        if (said[i] == Verdict::accepted) {
            ++accepted;
        } else if (said[i] == Verdict::mempool_full && batch[i].full_retries < kMaxFullRetries) {
            ++full;
            ++batch[i].full_retries;
            again.push_back(std::move(batch[i]));
        } else {
            ++refused;
        }
    }
    batch = std::move(again);
    std::lock_guard lock{m_mutex};
    m_counts.broadcast += accepted;
    m_counts.refused += refused;
    m_counts.mempool_full += full;
    return true;
}

void CometClient::poll_status() {
    const json body = json::array({call(1, "status"), call(2, "net_info"), call(3, "validators")});
    auto response = post(body.dump());
    if (!response) {
        note_unreachable(response.error());
        std::lock_guard lock{m_mutex};
        m_status.reachable = false;
        return;
    }
    const json answers = json::parse(*response, nullptr, false);
    EngineStatus s;
    if (const json* a = answer(answers, 1); a && a->contains("result")) {
        const json& r = (*a)["result"];
        s.reachable = true;
        const json sync = r.value("sync_info", json::object());
        s.height = number_of(sync.value("latest_block_height", json{}));
        s.catching_up = sync.value("catching_up", false);
        const json validator = r.value("validator_info", json::object());
        s.validator_address = validator.value("address", "");
        s.own_power = static_cast<int64_t>(number_of(validator.value("voting_power", json{})));
    }
    if (const json* a = answer(answers, 2); a && a->contains("result"))
        s.peers = number_of((*a)["result"].value("n_peers", json{}));
    if (const json* a = answer(answers, 3); a && a->contains("result")) {
        const json& r = (*a)["result"];
        s.validators = number_of(r.value("total", json{}));
        for (const json& v : r.value("validators", json::array()))
            s.voting_power += static_cast<int64_t>(number_of(v.value("voting_power", json{})));
    }
    std::lock_guard lock{m_mutex};
    if (s.reachable && m_unreachable_logged) {
        m_unreachable_logged = false;
        if (m_log) m_log("cometbft-rpc: CometBFT answers again");
    }
    m_status = s;
}

Expected<std::string, std::string> CometClient::post(std::string_view body) {
    auto response = m_http.post(body);
    if (!response) return unexpected(response.error());
    if (response->status != 200)
        return unexpected(m_http.url().text() + ": HTTP " + std::to_string(response->status));
    return std::move(response->body);
}

void CometClient::note_unreachable(const std::string& why) {
    std::lock_guard lock{m_mutex};
    if (std::exchange(m_unreachable_logged, true)) return;
    if (m_log)
        m_log("cometbft-rpc: CometBFT does not answer (" + why +
              "); transactions wait in the pool");
}

}  // namespace barrel::cometbft
