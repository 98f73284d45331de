// barrel-load: the node under load, as its clients see it. Signs N transfers from S generated
// accounts before any clock starts, sends them to `barrel-node run` as JSON-RPC batches of
// eth_sendRawTransaction over C keep-alive connections, watches the blocks until every one is
// mined, and reports submit and end-to-end TPS, send-to-mined latency, rejections, the node's
// per-stage times and sender-cache hit rate from /metrics, and the recovery ceiling measured in
// the same run. It starts a node of its own in a temporary datadir (the default) or targets
// --url. README.md, "barrel-load", has the usage; docs/benchmarks.md the figures.

#include <barrel/core/hex.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/gen/workload.hpp>

#include "common/args.hpp"
#include "interrupt.hpp"
#include "load.hpp"
#include "net_report.hpp"
#include "net_run.hpp"
#include "node_process.hpp"
#include "options/bound_options.hpp"
#include "report.hpp"
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <thread>
#include <tuple>

using namespace barrel;
using bench::Failure;
using bench::usage_error;
using options::BoundOptions;

namespace {

/// The most validators a network may have (testnet init's bound).
constexpr size_t kMaxValidators = 100;
/// The largest value a CometBFT setting may be given here (mempool.max_txs_bytes's bound);
/// testnet init checks each against CometBFT's own bounds (docs/network.md).
constexpr uint64_t kMaxCometSetting = 1'099'511'627'776;
/// CometBFT's default mempool.size.
constexpr size_t kCometMempoolSize = 5000;
/// How long a perturbation lasts by default: a killed node is restarted after 3 s (its
/// processes start again slowly); the others last 10 s, as CometBFT's end-to-end tests have it.
constexpr size_t kKillLastsS = 3, kPerturbationLastsS = 10;
/// Seconds from the first send to the perturbation, by default.
constexpr size_t kPerturbAfterS = 2;
/// The longest a perturbation may wait or last, and --stall-timeout: a day.
constexpr uint64_t kDayS = 86'400;

/// --network's own options, as bound (parse_network checks them together).
struct NetOptions {
    load::TestnetSettings settings;  ///< validators, base_port, timeout_commit_ms
    std::vector<load::App> apps{load::App::barrel, load::App::kvstore};
    /// CometBFT's settings, passed to testnet init.
    std::optional<uint64_t> timeout_propose, mempool_size, mempool_max_txs_bytes, max_block_bytes;
    std::optional<std::string> recheck, create_empty_blocks;
    std::optional<size_t> via, perturb_node, kill;
    std::optional<load::Perturbation> perturb;
    std::optional<uint64_t> kill_after_s, restart_after_s;
    bool keep{false};
    bool join{false};
};

struct Args {
    load::Config config;
    size_t runs{1};
    size_t accounts{10'000};
    uint64_t seed{1};
    std::string url, node, json_out, plot_out;
    std::optional<size_t> block_time_ms, max_block_txs, txpool_max;
    std::vector<std::string> node_args;
    std::string network_dir;
    NetOptions net;
};

/// The default block size of `barrel-node run` (--max-block-txs), which sizes the generated
/// genesis's gas limit when none is given.
constexpr size_t kNodeBlockTxs = 2500;

/// The load's options: what is sent, how, and to which node.
void bind_load(BoundOptions& o, Args& a) {
    load::Config& c = a.config;
    o.count("--txs", {"Transfers to send"}, c.txs, {1, gen::kMaxTotalTxs});
    o.count("--senders", "S", {"Accounts that send them"}, c.senders, {1, gen::kMaxAccounts});
    o.count("--batch", "B", {"Transactions per JSON-RPC batch"}, c.batch, {1, 1'000'000});
    o.count("--connections", "C", {"Keep-alive connections, each with its own senders"},
            c.connections, {1, 1024});
    o.count("--rate", "TPS", {"Offer this many TPS, steadily", "as fast as it goes"}, c.rate,
            {1, 100'000'000});
    o.count("--window", {"Most transactions sent and not yet mined", "no bound"}, c.window,
            {1, gen::kMaxTotalTxs});
    o.count("--runs", "R", {"Runs, each on a fresh node; medians reported"}, a.runs, {1, 1000});
    o.count("--accounts", "A", {"Accounts of the generated genesis, as barrel-node gen's"},
            a.accounts, {2, gen::kMaxAccounts});
    o.count("--seed", "S", {"Seed of the generated genesis's keys"}, a.seed, {0});
    o.value("--url", "http://HOST:PORT",
            {"Load a running node instead (its genesis made by barrel-node gen with the same "
             "--seed and --accounts)"},
            "", [&a](const std::string& text) {
                if (auto url = parse_http_url(text); !url) return url.error();
                a.url = text;
                return std::string{};
            });
    o.text("--node", "PATH", {"The barrel-node to start", "beside this program, then PATH"},
           a.node);
    o.count("--block-time", "MS", {"The node's --block-time", "the node's"}, a.block_time_ms,
            {0, 3'600'000});
    o.count("--max-block-txs", "N", {"The node's --max-block-txs", "the node's"}, a.max_block_txs,
            {1, gen::kMaxTxsPerBlock});
    o.count("--txpool-max", "N",
            {"The node's --txpool-max-pending", "enough for every transaction"}, a.txpool_max,
            {1, UINT32_MAX});
    o.repeated("--node-arg", "ARG", "One more argument for barrel-node run", a.node_args);
    o.duration("--poll-ms", "MS",
               {"How often to look for new blocks where the node pushes no new heads, or with "
                "--watch poll"},
               c.poll, {1, 60'000});
    o.value("--watch", "HOW",
            {"push: look for the next block when the node pushes a new head (a WebSocket "
             "subscription: eth_subscribe newHeads, CometBFT's NewBlockHeader), polling where it "
             "has none; poll: every --poll-ms throughout"},
            "push", [&c](const std::string& text) {
                if (text != "push" && text != "poll")
                    return "expected push or poll, got '" + text + "'";
                c.push_heads = text == "push";
                return std::string{};
            });
    o.duration("--stall-timeout", "S", {"Give up when nothing is sent or mined for this long"},
               c.stall, {1, kDayS});
    o.count("--gas-price", "GWEI",
            {"Gas price of the transfers in gwei (a node with a rising base fee needs more)"},
            c.gas_price_gwei, {1, 1'000'000});
    o.count("--check-receipts",
            {"After the clock, check the receipt of every N-th mined transaction (1: all)"},
            c.receipt_stride, {1, gen::kMaxTotalTxs});
    c.ceiling_threads = std::max(1u, std::thread::hardware_concurrency());
    o.count("--threads", {"Threads of the recovery ceiling", "every core"}, c.ceiling_threads,
            {1, 65536});
}

/// "true" or "false" for a CometBFT switch, into `target`; what is wrong with it, or "".
std::string parse_switch(const std::string& text, std::optional<std::string>& target) {
    if (text != "true" && text != "false") return "expected true or false, got '" + text + "'";
    target = text;
    return {};
}

/// The title of --network's options in the help; given_in() names those given.
constexpr const char* kNetworkGroup = "Options of --network";

/// --network's own options (each only with --network).
void bind_network(BoundOptions& o, NetOptions& n) {
    o.group(kNetworkGroup);
    load::TestnetSettings& s = n.settings;
    o.count("--validators", {"Validators of each testnet"}, s.validators, {1, kMaxValidators});
    o.value("--app", "APP", {"barrel, kvstore (CometBFT's built-in app) or both, alternating"},
            "both", [&n](const std::string& text) {
                n.apps.clear();
                if (text == "barrel" || text == "both") n.apps.push_back(load::App::barrel);
                if (text == "kvstore" || text == "both") n.apps.push_back(load::App::kvstore);
                if (n.apps.empty()) return "expected barrel, kvstore or both, got '" + text + "'";
                return std::string{};
            });
    o.count("--base-port", "P", {"The testnets' base port (node I: P+10I to P+10I+3)"}, s.base_port,
            {1, 65535});
    o.count("--timeout-commit", "MS", {"CometBFT's timeout_commit"}, s.timeout_commit_ms,
            {0, 3'600'000});
    const std::string init_default = "testnet init's";
    o.count("--timeout-propose", "MS", {"CometBFT's timeout_propose", init_default},
            n.timeout_propose, {1, kMaxCometSetting});
    o.count("--mempool-size", "N",
            {"CometBFT's mempool.size",
             "the larger of " + std::to_string(kCometMempoolSize) + " and --txs"},
            n.mempool_size, {1, kMaxCometSetting});
    o.count("--mempool-max-txs-bytes", "N", {"CometBFT's mempool.max_txs_bytes", init_default},
            n.mempool_max_txs_bytes, {1, kMaxCometSetting});
    o.value("--recheck", "BOOL", {"CometBFT's mempool.recheck, true or false", init_default}, "",
            [&n](const std::string& text) { return parse_switch(text, n.recheck); });
    o.count("--max-block-bytes", "N",
            {"CometBFT's block.max_bytes (sizes the gas limit)", init_default}, n.max_block_bytes,
            {1, kMaxCometSetting});
    o.value("--create-empty-blocks", "BOOL",
            {"CometBFT's create_empty_blocks, true or false", init_default}, "",
            [&n](const std::string& text) { return parse_switch(text, n.create_empty_blocks); });
    o.count("--via", "I", {"Every connection to node I", "connection c to node c mod N"}, n.via,
            {0, kMaxValidators - 1});
    o.value("--perturb", "KIND",
            {"Perturb the network mid-run: kill, pause, disconnect or partition", "none"}, "",
            [&n](const std::string& text) {
                n.perturb = load::parse_perturbation(text);
                if (!n.perturb)
                    return "expected kill, pause, disconnect or partition, got '" + text + "'";
                return std::string{};
            });
    o.count("--perturb-node", "I",
            {"The validator killed, paused or cut off (a partition cuts validators N/2 to N-1 "
             "off from the rest)",
             "N-1"},
            n.perturb_node, {0, kMaxValidators - 1});
    o.count("--kill", "I",
            {"SIGKILL node I mid-run and start it again: --perturb kill --perturb-node I"}, n.kill,
            {0, kMaxValidators - 1});
    o.count("--kill-after", "S",
            {"Seconds from the first send to the perturbation", std::to_string(kPerturbAfterS)},
            n.kill_after_s, {0, kDayS});
    o.count("--restart-after", "S",
            {"Seconds the perturbation lasts: to the restart, SIGCONT, reconnection or heal",
             std::to_string(kKillLastsS) + " for kill, " + std::to_string(kPerturbationLastsS) +
                 " for the others"},
            n.restart_after_s, {0, kDayS});
    o.flag("--keep", "Keep each run's testnet folder (stopped)", n.keep);
    o.flag("--join",
           "After each run a full node joins by block sync; its replay of the run's history is "
           "timed",
           n.join);
    o.group("");
}

Args parse_args(int argc, char** argv) {
    Args a;
    BoundOptions bound;
    bind_load(bound, a);
    bound.text("--network", "DIR",
               {"Load a network of testnets written under DIR (barrel-node testnet), barrel and "
                "CometBFT's kvstore alternating"},
               a.network_dir);
    bind_network(bound, a.net);
    bound.text("--json", "FILE", {"Write the runs as JSON here ('-': stdout)"}, a.json_out);
    bound.text("--plot", "FILE.svg", {"Draw sent and mined over time as SVG here"}, a.plot_out);
    CLI::App& app = bound.app();
    app.name("barrel-load");
    app.description(
        "Sends signed transfers to barrel-node run over JSON-RPC and measures what its clients "
        "get:\nsubmit and end-to-end TPS, send-to-mined latency, the node's stage times, and "
        "the\nratio to the recovery ceiling measured in the same run.");
    app.allow_extras();
    bench::parse_command_line(app, argc, argv);

    const load::Config& c = a.config;
    if (c.senders > a.accounts)
        usage_error("--senders: " + std::to_string(c.senders) + " is more than --accounts (" +
                    std::to_string(a.accounts) + ")");
    if (c.connections > c.senders)
        usage_error("--connections: " + std::to_string(c.connections) +
                    " is more than --senders (" + std::to_string(c.senders) +
                    "): each sender's transactions go over one connection, in nonce order");
    if (!a.url.empty()) {
        if (a.runs > 1) usage_error("--runs: only with a node of barrel-load's own (no --url)");
        for (const char* name :
             {"--node", "--block-time", "--max-block-txs", "--txpool-max", "--node-arg"})
            if (bound.given(name))
                usage_error(std::string{name} +
                            ": only with a node of barrel-load's own (no --url)");
    }
    if (!a.network_dir.empty() && !a.url.empty()) usage_error("--network: not with --url");
    if (const auto net_only = bound.given_in(kNetworkGroup);
        a.network_dir.empty() && !net_only.empty())
        usage_error(net_only.front() + ": only with --network");
    if (a.json_out == "-" && a.plot_out == "-")
        usage_error("--json and --plot cannot both write standard output");
    return a;
}

/// The genesis barrel-node gen makes with these --seed and --accounts (transfer mix), its gas
/// limit sized for blocks of `block_txs` transfers.
chain::Genesis make_genesis(const Args& a, size_t block_txs) {
    gen::Options o;
    o.seed = a.seed;
    o.accounts = a.accounts;
    o.txs = block_txs;
    auto g = gen::generate_genesis(o);
    if (!g) usage_error(g.error());
    return std::move(g).value();
}

std::vector<Address> recipients_of(const chain::Genesis& g) {
    std::vector<Address> out;
    out.reserve(g.alloc.accounts.size());
    for (const auto& [address, account] : g.alloc.accounts) out.push_back(address);
    return out;
}

/// The arguments of `barrel-node run` besides --datadir and --http: a pool that holds the
/// whole load unless told otherwise, and what was passed through.
std::vector<std::string> node_run_args(const Args& a) {
    const auto& c = a.config;
    std::vector<std::string> out{
        "--txpool-max-pending",
        std::to_string(a.txpool_max.value_or(std::max<size_t>(65536, c.txs))),
        "--txpool-max-per-sender",
        std::to_string(std::max<size_t>(4096, (c.txs + c.senders - 1) / c.senders)),
        // Batches on several connections can arrive out of nonce order: what waits behind a
        // gap for a moment must fit too.
        "--txpool-max-queued", std::to_string(std::max<size_t>(4096, c.txs)),
        "--txpool-max-queued-per-sender",
        std::to_string(std::max<size_t>(64, (c.txs + c.senders - 1) / c.senders))};
    if (a.block_time_ms) out.insert(out.end(), {"--block-time", std::to_string(*a.block_time_ms)});
    if (a.max_block_txs)
        out.insert(out.end(), {"--max-block-txs", std::to_string(*a.max_block_txs)});
    out.insert(out.end(), a.node_args.begin(), a.node_args.end());
    return out;
}

/// Against --url: the chain id, head and senders' nonces are the node's; a sender without
/// funds means the node's genesis is not this --seed and --accounts.
std::vector<load::RunResult> load_url(const Args& a) {
    const auto url = parse_http_url(a.url);
    if (!url) usage_error("--url: " + url.error());
    load::HttpConnection conn{*url};
    const uint64_t chain_id =
        load::quantity(conn.call("eth_chainId", nlohmann::json::array()), "eth_chainId");
    const uint64_t head =
        load::quantity(conn.call("eth_blockNumber", nlohmann::json::array()), "eth_blockNumber");
    const auto senders = load::sender_addresses(a.seed, a.config.senders);
    std::vector<uint64_t> nonces;
    for (size_t s0 = 0; s0 < senders.size(); s0 += a.config.batch) {
        std::vector<nlohmann::json> count_params, balance_params;
        for (size_t s = s0; s < std::min(s0 + a.config.batch, senders.size()); ++s) {
            count_params.push_back(nlohmann::json::array({to_hex(senders[s]), "pending"}));
            balance_params.push_back(nlohmann::json::array({to_hex(senders[s]), "latest"}));
        }
        const auto counts = conn.call_batch("eth_getTransactionCount", count_params);
        const auto balances = conn.call_batch("eth_getBalance", balance_params);
        for (size_t k = 0; k < counts.size(); ++k) {
            nonces.push_back(load::quantity(counts[k], "eth_getTransactionCount"));
            if (!balances[k].is_string() || balances[k].get<std::string>() == "0x0")
                usage_error("--url: sender " + std::to_string(s0 + k) + " (" +
                            to_hex(senders[s0 + k]) + ") has no funds on " + a.url +
                            ": its genesis was not made by barrel-node gen with --seed " +
                            std::to_string(a.seed) + " --accounts " + std::to_string(a.accounts));
        }
    }
    std::cerr << "barrel-load: signing " << a.config.txs << " transfers for chain " << chain_id
              << "...\n";
    const auto workload = load::prepare(a.config, a.seed, chain_id,
                                        recipients_of(make_genesis(a, kNodeBlockTxs)), nonces);
    return {load::run_load(a.config, workload, *url, head, std::nullopt)};
}

/// With a node of its own: one workload, signed once, sent to a fresh node per run.
std::vector<load::RunResult> load_own_nodes(const Args& a) {
    const std::string node = load::find_node(a.node);
    const chain::Genesis genesis = make_genesis(a, a.max_block_txs.value_or(kNodeBlockTxs));
    std::cerr << "barrel-load: signing " << a.config.txs << " transfers...\n";
    const auto workload =
        load::prepare(a.config, a.seed, genesis.config.chain_id, recipients_of(genesis),
                      std::vector<uint64_t>(a.config.senders, 0));
    std::vector<load::RunResult> results;
    for (size_t run = 1; run <= a.runs; ++run) {
        load::Config config = a.config;
        if (a.runs > 1) config.label = "run " + std::to_string(run) + "/" + std::to_string(a.runs);
        load::NodeProcess process{node, genesis, node_run_args(a)};
        std::cerr << "barrel-load: " << node << " serves " << process.url().text() << "\n";
        results.push_back(load::run_load(config, workload, process.url(), 0, process.pid()));
        if (const int status = process.stop(); status != 0)
            throw Failure{1, node + " run exited with status " + std::to_string(status) + ":" +
                                 process.recent_log()};
    }
    return results;
}

/// --via, --kill or --perturb-node's node, checked against the validators.
size_t node_index(const std::string& name, size_t i, size_t nodes) {
    if (i >= nodes)
        usage_error(name + ": node " + std::to_string(i) + " is not one of the " +
                    std::to_string(nodes) + " validators (0 to " + std::to_string(nodes - 1) + ")");
    return i;
}

/// barrel-node run's arguments for each validator, one word each ("--txpool-max-pending=N"):
/// node_run_args's pairs joined, then --node-arg as given.
std::vector<std::string> network_node_args(const Args& a) {
    Args plain = a;
    plain.node_args.clear();
    plain.max_block_txs.reset();  // the genesis's block size decides it (net_run.hpp)
    const auto pairs = node_run_args(plain);
    std::vector<std::string> out;
    for (size_t k = 0; k + 1 < pairs.size(); k += 2) out.push_back(pairs[k] + "=" + pairs[k + 1]);
    if (a.max_block_txs) out.push_back("--max-block-txs=" + std::to_string(*a.max_block_txs));
    out.insert(out.end(), a.node_args.begin(), a.node_args.end());
    return out;
}

/// The CometBFT settings given, as testnet init's arguments (the same for both apps).
std::vector<std::string> comet_arguments(const Args& a) {
    const NetOptions& n = a.net;
    std::vector<std::string> out;
    for (const auto& [name, value] : {std::pair{"--timeout-propose", n.timeout_propose},
                                      {"--mempool-size", n.mempool_size},
                                      {"--mempool-max-txs-bytes", n.mempool_max_txs_bytes},
                                      {"--max-block-bytes", n.max_block_bytes}})
        if (value) out.insert(out.end(), {name, std::to_string(*value)});
    // A mempool that holds the whole load, as barrel's pool does (CometBFT's default is 5,000
    // transactions): kvstore refuses what a full mempool cannot take, where barrel-node hands
    // it over again later, so the default would fail kvstore's runs, not measure them.
    if (!n.mempool_size)
        out.insert(out.end(), {"--mempool-size",
                               std::to_string(std::max<size_t>(kCometMempoolSize, a.config.txs))});
    for (const auto& [name, value] :
         {std::pair{"--recheck", n.recheck}, {"--create-empty-blocks", n.create_empty_blocks}})
        if (value) out.insert(out.end(), {name, *value});
    return out;
}

/// --perturb, --perturb-node, --kill and their timing, into m.config.fault.
void parse_perturbation_options(const NetOptions& o, load::NetworkMode& m) {
    const size_t n = m.settings.validators;
    auto& f = m.config.fault;
    f.kind = o.perturb;
    if (o.kill) {
        if (f.kind) usage_error("--kill: the same as --perturb kill --perturb-node I: give one");
        f.kind = load::Perturbation::kill;
        f.node = node_index("--kill", *o.kill, n);
    }
    if (o.perturb_node) {
        if (!f.kind) usage_error("--perturb-node: only with --perturb");
        if (*f.kind == load::Perturbation::partition)
            usage_error("--perturb-node: not with --perturb partition (it cuts validators " +
                        std::to_string(n / 2) + " to " + std::to_string(n - 1) + " off)");
        f.node = node_index("--perturb-node", *o.perturb_node, n);
    }
    if (f.kind == load::Perturbation::partition) {
        if (n < 2) usage_error("--perturb partition: needs 2 validators or more");
        for (size_t i = n / 2; i < n; ++i) f.side.push_back(i);
    }
    if (f.kind && !f.node) f.node = n - 1;
    const size_t lasts = f.kind == load::Perturbation::kill ? kKillLastsS : kPerturbationLastsS;
    for (const auto& [name, field, given, fallback] :
         {std::tuple{"--kill-after", &f.kill_after, o.kill_after_s, kPerturbAfterS},
          {"--restart-after", &f.restart_after, o.restart_after_s, lasts}}) {
        if (given && !f.kind) usage_error(std::string{name} + ": only with --perturb or --kill");
        *field = std::chrono::seconds{given.value_or(fallback)};
    }
}

/// --network and its options, checked: every mistake a usage error before anything starts.
load::NetworkMode parse_network(const Args& a) {
    load::NetworkMode m;
    m.config.load = a.config;
    if (a.config.batch > load::kCometMaxBatch)
        usage_error("--batch: at most " + std::to_string(load::kCometMaxBatch) +
                    " with --network (CometBFT's rpc.max_request_batch_size as testnet init sets "
                    "it)");
    if (a.block_time_ms)
        usage_error(
            "--block-time: not with --network (CometBFT makes the blocks: "
            "--timeout-commit)");
    m.seed = a.seed;
    m.accounts = a.accounts;
    m.runs = a.runs;
    m.keep = a.net.keep;
    m.join = a.net.join;
    m.dir = std::filesystem::absolute(a.network_dir).lexically_normal().string();
    m.settings = a.net.settings;
    m.apps = a.net.apps;
    m.max_block_bytes = a.net.max_block_bytes;
    m.settings.comet_args = comet_arguments(a);
    if (a.net.via) m.config.via = node_index("--via", *a.net.via, m.settings.validators);
    parse_perturbation_options(a.net, m);
    if (m.join && (m.config.fault.kind == load::Perturbation::disconnect ||
                   m.config.fault.kind == load::Perturbation::partition))
        usage_error(
            "--join: not with --perturb disconnect or partition (a joining node runs "
            "outside the validators' namespaces)");
    m.node = load::find_node(a.node);
    m.node_args = network_node_args(a);
    m.max_block_txs = a.max_block_txs;
    return m;
}

/// The heading of the network report: the load, the network and the settings.
std::string network_heading(const load::NetworkMode& m, const load::NetworkResults& r) {
    const auto& c = m.config.load;
    const size_t n = m.settings.validators;
    std::string h = "barrel-load --network: " + std::to_string(c.txs) + " transfers from " +
                    std::to_string(c.senders) + " senders, batches of " + std::to_string(c.batch) +
                    " over " + std::to_string(c.connections) + " connections (" +
                    (m.config.via ? "all to node " + std::to_string(*m.config.via)
                                  : "connection c to node c mod " + std::to_string(n)) +
                    ")" +
                    (c.rate > 0 ? ", offered at " + std::to_string(long(c.rate)) + " TPS" : "") +
                    "; " + std::to_string(n) + (n == 1 ? " validator" : " validators") +
                    ", timeout_commit " + std::to_string(m.settings.timeout_commit_ms) + " ms";
    for (size_t k = 0; k + 1 < m.settings.comet_args.size(); k += 2)
        h += ", " + m.settings.comet_args[k].substr(2) + " " + m.settings.comet_args[k + 1];
    if (!r.barrel.empty())
        h += "; barrel blocks up to " + std::to_string(r.block_txs) + " transfers (gas limit " +
             std::to_string(r.genesis_gas_limit) + ")";
    return h;
}

int run_network(const Args& a, std::optional<io::AtomicFile>& json_file,
                std::optional<io::AtomicFile>& plot_file) {
    const load::NetworkMode m = parse_network(a);
    const auto r = load::run_network_mode(m);
    const bool stdout_taken = (json_file && json_file->is_standard_output()) ||
                              (plot_file && plot_file->is_standard_output());
    (stdout_taken ? std::cerr : std::cout)
        << load::network_text_report(network_heading(m, r), r.barrel, r.kvstore) << std::flush;
    if (json_file) {
        nlohmann::json runs = nlohmann::json::array();
        for (const auto* set : {&r.barrel, &r.kvstore})
            for (const auto& run : *set) {
                auto doc = load::to_json(run);
                doc["timeline"] = load::timeline_json(run);
                runs.push_back(std::move(doc));
            }
        const auto ratio = load::app_ratio(r.barrel, r.kvstore);
        const nlohmann::json doc = {
            {"machine", bench::machine_info(m.config.load.ceiling_threads)},
            {"heading", network_heading(m, r)},
            {"config",
             {{"txs", m.config.load.txs},
              {"senders", m.config.load.senders},
              {"batch", m.config.load.batch},
              {"connections", m.config.load.connections},
              {"rate", m.config.load.rate},
              {"window", m.config.load.window},
              {"validators", m.settings.validators},
              {"timeout_commit_ms", m.settings.timeout_commit_ms},
              {"testnet_init_args", m.settings.comet_args},
              {"barrel_node_args", r.barrel_node_args},
              {"block_txs", r.block_txs},
              {"genesis_gas_limit", r.genesis_gas_limit}}},
            {"runs", runs},
            {"median",
             {{"barrel", load::medians(r.barrel)}, {"kvstore", load::medians(r.kvstore)}}},
            {"barrel_over_kvstore", ratio ? nlohmann::json(*ratio) : nlohmann::json(nullptr)},
        };
        json_file->write(doc.dump(2) + "\n");
        json_file->commit();
    }
    if (plot_file) {
        const auto& last =
            r.barrel.empty() || (!r.kvstore.empty() && m.apps.back() == load::App::kvstore)
                ? r.kvstore.back()
                : r.barrel.back();
        plot_file->write(load::network_svg(
            last, "barrel-load --network: " + std::string{load::app_name(last.app)} + ", " +
                      std::to_string(last.validators) + " validators, " +
                      std::to_string(static_cast<long>(last.end_to_end_tps)) + " TPS end to end"));
        plot_file->commit();
    }
    bool passed = true;
    for (const auto* set : {&r.barrel, &r.kvstore})
        for (const auto& run : *set) passed = passed && run.passed();
    return passed ? 0 : 1;
}

int run(int argc, char** argv) {
    const Args a = parse_args(argc, argv);
    std::optional<io::AtomicFile> json_file = bench::create_output("--json", a.json_out);
    std::optional<io::AtomicFile> plot_file = bench::create_output("--plot", a.plot_out);
    // An interrupt does not unwind to the files' destructors: it removes their temporaries.
    std::vector<std::unique_ptr<load::InterruptCleanup>> remove_on_interrupt;
    for (const auto* file : {&json_file, &plot_file})
        if (*file && !(*file)->temporary().empty())
            remove_on_interrupt.push_back(std::make_unique<load::InterruptCleanup>(
                [temp = (*file)->temporary()] { ::unlink(temp.c_str()); }));
    if (!a.network_dir.empty()) return run_network(a, json_file, plot_file);
    const auto results = a.url.empty() ? load_own_nodes(a) : load_url(a);

    const auto& c = a.config;
    std::string heading =
        "barrel-load: " + std::to_string(c.txs) + " transfers from " + std::to_string(c.senders) +
        " senders, batches of " + std::to_string(c.batch) + " over " +
        std::to_string(c.connections) + " connections" +
        (c.rate > 0 ? ", offered at " + std::to_string(static_cast<long>(c.rate)) + " TPS" : "") +
        (c.window > 0 ? ", window " + std::to_string(c.window) : "") + "; " +
        (a.url.empty() ? "a node of its own" : a.url);
    const bool stdout_taken = (json_file && json_file->is_standard_output()) ||
                              (plot_file && plot_file->is_standard_output());
    (stdout_taken ? std::cerr : std::cout) << load::text_report(heading, results) << std::flush;

    if (json_file) {
        nlohmann::json runs = nlohmann::json::array();
        for (const auto& r : results) runs.push_back(load::to_json(r));
        const nlohmann::json doc = {
            {"machine", bench::machine_info(c.ceiling_threads)},
            {"config",
             {{"txs", c.txs},
              {"senders", c.senders},
              {"batch", c.batch},
              {"connections", c.connections},
              {"rate", c.rate},
              {"window", c.window},
              {"accounts", a.accounts},
              {"seed", a.seed},
              {"url", a.url.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.url)},
              {"node_args",
               a.url.empty() ? nlohmann::json(node_run_args(a)) : nlohmann::json(nullptr)}}},
            {"runs", runs},
            {"median", load::median_of(results)},
        };
        json_file->write(doc.dump(2) + "\n");
        json_file->commit();
    }
    if (plot_file) {
        plot_file->write(load::svg_timeline(
            results.back(), "barrel-load: " + std::to_string(c.txs) + " transfers, " +
                                std::to_string(static_cast<long>(results.back().end_to_end_tps)) +
                                " TPS end to end"));
        plot_file->commit();
    }
    return std::all_of(results.begin(), results.end(), [](const auto& r) { return r.passed(); })
               ? 0
               : 1;
}

}  // namespace

int main(int argc, char** argv) {
    // A node that died mid-request closes its socket: a write then fails with EPIPE, reported,
    // rather than killing this process.
    std::signal(SIGPIPE, SIG_IGN);
    load::handle_interrupts();  // before any thread, so that every thread blocks them
    return bench::guarded_main([&] { return run(argc, argv); });
}
