#pragma once
// What `barrel-node testnet` (cli/testnet_command.cpp) and barrel-load share (internal, not
// installed): the node layout (ports, paths, addresses), the few edits made to the config.toml
// and genesis.json CometBFT writes, the one reader and writer of DIR/testnet.json, and the
// process and HTTP helpers the commands start, watch and stop the nodes with.
//
// A testnet folder (docs/network.md):
//   DIR/testnet.json      every node's addresses, paths and log files (Testnet below)
//   DIR/genesis.json      barrel's genesis, as given (or the default dev genesis)
//   DIR/nodeI/            node I: a CometBFT home (config/, data/) and barrel's datadir (barrel/),
//                         barrel.log, cometbft.log, barrel.pid, cometbft.pid, abci.sock
// A kvstore network (`init --app kvstore`, CometBFT's built-in application, to measure CometBFT
// alone) has the same layout without DIR/genesis.json and without barrel's files.

#include <barrel/core/expected.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::testnet {

// ---- Layout
// --------------------------------------------------------------------------------------

inline constexpr uint64_t kDefaultBasePort = 26600;
/// Node I's ports are base + kPortStride·I + the offsets below.
inline constexpr uint64_t kPortStride = 10;
inline constexpr uint64_t kP2pOffset = 0;
inline constexpr uint64_t kCometRpcOffset = 1;
inline constexpr uint64_t kJsonRpcOffset = 2;
inline constexpr uint64_t kAbciOffset = 3;  ///< used when the node's Unix socket path is too long
inline constexpr size_t kMaxNodes = 100;
inline constexpr std::string_view kLoopbackHost = "127.0.0.1";
inline constexpr uint64_t kDefaultTimeoutCommitMs = 1000;
/// Every validator takes a state snapshot every this many heights (`run --snapshot-interval`),
/// so that a node can join by state sync (`testnet join --state-sync`).
inline constexpr uint64_t kDefaultSnapshotInterval = 100;
inline constexpr uint64_t kMaxSnapshotInterval = 1'000'000'000;
/// Transactions per broadcast_tx_async batch barrel hands its CometBFT (`run --cometbft-batch`),
/// and the batch size each node's CometBFT accepts (rpc.max_request_batch_size; 10 by default).
inline constexpr size_t kBroadcastBatch = 100;
/// A Unix socket path longer than this does not fit sockaddr_un (108 bytes on Linux, 104 on
/// others, with the NUL); the node's ABCI address is then TCP.
inline constexpr size_t kMaxUnixSocketPath = 100;

/// The application a testnet's nodes run: barrel (`barrel-node run --abci`, a process beside each
/// `cometbft node`) or CometBFT's built-in kvstore (`proxy_app = "kvstore"`: in the cometbft
/// process, no work per transaction).
enum class App { barrel, kvstore };

std::string_view app_name(App app);                   ///< "barrel", "kvstore"
std::optional<App> parse_app(std::string_view name);  ///< the inverse; nullopt otherwise

struct NodePorts {
    uint16_t p2p{0};
    uint16_t cometbft_rpc{0};
    uint16_t json_rpc{0};
    uint16_t abci{0};
};

/// Node `index`'s ports from `base`, or "the ports of node I from base P run past 65535".
Expected<NodePorts, std::string> node_ports(uint64_t base, size_t index);

/// One node of a testnet, as testnet.json lists it. Paths are absolute.
struct Node {
    size_t index{0};
    bool validator{true};
    App app{App::barrel};
    std::string node_id;  ///< CometBFT's node ID (hex of its node key's address)
    /// The numeric IPv4 address its RPC, JSON-RPC and P2P listen on and its peers dial:
    /// kLoopbackHost unless init's --hosts gave each node its own (a node in a network namespace
    /// of its own, so that a test can cut its links: docs/network.md, "Perturbations").
    std::string host{kLoopbackHost};
    std::string home;     ///< CometBFT's home (DIR/nodeI)
    std::string datadir;  ///< barrel's (DIR/nodeI/barrel); "" for a kvstore node
    NodePorts ports;
    /// config.toml's proxy_app: unix:///…/abci.sock or tcp://127.0.0.1:PORT (barrel), "kvstore"
    std::string abci;

