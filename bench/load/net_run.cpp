#include "net_run.hpp"

#include <barrel/chain/genesis.hpp>
#include <barrel/gen/workload.hpp>
#include <barrel/io/files.hpp>

#include "common/args.hpp"
#include "net_join.hpp"
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace barrel::load {

namespace fs = std::filesystem;

size_t block_txs_for(uint64_t max_block_bytes, size_t tx_bytes) {
    size_t length_bytes = 1;
    for (size_t v = tx_bytes; v >= 128; v >>= 7) ++length_bytes;
    return static_cast<size_t>(max_block_bytes / (tx_bytes + 1 + length_bytes));
}

namespace {

/// The genesis barrel-node gen makes for --seed and --accounts, its gas limit sized for blocks
/// of `block_txs` transfers.
chain::Genesis make_genesis(const NetworkMode& mode, size_t block_txs) {
    gen::Options o;
    o.seed = mode.seed;
    o.accounts = mode.accounts;
    o.txs = std::min(block_txs, gen::kMaxTxsPerBlock);
    auto g = gen::generate_genesis(o);
    if (!g) bench::usage_error(g.error());
    return std::move(g).value();
}

std::vector<Address> recipients_of(const chain::Genesis& g) {
    std::vector<Address> out;
    for (const auto& [address, account] : g.alloc.accounts) out.push_back(address);
    return out;
}

/// One run on a fresh testnet in DIR/NAME.
NetRunResult one_run(const NetworkMode& mode, const TestnetSettings& settings, const NetWorkload& w,
                     const std::string& name, const std::string& label, NetNamespaces* namespaces) {
    const std::string dir = (fs::path{mode.dir} / name).string();
    std::cerr << "barrel-load: " << label << ": testnet init and start in " << dir << "\n";
    Network net{mode.node, dir, settings, mode.keep, namespaces};
    NetConfig config = mode.config;
    config.load.label = label;
    NetRunResult r = run_network_load(config, w, net);
    if (mode.join && r.last_height > 0) {
        std::cerr << "barrel-load: " << label << ": a full node joins by block sync\n";
        r.join = net::time_join(net, r, config.load.stall);
    }
    net.stop();
    return r;
}

}  // namespace

NetworkResults run_network_mode(const NetworkMode& mode) {
    // A disconnect or a partition needs a link to cut: each validator in a namespace of its own,
    // made once for every run (each run's testnet is new, the namespaces are not), first: before
    // the signing's threads and minutes, which a missing capability would waste.
    std::optional<NetNamespaces> namespaces;
    std::vector<std::string> hosts;
    if (const auto kind = mode.config.fault.kind;
        kind == Perturbation::disconnect || kind == Perturbation::partition) {
        namespaces.emplace(mode.settings.validators);
        for (size_t i = 0; i < mode.settings.validators; ++i) hosts.push_back(namespaces->host(i));
        ::setenv("BARREL_TESTNET_EXEC_PREFIX", namespaces->exec_prefix().c_str(), 1);
    }
    std::error_code ec;
    fs::create_directories(mode.dir, ec);
    if (ec) throw bench::Failure{2, "--network: cannot create '" + mode.dir + "': " + ec.message()};
    const chain::Genesis first = make_genesis(mode, 2500);
    std::cerr << "barrel-load: signing " << mode.config.load.txs << " transfers...\n";
    const Workload workload =
        prepare(mode.config.load, mode.seed, first.config.chain_id, recipients_of(first),
                std::vector<uint64_t>(mode.config.load.senders, 0));

    NetworkResults out;
    const size_t tx_bytes = *std::max_element(workload.sizes.begin(), workload.sizes.end());
    out.block_txs = mode.max_block_txs.value_or(
        block_txs_for(mode.max_block_bytes.value_or(kCometDefaultMaxBlockBytes), tx_bytes));
    const chain::Genesis genesis = make_genesis(mode, out.block_txs);
    out.genesis_gas_limit = genesis.gas_limit;
    const std::string genesis_path = (fs::path{mode.dir} / "genesis.json").string();
    std::ofstream{genesis_path} << chain::to_json_text(genesis);
    out.barrel_node_args = mode.node_args;
    if (!mode.max_block_txs)
        out.barrel_node_args.insert(out.barrel_node_args.begin(),
                                    "--max-block-txs=" + std::to_string(out.block_txs));

    const NetWorkload barrel = barrel_workload(workload);
    const NetWorkload kvstore = kv_workload(workload);
    for (size_t run = 1; run <= mode.runs; ++run)
        for (const App app : mode.apps) {
            TestnetSettings settings = mode.settings;
            settings.app = app;
            settings.hosts = hosts;
            if (app == App::barrel) {
                settings.genesis_path = genesis_path;
                settings.node_args = out.barrel_node_args;
            }
            const std::string name = "run" + std::to_string(run) + "-" + std::string{app_name(app)};
            const std::string label = std::string{app_name(app)} + " " + std::to_string(run) + "/" +
                                      std::to_string(mode.runs);
            auto& results = app == App::barrel ? out.barrel : out.kvstore;
            results.push_back(one_run(mode, settings, app == App::barrel ? barrel : kvstore, name,
                                      label, namespaces ? &*namespaces : nullptr));
        }
    if (!mode.keep) fs::remove(genesis_path, ec);
    return out;
}

}  // namespace barrel::load
