// The watchers of a network run: one thread per node, asking for the next height until it is
// there, as a client of that node sees it (barrel: eth_getBlockByNumber on its JSON-RPC;
// kvstore: CometBFT's `block`), each time the node pushes a new head (heads.hpp), or every
// --poll-ms where it pushes none. A block's transactions of the run are recorded with the time
// the watcher first saw them, and the block's hash (barrel's, or CometBFT's block_id.hash).

#include <barrel/core/hex.hpp>
#include <barrel/core/uint256.hpp>

#include "common/args.hpp"
#include "heads.hpp"
#include "net_shared.hpp"
#include "responses.hpp"

#include <iostream>
#include <thread>

namespace barrel::load::net {

namespace {

/// One height's block as the watcher needs it: its hash and the run's transactions in it.
struct Seen {
    std::string hash;
    std::vector<uint32_t> ours;
};

/// Asks node `node` for height `h`: the block, nothing if it is not there yet, or what is wrong
/// with the answer. Throws bench::Failure when the node does not answer (killed, restarting).
class BlockSource {
public:
    BlockSource(const NetWorkload& w, HttpUrl url, std::unique_ptr<HttpConnection> conn)
        : m_w{w}, m_url{std::move(url)}, m_conn{std::move(conn)} {}

    using Answer = Expected<std::optional<Seen>, std::string>;

    Answer fetch(uint64_t h) {
        if (!m_conn) m_conn = std::make_unique<HttpConnection>(m_url);
        try {
            return m_w.app == App::barrel ? fetch_eth(h) : fetch_comet(h);
        } catch (const bench::Failure&) {
            m_conn.reset();  // a new connection next time: the node may be restarting
            throw;
        }
    }

private:
    Answer fetch_eth(uint64_t h) {
        const std::string body =
            m_conn->post(R"({"jsonrpc":"2.0","id":0,"method":"eth_getBlockByNumber","params":[")" +
                         to_hex_quantity(h) + "\",false]}");
        auto block = m_reader.eth_block(body);
        if (!block) return unexpected("eth_getBlockByNumber: " + block.error());
        if (!*block) return std::optional<Seen>{};
        Seen seen{to_hex((*block)->hash), {}};
        for (const Hash& tx : (*block)->transactions)
            if (const auto i = m_w.base->index_of.find(tx, m_w.base->hashes))
                seen.ours.push_back(*i);
        return std::optional<Seen>{std::move(seen)};
    }

    Answer fetch_comet(uint64_t h) {
        const std::string body =
            m_conn->post(R"({"jsonrpc":"2.0","id":0,"method":"block","params":{"height":")" +
                         std::to_string(h) + "\"}}");
        auto block = m_reader.comet_block(body);
        if (!block) return unexpected("block: " + block.error());
        if (!*block) return std::optional<Seen>{};
        Seen seen{std::move((*block)->hash), {}};
        for (const std::string& tx : (*block)->transactions)
            if (const auto it = m_w.kv_index.find(tx); it != m_w.kv_index.end())
                seen.ours.push_back(it->second);
        return std::optional<Seen>{std::move(seen)};
    }

    const NetWorkload& m_w;
    HttpUrl m_url;
    std::unique_ptr<HttpConnection> m_conn;
    ResponseReader m_reader;
};

/// Whether node `k` has every accepted transaction, once the sends are done.
bool node_done(const NodeSeen& s, const Shared& sh) {
    if (sh.senders_left.load() != 0 || s.mined.load() < sh.accepted.load()) return false;
    for (size_t i = 0; i < sh.outcome.size(); ++i)
        if (sh.outcome[i] == kAccepted && s.mined_count[i] == 0) return false;
    return true;
}

/// With a subscription, the next height is asked for at least this often anyway: a safety net
/// (a head lost or late costs this much latency at most), and how soon the watcher sees
/// sh.stop.
constexpr std::chrono::milliseconds kHeadTimeout{100};

void record(const Seen& block, uint64_t h, Clock::time_point at, NodeSeen& s) {
    size_t mined = 0;
    for (const uint32_t i : block.ours)
        if (s.mined_count[i]++ == 0) {
            s.mined_time[i] = at;
            s.mined_height[i] = h;
            ++mined;
        }
    s.block_hash[h] = block.hash;
    s.height_time[h] = at;
    s.mined.fetch_add(mined);
    s.height.store(h);
}

}  // namespace

void watch_node(const Config& config, const NetWorkload& w, const HttpUrl& url, size_t k,
                uint64_t from, Shared& sh, std::unique_ptr<HttpConnection> opened) {
    NodeSeen& s = *sh.seen[k];
    BlockSource source{w, url, std::move(opened)};
    std::optional<HeadSignal> heads;
    if (config.push_heads) {
        heads.emplace(url, w.app == App::barrel ? HeadSignal::Protocol::ethereum
                                                : HeadSignal::Protocol::cometbft);
        s.subscriptions = heads->subscriptions();
    }
    uint64_t next = from;
    while (!sh.stop.load()) {
        std::optional<BlockSource::Answer> answer;
        try {
            ++s.asks;
            answer = source.fetch(next);
        } catch (const bench::Failure&) {
            // Killed, or not up yet: asked again after the poll.
        }
        // An answer that cannot be read ends the run: a node that answers is not restarting.
        if (answer && !*answer)
            throw bench::Failure{1, "node " + std::to_string(k) + ": " + answer->error()};
        const bool answered = answer.has_value();
        const std::optional<Seen> block = answered ? std::move(**answer) : std::nullopt;
        if (block) {
            record(*block, next, Clock::now(), s);
            if (!block->ours.empty()) sh.moved();
            ++next;
            {
                std::lock_guard lock{sh.mutex};
                sh.changed.notify_all();
            }
            continue;  // more blocks may be waiting
        }
        if (answered && node_done(s, sh)) return;
        if (sh.stalled(config.stall)) {
            std::cerr << "barrel-load: node " << k << ": nothing sent or mined for "
                      << config.stall.count() << " s; giving up at height " << next - 1 << " with "
                      << sh.accepted.load() - std::min(sh.accepted.load(), s.mined.load())
                      << " transactions not mined there\n";
            return;
        }
        if (heads) {
            heads->wait(kHeadTimeout, config.poll);
            s.heads_pushed = heads->heads();
            s.subscriptions = heads->subscriptions();
        } else
            std::this_thread::sleep_for(config.poll);
    }
}

}  // namespace barrel::load::net