    std::string json_rpc_url() const;      ///< http://HOST:PORT
    std::string cometbft_rpc_url() const;  ///< http://HOST:PORT
    std::string p2p_address() const;       ///< ID@HOST:PORT
    std::string barrel_log() const;        ///< HOME/barrel.log
    std::string cometbft_log() const;      ///< HOME/cometbft.log
    std::string barrel_pid_file() const;
    std::string cometbft_pid_file() const;
};

/// Node `index` of a testnet in `dir` (absolute): its paths, ports and ABCI address.
Expected<Node, std::string> make_node(const std::string& dir, size_t index, bool validator,
                                      uint64_t base_port, std::string node_id,
                                      App app = App::barrel,
                                      std::string host = std::string{kLoopbackHost});

/// Whether `text` is a numeric IPv4 address (a node's host: testnet.json's URLs are built from
/// it, and the HTTP probes take addresses, never names).
bool is_ipv4_address(std::string_view text);

/// The environment variable `testnet start` (and `join`) reads a command prefix from: each node's
/// two processes are started as PREFIX… their command, with "{node}" in the prefix replaced by
/// the node's index, words split at spaces, the first an absolute path. A test seam: the
/// perturbation tests run node I in network namespace NS-I with
/// "/usr/sbin/ip netns exec NS-{node}" (ip execs the command: the pid stays the node's).
inline constexpr const char* kExecPrefixEnv = "BARREL_TESTNET_EXEC_PREFIX";

/// `prefix` (kExecPrefixEnv's value) for node `index`, as words: "" gives none.
std::vector<std::string> exec_prefix(std::string_view prefix, size_t index);

/// CometBFT settings `init` gives every node of either app (a setting that helps barrel is
/// applied to kvstore too, so that the two compare). One not given keeps CometBFT's own default:
/// the value `cometbft testnet` wrote is left as it is.
struct CometSettings {
    std::optional<uint64_t> timeout_propose_ms;     ///< [consensus] timeout_propose
    std::optional<uint64_t> mempool_size;           ///< [mempool] size (transactions)
    std::optional<uint64_t> mempool_max_txs_bytes;  ///< [mempool] max_txs_bytes
    std::optional<bool> recheck;                    ///< [mempool] recheck
    std::optional<bool> create_empty_blocks;        ///< [consensus] create_empty_blocks
    /// genesis.json's consensus_params.block.max_bytes
    std::optional<uint64_t> max_block_bytes;

    bool operator==(const CometSettings&) const = default;
};

/// The bounds init checks the settings against. CometBFT's own: a block of at most 100 MiB
/// (types.MaxBlockSizeBytes) that holds the genesis' evidence (consensus_params.evidence
/// .max_bytes, 1 MiB as `cometbft testnet` writes it; its Validate refuses a block smaller).
inline constexpr uint64_t kMaxTimeoutMs = 3'600'000;
inline constexpr uint64_t kMaxMempoolSize = 100'000'000;
inline constexpr uint64_t kMaxMempoolTxsBytes = uint64_t{1} << 40;
inline constexpr uint64_t kMinBlockBytes = 1'048'576;
inline constexpr uint64_t kMaxBlockBytes = 104'857'600;

/// A numeric setting: its init option, its testnet.json member (in "settings"), its bounds.
struct NumericSetting {
    std::string_view option;  ///< "--mempool-size"
    std::string_view member;  ///< "mempool_size"
    uint64_t min{0};
    uint64_t max{0};
    std::string_view unit;  ///< " ms" or ""
    std::optional<uint64_t> CometSettings::*field;
};
struct BoolSetting {
    std::string_view option;
    std::string_view member;
    std::optional<bool> CometSettings::*field;
};
inline constexpr NumericSetting kNumericSettings[] = {
    {"--timeout-propose", "timeout_propose_ms", 1, kMaxTimeoutMs, " ms",
     &CometSettings::timeout_propose_ms},
    {"--mempool-size", "mempool_size", 1, kMaxMempoolSize, "", &CometSettings::mempool_size},
    {"--mempool-max-txs-bytes", "mempool_max_txs_bytes", 1, kMaxMempoolTxsBytes, "",
     &CometSettings::mempool_max_txs_bytes},
    {"--max-block-bytes", "max_block_bytes", kMinBlockBytes, kMaxBlockBytes, "",
     &CometSettings::max_block_bytes},
};
inline constexpr BoolSetting kBoolSettings[] = {
    {"--recheck", "recheck", &CometSettings::recheck},
    {"--create-empty-blocks", "create_empty_blocks", &CometSettings::create_empty_blocks},
};

