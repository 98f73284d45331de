#pragma once
// The node's filters (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter, polled
// by eth_getFilterChanges): node-wide, shared by every connection as in go-ethereum, fed by
// rpc::Events. Bounded, since any client may create them (docs/rpc.md, "Filters"): at most
// FilterConfig::max_filters at once (a new one past that replaces the one polled least
// recently), each buffering at most FilterConfig::max_buffered hashes between polls (the oldest
// go first); a filter not polled for FilterConfig::timeout (go-ethereum's 5 minutes) expires.
// Expiry is lazy: every filter call first removes the expired ones, so no thread runs for them.
//
// Also the log filter criteria that eth_getLogs and eth_newFilter take, decoded as
// go-ethereum's FilterCriteria.UnmarshalJSON decodes them, with its words.

#include <barrel/core/bytes.hpp>

#include "rpc/events.hpp"
#include "rpc/params.hpp"

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace barrel::rpc {

/// A log filter: a block range (absent ends are `latest`) or one block by hash, the addresses
/// a log must come from (any if empty), and per topic position the topics it may have (any if
/// empty). barrel emits no logs, so nothing ever matches; the criteria are still checked.
struct LogFilter {
    std::optional<BlockRef> from;
    std::optional<BlockRef> to;
    std::optional<Hash> block_hash;
    std::vector<Address> addresses;
    std::vector<std::vector<Hash>> topics;

    /// As go-ethereum's FilterCriteria.UnmarshalJSON, with its words.
    static Expected<LogFilter, std::string> read(const json& value);
};

/// go-ethereum's limits on criteria (eth/filters/api.go): topic positions (LOG0..LOG4) and the
/// topics one position may list.
inline constexpr size_t kMaxTopics = 4;
inline constexpr size_t kMaxSubTopics = 1000;

/// A filter or subscription id as a call gives it back: any string (an unknown one is the
/// method's "not found").
struct Id {
    std::string text;
    static Expected<Id, std::string> read(const json& value);
};

struct FilterConfig {
    /// Filters at once, node-wide.
    size_t max_filters{1000};
    /// Hashes a block or pending-transaction filter keeps between two polls.
    size_t max_buffered{4096};
    /// How long a filter lives without a poll (eth_getFilterChanges).
    std::chrono::steady_clock::duration timeout{std::chrono::minutes{5}};
    /// The clock (a seam for tests: expiry without waiting); steady_clock when empty.
    std::function<std::chrono::steady_clock::time_point()> now{};
};

class Filters {
public:
    enum class Kind : uint8_t { logs, blocks, pending };

    /// Listens to `events` (if any) for blocks and admitted transactions.
    Filters(Events* events, FilterConfig config);
    Filters(const Filters&) = delete;
    Filters& operator=(const Filters&) = delete;
    ~Filters();

    /// A new filter's id: "0x" and up to 32 hex digits, go-ethereum's form (rpc.NewID).
    /// `full` (pending filters): polls answer whole transactions, not hashes.
    std::string install(Kind kind, LogFilter criteria = {}, bool full = false);

    /// What a poll of a filter answers, and the filter it polled.
    struct Changes {
        Kind kind{Kind::logs};
        bool full{false};
        /// Block hashes or transaction hashes since the last poll, oldest first (none for logs).
        std::vector<Hash> hashes;
    };
    /// Takes the changes since the last poll and restarts the filter's idle time; nullopt if no
    /// filter has that id (never had, uninstalled or expired).
    std::optional<Changes> poll(std::string_view id);

    /// A log filter's criteria (eth_getFilterLogs; does not count as a poll); nullopt unless
    /// `id` is a live log filter.
    std::optional<LogFilter> criteria(std::string_view id);

    /// Whether a filter had that id.
    bool uninstall(std::string_view id);

    /// Filters alive (expired ones not yet removed included).
    size_t size() const;

private:
    struct Filter {
        Kind kind;
        bool full;
        LogFilter criteria;
        std::deque<Hash> hashes;
        std::chrono::steady_clock::time_point last_poll;
    };
    using Map = std::unordered_map<std::string, Filter>;

    std::chrono::steady_clock::time_point now() const;
    /// Removes the expired filters (m_mutex held).
    void expire(std::chrono::steady_clock::time_point now);
    /// Makes room for one more filter (m_mutex held).
    void make_room();
    std::string new_id();
    /// Appends to every filter of `kind` (the Events listeners).
    void record(Kind kind, std::span<const Hash> hashes);
    Map::iterator find(std::string_view id);

    FilterConfig m_config;
    mutable std::mutex m_mutex;
    Map m_filters;
    std::mt19937_64 m_random;
    /// Last: stops the listeners before the filters they write to go.
    Events::Subscription m_subscription;
};

}  // namespace barrel::rpc
