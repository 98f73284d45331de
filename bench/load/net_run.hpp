#pragma once
// `barrel-load --network DIR`: the runs of a network load (README, "barrel-load"). The workload
// is signed once; each run starts a fresh testnet under DIR (barrel, or CometBFT's kvstore: for
// `both`, barrel then kvstore, R times), loads it, stops it and removes its folder.

#include "net_load.hpp"
#include "network.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace barrel::load {

/// CometBFT v0.38's default block.max_bytes (21 MiB): the genesis's gas limit is sized for blocks
/// this large unless --max-block-bytes says otherwise.
inline constexpr uint64_t kCometDefaultMaxBlockBytes = 22'020'096;

/// The most calls in one JSON-RPC batch CometBFT's RPC takes from barrel-load: testnet init sets
/// rpc.max_request_batch_size to 100.
inline constexpr size_t kCometMaxBatch = 100;

struct NetworkMode {
    NetConfig config;
    uint64_t seed{1};
    size_t accounts{10'000};
    std::string node;  ///< the barrel-node binary
    std::string dir;   ///< the work folder
    std::vector<App> apps;
    size_t runs{1};
    bool keep{false};
    bool join{false};          ///< after each run, a full node joins by block sync (timed)
    TestnetSettings settings;  ///< app, genesis and node_args are filled per run
    std::optional<uint64_t> max_block_bytes;
    /// barrel-node run's arguments (as single words: "--txpool-max-pending=N"), without
    /// --max-block-txs unless given (then the genesis is sized from it).
    std::vector<std::string> node_args;
    std::optional<size_t> max_block_txs;
};

struct NetworkResults {
    std::vector<NetRunResult> barrel, kvstore;
    size_t block_txs{0};  ///< barrel's block bound (genesis gas limit, --max-block-txs)
    uint64_t genesis_gas_limit{0};
    std::vector<std::string> barrel_node_args;
};

/// The transactions of `tx_bytes` that fit `max_block_bytes`, each with the protobuf tag and
/// length CometBFT's block data adds (the header and commit not counted: an upper bound): the
/// block size the genesis's gas limit and barrel-node's --max-block-txs allow.
size_t block_txs_for(uint64_t max_block_bytes, size_t tx_bytes);

NetworkResults run_network_mode(const NetworkMode& mode);

}  // namespace barrel::load