/// "expected MIN to MAX[UNIT], got VALUE" if `value` is out of the setting's bounds.
std::optional<std::string> range_error(const NumericSetting& s, uint64_t value);

/// DIR/testnet.json.
struct Testnet {
    std::string dir;  ///< absolute
    std::string chain_id;
    App app{App::barrel};
    uint64_t base_port{kDefaultBasePort};
    uint64_t timeout_commit_ms{kDefaultTimeoutCommitMs};
    CometSettings settings;
    /// More arguments for every node's `barrel-node run` (init --node-arg); none for kvstore.
    std::vector<std::string> node_args;
    /// `run --snapshot-interval` of every barrel-node (0: none); absent from an older
    /// testnet.json: 0.
    uint64_t snapshot_interval{0};
    std::vector<Node> nodes;

    std::string genesis_path() const;  ///< DIR/genesis.json: barrel's genesis
};

std::string testnet_file(const std::string& dir);  ///< DIR/testnet.json

/// testnet.json's text (one node per array element, the URLs a user copies), and back. The
/// parse checks what the commands rely on; its errors name the member: "nodes.2.home: missing".
/// A file without "app", "settings" or "node_args" (written before they were) is a barrel
/// network with CometBFT's defaults and no extra arguments.
std::string to_json_text(const Testnet& net);
Expected<Testnet, std::string> parse_testnet(std::string_view text);

// ---- CometBFT's files
// ----------------------------------------------------------------------------

/// A TOML basic string: "…" with `"` and `\` escaped.
std::string toml_string(std::string_view s);

/// `text` (a TOML file such as CometBFT's config.toml) with the value of `key` in `[section]`
/// ("" for the keys before the first section) replaced by `value` (a TOML literal: a quoted
/// string, true, a number). Only single-line `key = value` entries; the rest of the file,
/// comments included, is kept byte for byte. The key must be there (CometBFT writes every
/// key): "config.toml: no key 'laddr' in [p2p]".
Expected<std::string, std::string> set_toml_value(std::string_view text, std::string_view section,
                                                  std::string_view key, std::string_view value);

/// What a node's config.toml is given.
/// CometBFT's [statesync] for a node that joins from a snapshot instead of from height 1: the
/// light client's RPC servers (two, as CometBFT requires) and the header it trusts.
struct StateSyncConfig {
    std::vector<std::string> rpc_servers;  ///< http://HOST:PORT
    uint64_t trust_height{0};
    std::string trust_hash;  ///< the block hash at trust_height, upper-case hex as CometBFT prints
};

struct NodeConfig {
    const Node* node{nullptr};
    std::vector<std::string> persistent_peers;  ///< ID@HOST:PORT
    uint64_t timeout_commit_ms{kDefaultTimeoutCommitMs};
    CometSettings settings;  ///< max_block_bytes is genesis.json's, not config.toml's
    std::optional<StateSyncConfig> state_sync;
};

/// CometBFT's config.toml for `config.node`: moniker, proxy_app (its ABCI address, or
/// "kvstore"), abci = "socket", the RPC and P2P listen addresses on its host's ports, RPC
/// batches of kBroadcastBatch calls, its persistent peers,
/// duplicate IPs allowed and the address book not strict (every node may be 127.0.0.1, and
/// --hosts addresses are private ones),
/// timeout_commit, Prometheus off (barrel's /metrics reports the node), and the settings given.
Expected<std::string, std::string> configure_node(std::string_view config_toml,
                                                  const NodeConfig& config);

/// CometBFT's genesis.json (as `cometbft testnet` or `init` writes it) with `app_state` set to
/// barrel's genesis text, byte for byte (CometBFT hands `app_state` to InitChain as raw JSON).
/// Errors: "genesis.json: not a JSON object" and the like.
Expected<std::string, std::string> with_app_state(std::string_view cometbft_genesis,
                                                  std::string_view barrel_genesis);

