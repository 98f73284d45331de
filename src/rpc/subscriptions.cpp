#include "rpc/subscriptions.hpp"

#include <barrel/core/hex.hpp>

#include "rpc/eth_json.hpp"
#include "rpc/filters.hpp"
#include "rpc/params.hpp"
#include "rpc/timed_calls.hpp"

#include <algorithm>
#include <random>

namespace barrel::rpc {

namespace {

/// A message's calls, with the connection as their Subscriber.
class MessageWork final : public WsWork {
public:
    MessageWork(Methods& methods, metrics::NodeMetrics* metrics, std::string text,
                Subscriber& subscriber)
        : m_calls{methods, metrics, std::move(text), &subscriber} {}
    bool step() override { return m_calls.step(); }
    std::vector<std::string> messages() override { return {m_calls.finish()}; }

private:
    TimedCalls m_calls;
};

class NotifyWork final : public WsWork {
public:
    explicit NotifyWork(Subscriptions& subscriptions) : m_subscriptions{subscriptions} {}
    bool step() override {
        m_messages = m_subscriptions.notifications();
        return false;
    }
    std::vector<std::string> messages() override { return std::move(m_messages); }

private:
    Subscriptions& m_subscriptions;
    std::vector<std::string> m_messages;
};

/// go-ethereum's notification, `result` being JSON text.
std::string notification(const std::string& id, std::string_view result) {
    std::string out;
    out.reserve(96 + id.size() + result.size());
    out += R"({"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":")";
    out += id;
    out += R"(","result":)";
    out += result;
    out += "}}";
    return out;
}

}  // namespace

Subscriptions::Subscriptions(Methods& methods, Node& node, WsConnection& connection,
                             const SubscriptionLimits& limits)
    : m_methods{methods}, m_node{node}, m_connection{connection}, m_limits{limits} {}

Subscriptions::~Subscriptions() { m_listening.reset(); }

std::unique_ptr<WsWork> Subscriptions::begin_message(std::string text) {
    return std::make_unique<MessageWork>(m_methods, m_node.metrics, std::move(text), *this);
}

std::unique_ptr<WsWork> Subscriptions::begin_notify() {
    return std::make_unique<NotifyWork>(*this);
}

std::string Subscriptions::new_id() const {
    // go-ethereum's form: 16 random bytes as a quantity ("0x" and no leading zeros).
    thread_local std::mt19937_64 random{std::random_device{}()};
    for (;;) {
        Bytes bytes(16);
        for (size_t i = 0; i < bytes.size(); i += 8) {
            const uint64_t r = random();
            for (size_t k = 0; k < 8; ++k) bytes[i + k] = static_cast<uint8_t>(r >> (8 * k));
        }
        std::string digits = to_hex_bare(bytes);
        digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
        std::string id = "0x" + digits;
        if (std::none_of(m_subscriptions.begin(), m_subscriptions.end(),
                         [&](const Subscription& s) { return s.id == id; }))
            return id;
    }
}

Expected<Subscriptions::Kind, Error> Subscriptions::kind_of(const json& params) {
    if (!params.is_array() || params.empty() || !params[0].is_string())
        return unexpected(
            Error{code::invalid_params, "expected subscription name as first argument"});
    const std::string name = params[0].get<std::string>();
    // The name is parameter 0; each kind's own parameters follow it.
    if (name == "newHeads") {
        if (auto arity = check_arity(params, 1, 1); !arity) return unexpected(arity.error());
        return Kind::new_heads;
    }
    if (name == "newPendingTransactions") {
        if (auto arity = check_arity(params, 1, 2); !arity) return unexpected(arity.error());
        auto full = decode<std::optional<bool>>(params, 1, "fullTx");
        if (!full) return unexpected(full.error());
        if (full->value_or(false))
            return unexpected(
                invalid_argument(1, "fullTx", "full transactions are not sent, only their hashes"));
        return Kind::pending_transactions;
    }
    if (name == "logs") {
        // The criteria checked as eth_getLogs and eth_newFilter check them (LogFilter::read);
        // barrel emits no logs, so a valid one is never notified.
        if (auto arity = check_arity(params, 2, 2); !arity) return unexpected(arity.error());
        if (auto filter = decode<LogFilter>(params, 1, "filter"); !filter)
            return unexpected(filter.error());
        return Kind::logs;
    }
    // go-ethereum's words (rpc/errors.go, subscriptionNotFoundError).
    return unexpected(
        Error{code::method_not_found, "no \"" + name + "\" subscription in eth namespace"});
}

