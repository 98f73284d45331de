// After a network run: the checks (every transaction mined exactly once on every node, the same
// block hash at every height everywhere), the latencies, the killed node's catch-up, the rounds
// per height from CometBFT, and barrel's rejected proposals from /metrics.

#include "common/args.hpp"
#include "common/stats.hpp"
#include "metrics_text.hpp"
#include "net_shared.hpp"

#include <algorithm>

namespace barrel::load::net {

namespace {

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::array<double, 4> percentiles(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {bench::percentile_of_sorted(v, 0.50), bench::percentile_of_sorted(v, 0.95),
            bench::percentile_of_sorted(v, 0.99), v.empty() ? 0 : v.back()};
}

/// Heights every node saw: the same hash at each, else counted in r.hash_mismatches.
void compare_hashes(const Shared& sh, NetRunResult& r) {
    const auto& first = sh.seen.front()->block_hash;
    for (const auto& [h, hash] : first) {
        bool everywhere = true, same = true;
        for (const auto& s : sh.seen) {
            const auto it = s->block_hash.find(h);
            if (it == s->block_hash.end()) {
                everywhere = false;
                break;
            }
            same = same && it->second == hash;
        }
        if (!everywhere) continue;
        ++r.heights_compared;
        if (!same) ++r.hash_mismatches;
    }
}

}  // namespace

void catch_up(const Shared& sh, Clock::time_point t0, NetRunResult& r) {
    if (!r.killed_node || !r.restarted_at_s) return;
    const auto restarted = t0 + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(*r.restarted_at_s));
    const NodeSeen& killed = *sh.seen[*r.killed_node];
    for (const auto& [h, at] : killed.height_time) {
        if (at < restarted) continue;
        bool others_ahead = false;
        for (size_t k = 0; k < sh.seen.size() && !others_ahead; ++k) {
            if (k == *r.killed_node) continue;
            const auto& times = sh.seen[k]->height_time;
            const auto next = times.find(h + 1);
            others_ahead = next != times.end() && next->second < at;
        }
        if (!others_ahead) {
            r.catch_up_s = std::chrono::duration<double>(at - restarted).count();
            return;
        }
    }
}

void summarise(const NetWorkload& w, const Shared& sh, Clock::time_point t0, NetRunResult& r) {
    (void)w;
    std::vector<double> at_sent, at_slowest;
    std::optional<Clock::time_point> last_mined;
    uint64_t first_height = UINT64_MAX, last_height = 0;
    for (size_t i = 0; i < r.txs; ++i) {
        if (sh.outcome[i] == kAccepted) ++r.accepted;
        if (sh.outcome[i] == kRejected) ++r.rejected;
        bool everywhere = true;
        Clock::time_point slowest{};
        for (const auto& s : sh.seen) {
            if (s->mined_count[i] > 1) ++r.mined_twice;
            if (s->mined_count[i] == 0) {
                everywhere = false;
                continue;
            }
            slowest = std::max(slowest, s->mined_time[i]);
            first_height = std::min(first_height, s->mined_height[i]);
            last_height = std::max(last_height, s->mined_height[i]);
        }
        // Heights as node 0 saw them: a transaction has the same height on every node.
        if (sh.seen.front()->mined_count[i] > 0)
            ++r.txs_at_height[sh.seen.front()->mined_height[i]];
        if (!everywhere) {
            if (sh.outcome[i] == kAccepted) ++r.not_mined;
            continue;
        }
        at_sent.push_back(ms(sh.seen[sh.sent_to[i]]->mined_time[i] - sh.send_time[i]));
        at_slowest.push_back(ms(slowest - sh.send_time[i]));
        if (!last_mined || slowest > *last_mined) last_mined = slowest;
    }
    r.latency_sent_ms = percentiles(std::move(at_sent));
    const size_t mined_everywhere = at_slowest.size();
    r.latency_slowest_ms = percentiles(std::move(at_slowest));
    if (last_mined) {
        r.end_to_end_seconds = std::chrono::duration<double>(*last_mined - t0).count();
        if (r.end_to_end_seconds > 0)
            r.end_to_end_tps = static_cast<double>(mined_everywhere) / r.end_to_end_seconds;
    }
    if (last_height > 0) {
        r.first_height = first_height;
        r.last_height = last_height;
    }
    compare_hashes(sh, r);
    catch_up(sh, t0, r);
}

void read_rounds(const NetNode& node, NetRunResult& r) {
    if (r.last_height == 0) return;
    HttpConnection conn{node.cometbft_rpc};
    // One call per height: CometBFT answers a batch of one as a lone answer, and these few
    // calls are made after the clock.
    uint64_t rounds = 0;
    for (uint64_t h = r.first_height; h <= r.last_height; ++h) {
        const auto commit = conn.call("commit", {{"height", std::to_string(h)}});
        const auto& round = commit["signed_header"]["commit"]["round"];
        if (!round.is_number_unsigned())
            throw bench::Failure{
                1, "commit: no signed_header.commit.round at height " + std::to_string(h)};
        const uint64_t v = round.get<uint64_t>();
        rounds += v + 1;
        r.max_round = std::max(r.max_round, v);
        r.heights_past_round_0 += v > 0 ? 1 : 0;
    }
    r.heights_used = r.last_height - r.first_height + 1;
    r.mean_round = static_cast<double>(rounds) / static_cast<double>(r.heights_used);
}

std::optional<double> proposals_rejected(const std::vector<NetNode>& nodes) {
    std::optional<double> sum;
    for (const auto& n : nodes) {
        if (!n.json_rpc) continue;
        try {
            HttpConnection conn{*n.json_rpc};
            const auto metrics = MetricsText::parse(conn.get("/metrics"));
            if (const auto v = metrics.value("barrel_abci_proposals_rejected_total"))
                sum = sum.value_or(0) + *v;
        } catch (const bench::Failure&) {
            // A node that does not answer adds nothing; the figure is the others'.
        }
    }
    return sum;
}

}  // namespace barrel::load::net