/// CometBFT's genesis.json with consensus_params.block.max_bytes set to `max_bytes` (a string,
/// as CometBFT writes its int64s). The block must hold the genesis' evidence: "CometBFT's
/// genesis.json: consensus_params.evidence.max_bytes 1048576 does not fit a block of 1000".
Expected<std::string, std::string> with_max_block_bytes(std::string_view cometbft_genesis,
                                                        uint64_t max_bytes);

/// The `chain_id` of a CometBFT genesis.json.
Expected<std::string, std::string> cometbft_chain_id(std::string_view cometbft_genesis);

/// The dev genesis `testnet init` uses without --genesis: chain id 1337, base fee 7 wei, a
/// 30,000,000 gas limit, and kDevAccount (the first account of the well-known "test test … junk"
/// mnemonic, public: never for value) funded with 10^24 wei.
std::string default_genesis_text();
inline constexpr std::string_view kDevAccount = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
inline constexpr std::string_view kDevKey =
    "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

// ---- Processes -------------------------------------------------------------------------------
// The one launcher of other programs, barrel-node testnet's and barrel-load's: each starts with
// stdin /dev/null and no signal blocked or ignored, argv[0] a path or a name looked up on PATH,
// and an exec that fails reports its errno.

/// What a finished child process printed (stdout and stderr together) and its exit status
/// (128 + N for a signal N).
struct Finished {
    int status{0};
    std::string output;
};

/// Runs `argv` to completion; "cannot run 'PATH': REASON" if it cannot start.
Expected<Finished, std::string> run_program(const std::vector<std::string>& argv);

/// Where a child's stdout and stderr go: descriptors of this process (-1: /dev/null).
struct ChildOutput {
    int out{-1};
    int err{-1};
};

/// Starts `argv` as a child of this process, its output to `output`. Returns its pid, for
/// wait_child, or "cannot start 'PATH': REASON" (the exec's errno included).
Expected<int, std::string> spawn_child(const std::vector<std::string>& argv, ChildOutput output);

/// Waits for child `pid` to end: its exit status (128 + N for a signal N), or -1.
int wait_child(int pid);

/// Starts `argv` detached: its own session and process group, stdout and stderr appended to
/// `log`, not a child of this process (it outlives it). Returns its pid, or "cannot start
/// 'PATH': REASON" (the exec's errno included).
Expected<int, std::string> spawn_detached(const std::vector<std::string>& argv,
                                          const std::string& log);

/// Whether process `pid` runs (not a zombie) with `marker` among its arguments: a pid file left
/// over by a process that died, whose pid another process now has, is not taken for it.
bool process_running(int pid, std::string_view marker);

/// The pid in `pid_file` if that process runs with `marker` among its arguments.
std::optional<int> running_pid(const std::string& pid_file, std::string_view marker);

/// Node `n`'s barrel-node (none for a kvstore node) and cometbft, by their pid files, each
/// checked against its folder among the process's arguments (running_pid).
std::optional<int> barrel_pid(const Node& n);
std::optional<int> cometbft_pid(const Node& n);

/// Sends `signal` to the process group of `pid` (spawn_detached made it the leader), or to the
/// process alone if the group is gone.
void signal_group(int pid, int signal);

/// The last `lines` lines of the file at `path` ("" if it cannot be read).
std::string tail_of_file(const std::string& path, size_t lines);

// ---- HTTP probes (http/client.hpp) -----------------------------------------------------------

/// barrel's head over JSON-RPC (eth_blockNumber) at `json_rpc_url`.
Expected<uint64_t, std::string> barrel_height(const std::string& json_rpc_url);
/// CometBFT's latest block height (`/status`) at `rpc_url`.
Expected<uint64_t, std::string> cometbft_height(const std::string& rpc_url);

/// CometBFT's latest block (`/status`: sync_info.latest_block_height and latest_block_hash).
struct LatestBlock {
    uint64_t height{0};
    std::string hash;  ///< as CometBFT prints it: 64 upper-case hex digits
};
Expected<LatestBlock, std::string> cometbft_latest_block(const std::string& rpc_url);

}  // namespace barrel::testnet