Expected<std::string, Error> Subscriptions::subscribe(const json& params) {
    auto kind_or = kind_of(params);
    if (!kind_or) return unexpected(kind_or.error());
    const Kind kind = *kind_or;
    if (m_subscriptions.size() >= m_limits.max_per_connection)
        return unexpected(Error{
            code::server_error,
            "too many subscriptions (limit " + std::to_string(m_limits.max_per_connection) + ")"});
    if (!m_node.events)
        return unexpected(Error{code::method_not_found, "notifications not supported"});
    if (!m_listening)
        m_listening = m_node.events->listen(
            {.on_block = [this](uint64_t number, const Hash&) { on_block(number); },
             .on_pending = [this](std::span<const Hash> hashes) { on_pending(hashes); }});
    Subscription s{new_id(), kind, 0, 0};
    if (kind == Kind::pending_transactions) m_pending_subscriptions.fetch_add(1);
    {
        std::lock_guard lock{m_mutex};
        s.blocks_since = m_record.blocks_seen;
        s.pending_since = m_record.pending_seen;
    }
    m_subscriptions.push_back(s);
    return s.id;
}

bool Subscriptions::unsubscribe(std::string_view id) {
    const auto it = std::find_if(m_subscriptions.begin(), m_subscriptions.end(),
                                 [&](const Subscription& s) { return s.id == id; });
    if (it == m_subscriptions.end()) return false;
    if (it->kind == Kind::pending_transactions) m_pending_subscriptions.fetch_sub(1);
    m_subscriptions.erase(it);
    return true;
}

void Subscriptions::on_block(uint64_t number) {
    {
        std::lock_guard lock{m_mutex};
        if (m_record.blocks == 0) m_record.first_block = number;
        ++m_record.blocks;
        ++m_record.blocks_seen;
    }
    m_connection.wake();
}

void Subscriptions::on_pending(std::span<const Hash> hashes) {
    // A connection with newHeads alone keeps no record of the pool's traffic.
    if (m_pending_subscriptions.load() == 0) return;
    bool overflow = false;
    {
        std::lock_guard lock{m_mutex};
        m_record.pending_seen += hashes.size();
        if (m_record.overflow) return;
        if (m_record.pending.size() + hashes.size() > m_limits.max_pending_backlog) {
            m_record.overflow = overflow = true;
            m_record.pending.clear();
            m_record.pending.shrink_to_fit();
        } else {
            m_record.pending.insert(m_record.pending.end(), hashes.begin(), hashes.end());
        }
    }
    if (overflow) return m_connection.drop();
    m_connection.wake();
}

std::vector<std::string> Subscriptions::notifications() {
    // Pending hashes first: a transaction is announced (Events) before the sealer is woken to
    // include it, so when both wait here its hash comes before the head of its block.
    std::vector<std::string> out;
    pending_notifications(out);
    head_notifications(out);
    return out;
}

void Subscriptions::head_notifications(std::vector<std::string>& out) {
    uint64_t first = 0, count = 0, first_seq = 0;
    bool more = false;
    {
        std::lock_guard lock{m_mutex};
        first = m_record.first_block;
        count = std::min<uint64_t>(m_record.blocks, m_limits.blocks_per_work);
        first_seq = m_record.blocks_seen - m_record.blocks;
        m_record.first_block += count;
        m_record.blocks -= count;
        more = m_record.blocks > 0;
    }
    if (more) m_connection.wake();
    const bool wanted =
        std::any_of(m_subscriptions.begin(), m_subscriptions.end(),
                    [](const Subscription& s) { return s.kind == Kind::new_heads; });
    if (count == 0 || !wanted) return;
    auto view = m_node.store.snapshot();
    if (!view) throw std::runtime_error{"newHeads: store: " + view.error().message};
    const u256& base_fee = m_node.store.genesis().config.base_fee;
    for (uint64_t k = 0; k < count; ++k) {
        auto header = (*view)->header_record(first + k);
        if (!header) throw std::runtime_error{"newHeads: store: " + header.error().message};
        if (!*header)
            throw std::runtime_error{"newHeads: block " + std::to_string(first + k) +
                                     " was announced but is not stored"};
        const std::string result = eth_header(**header, base_fee).dump();
        for (const Subscription& s : m_subscriptions)
            if (s.kind == Kind::new_heads && s.blocks_since <= first_seq + k)
                out.push_back(notification(s.id, result));
    }
}

void Subscriptions::pending_notifications(std::vector<std::string>& out) {
    std::vector<Hash> hashes;
    uint64_t first_seq = 0;
    {
        std::lock_guard lock{m_mutex};
        hashes.swap(m_record.pending);
        first_seq = m_record.pending_seen - hashes.size();
    }
    for (size_t k = 0; k < hashes.size(); ++k) {
        const std::string result = "\"" + to_hex(hashes[k]) + "\"";
        for (const Subscription& s : m_subscriptions)
            if (s.kind == Kind::pending_transactions && s.pending_since <= first_seq + k)
                out.push_back(notification(s.id, result));
    }
}

}  // namespace barrel::rpc
