#include "rpc/filters.hpp"

#include <barrel/core/hex.hpp>

#include <algorithm>
#include <utility>

namespace barrel::rpc {

namespace {

using Reason = Unexpected<std::string>;

Reason reason(std::string text) { return unexpected(std::move(text)); }

/// go-ethereum's decodeAddress and decodeTopic: hexutil's words, then the length's.
template <size_t N>
Expected<FixedBytes<N>, std::string> decode_fixed(const std::string& text, std::string_view what) {
    auto bytes = parse_data(json(text));
    if (!bytes) return reason(bytes.error());
    if (bytes->size() != N)
        return reason("hex has invalid length " + std::to_string(bytes->size()) +
                      " after decoding; expected " + std::to_string(N) + " for " +
                      std::string{what});
    return FixedBytes<N>::from_view(*bytes);
}

Expected<std::vector<Address>, std::string> read_addresses(const json& value) {
    if (value.is_string()) {
        auto a = decode_fixed<20>(value.get<std::string>(), "address");
        if (!a) return reason("invalid address: " + a.error());
        return std::vector<Address>{*a};
    }
    if (!value.is_array()) return reason("invalid addresses in query");
    std::vector<Address> out;
    for (size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_string())
            return reason("non-string address at index " + std::to_string(i));
        auto a = decode_fixed<20>(value[i].get<std::string>(), "address");
        if (!a) return reason("invalid address at index " + std::to_string(i) + ": " + a.error());
        out.push_back(*a);
    }
    return out;
}

/// One topic position: a topic, a list of alternatives, or null (any); a null among the
/// alternatives makes the position any, as in go-ethereum.
Expected<std::vector<Hash>, std::string> read_topic_position(const json& value) {
    const std::string invalid = "invalid topic(s)";
    if (value.is_null()) return std::vector<Hash>{};
    if (value.is_string()) {
        auto t = decode_fixed<32>(value.get<std::string>(), "topic");
        if (!t) return reason(t.error());
        return std::vector<Hash>{*t};
    }
    if (!value.is_array()) return reason(invalid);
    if (value.size() > kMaxSubTopics) return reason("exceed max topics");
    std::vector<Hash> out;
    for (const json& alternative : value) {
        if (alternative.is_null()) return std::vector<Hash>{};
        if (!alternative.is_string()) return reason(invalid);
        auto t = decode_fixed<32>(alternative.get<std::string>(), "topic");
        if (!t) return reason(t.error());
        out.push_back(*t);
    }
    return out;
}

Expected<std::vector<std::vector<Hash>>, std::string> read_topics(const json& value) {
    if (!value.is_array()) return reason("invalid topic(s)");
    if (value.size() > kMaxTopics) return reason("exceed max topics");
    std::vector<std::vector<Hash>> out;
    for (const json& position : value) {
        auto topics = read_topic_position(position);
        if (!topics) return reason(topics.error());
        out.push_back(std::move(*topics));
    }
    return out;
}

/// fromBlock / toBlock: a tag or a number (not an EIP-1898 object).
Expected<BlockRef, std::string> read_bound(const json& value, std::string_view key) {
    const std::string prefix = std::string{key} + ": ";
    if (!value.is_string()) return reason(prefix + "want a block tag or number");
    auto ref = parse_block(value);
    if (!ref) return reason(prefix + ref.error());
    return ref;
}

/// The member `key` of `object`, or nullptr when absent or null.
const json* member(const json& object, const char* key) {
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

Expected<LogFilter, std::string> LogFilter::read(const json& value) {
    if (!value.is_object()) return reason("want a filter object");
    LogFilter out;
    if (const json* hash = member(value, "blockHash")) {
        auto h = parse_hash(*hash);
        if (!h) return reason("blockHash: " + h.error());
        out.block_hash = *h;
    }
    for (const char* key : {"fromBlock", "toBlock"}) {
        const json* bound = member(value, key);
        if (!bound) continue;
        auto ref = read_bound(*bound, key);
        if (!ref) return reason(ref.error());
        (key == std::string_view{"fromBlock"} ? out.from : out.to) = *ref;
    }
    if (out.block_hash && (out.from || out.to))
        return reason(
            "cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other");
    if (const json* addresses = member(value, "address")) {
        auto a = read_addresses(*addresses);
        if (!a) return reason(a.error());
        out.addresses = std::move(*a);
    }
    if (const json* topics = member(value, "topics")) {
        auto t = read_topics(*topics);
        if (!t) return reason(t.error());
        out.topics = std::move(*t);
    }
    return out;
}

Expected<Id, std::string> Id::read(const json& value) {
    if (!value.is_string()) return reason("want an id string");
    return Id{value.get<std::string>()};
}

Filters::Filters(Events* events, FilterConfig config)
    : m_config{std::move(config)}, m_random{std::random_device{}()} {
    if (!events) return;
    m_subscription = events->listen(
        {.on_block =
             [this](uint64_t, const Hash& hash) {
                 record(Kind::blocks, {&hash, 1});
             },
         .on_pending = [this](std::span<const Hash> hashes) { record(Kind::pending, hashes); }});
}

Filters::~Filters() { m_subscription.reset(); }

std::chrono::steady_clock::time_point Filters::now() const {
    return m_config.now ? m_config.now() : std::chrono::steady_clock::now();
}

void Filters::expire(std::chrono::steady_clock::time_point now) {
    std::erase_if(m_filters, [&](const auto& entry) {
        return now - entry.second.last_poll >= m_config.timeout;
    });
}

void Filters::make_room() {
    while (!m_filters.empty() && m_filters.size() >= m_config.max_filters) {
        const auto idlest = std::min_element(
            m_filters.begin(), m_filters.end(),
            [](const auto& a, const auto& b) { return a.second.last_poll < b.second.last_poll; });
        m_filters.erase(idlest);
    }
}

std::string Filters::new_id() {
    // rpc.NewID: 16 random bytes in hex, leading zeros trimmed (ids are quantities).
    Bytes bytes(16);
    for (size_t i = 0; i < bytes.size(); i += 8) {
        const uint64_t word = m_random();
        for (size_t k = 0; k < 8; ++k) bytes[i + k] = static_cast<uint8_t>(word >> (8 * k));
    }
    std::string digits = to_hex(bytes).substr(2);
    const size_t first = digits.find_first_not_of('0');
    return "0x" + (first == std::string::npos ? std::string{"0"} : digits.substr(first));
}

std::string Filters::install(Kind kind, LogFilter criteria, bool full) {
    const auto t = now();
    std::lock_guard lock{m_mutex};
    expire(t);
    make_room();
    std::string id = new_id();
    while (m_filters.contains(id)) id = new_id();
    m_filters.emplace(id, Filter{kind, full, std::move(criteria), {}, t});
    return id;
}

Filters::Map::iterator Filters::find(std::string_view id) {
    return m_filters.find(std::string{id});
}

std::optional<Filters::Changes> Filters::poll(std::string_view id) {
    const auto t = now();
    std::lock_guard lock{m_mutex};
    expire(t);
    const auto it = find(id);
    if (it == m_filters.end()) return std::nullopt;
    Filter& f = it->second;
    f.last_poll = t;
    Changes out{f.kind, f.full, {f.hashes.begin(), f.hashes.end()}};
    f.hashes.clear();
    return out;
}

std::optional<LogFilter> Filters::criteria(std::string_view id) {
    const auto t = now();
    std::lock_guard lock{m_mutex};
    expire(t);
    const auto it = find(id);
    if (it == m_filters.end() || it->second.kind != Kind::logs) return std::nullopt;
    return it->second.criteria;
}

bool Filters::uninstall(std::string_view id) {
    const auto t = now();
    std::lock_guard lock{m_mutex};
    expire(t);
    const auto it = find(id);
    if (it == m_filters.end()) return false;
    m_filters.erase(it);
    return true;
}

size_t Filters::size() const {
    std::lock_guard lock{m_mutex};
    return m_filters.size();
}

void Filters::record(Kind kind, std::span<const Hash> hashes) {
    std::lock_guard lock{m_mutex};
    for (auto& [id, f] : m_filters) {
        if (f.kind != kind) continue;
        // Only the newest max_buffered can stay: the others are not copied in at all.
        const auto kept = hashes.last(std::min(hashes.size(), m_config.max_buffered));
        f.hashes.insert(f.hashes.end(), kept.begin(), kept.end());
        while (f.hashes.size() > m_config.max_buffered) f.hashes.pop_front();
    }
}

}  // namespace barrel::rpc
