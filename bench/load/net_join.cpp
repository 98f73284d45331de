// A late node's block sync, timed (--join): after the run, `testnet join` adds a full node, which
// replays the run's history from its peers. Its height is read from CometBFT's `abci_info`
// (the application's last committed height, for barrel and kvstore alike) every 10 ms; the
// replay is timed from the first height seen to the run's last, and counts the run's
// transactions in the heights between (NetRunResult::txs_at_height).

#include "net_join.hpp"

#include "common/args.hpp"
#include "net_shared.hpp"
#include "rpc_client.hpp"

#include <thread>

namespace barrel::load::net {

namespace {

/// The application's last committed height on `conn`'s node, as its CometBFT reports it.
uint64_t app_height(HttpConnection& conn) {
    const auto info = conn.call("abci_info", nlohmann::json::object());
    const auto response = info.find("response");
    if (response == info.end() || !response->is_object())
        throw bench::Failure{1, "abci_info: no response object: " + info.dump().substr(0, 200)};
    // CometBFT writes int64s as strings, and leaves out a zero.
    const auto h = response->find("last_block_height");
    if (h == response->end()) return 0;
    const std::string text = h->is_string() ? h->get<std::string>() : "";
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        throw bench::Failure{1, "abci_info: last_block_height is not a decimal string: " +
                                    info.dump().substr(0, 200)};
    return std::stoull(text);
}

}  // namespace

NetRunResult::Join time_join(Network& net, const NetRunResult& r, std::chrono::seconds stall) {
    NetRunResult::Join out;
    const auto t0 = Clock::now();
    const NetNode& node = net.join();
    const auto answered = Clock::now();
    out.to_answer_s = seconds(answered - t0);
    out.to_height = r.last_height;
    HttpConnection conn{node.cometbft_rpc};
    std::optional<Clock::time_point> first;
    uint64_t last_seen = 0;
    auto last_move = answered;
    for (;;) {
        const uint64_t h = app_height(conn);
        const auto now = Clock::now();
        if (h != last_seen) last_move = now;
        last_seen = h;
        if (!first && h > 0) {
            first = now;
            out.from_height = h;
        }
        if (h >= r.last_height) {
            if (!first) first = now;
            out.to_first_s = seconds(*first - t0);
            out.replay_s = seconds(now - *first);
            break;
        }
        if (now - last_move > stall)
            throw bench::Failure{1, "--join: the joining node stayed at height " +
                                        std::to_string(h) + " for " +
                                        std::to_string(stall.count()) + " s"};
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    for (const auto& [h, count] : r.txs_at_height)
        if (h > out.from_height && h <= out.to_height) out.replayed += count;
    if (out.replay_s > 0) out.replay_tps = static_cast<double>(out.replayed) / out.replay_s;
    return out;
}

}  // namespace barrel::load::net
