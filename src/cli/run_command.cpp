// `barrel-node run`: the node service (docs/rpc.md). Its options bind straight into the node's
// configuration (NodeConfig: the pool's, the sealer's and the HTTP server's structs), each
// default the struct's own; the node itself (node.hpp) wires the library's parts together. The
// same binding reads a config file (--config) and writes one (--dump-config).

#include <barrel/cli/cli.hpp>
#include <barrel/core/endpoint.hpp>
#include <barrel/core/hex.hpp>

#include "command.hpp"
#include "node.hpp"
#include "options/bound_options.hpp"
#include "rpc/cors.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>

namespace barrel::cli {

namespace {

using options::BoundOptions;
using options::Sources;

constexpr unsigned kMaxRpcThreads = 1024;

/// `--http HOST:PORT` into `http`; what is wrong with it, or "".
std::string parse_endpoint(const std::string& text, rpc::HttpOptions& http) {
    auto endpoint = parse_host_port(text);
    if (!endpoint) return endpoint.error();
    http.address = std::move(endpoint->host);
    http.port = endpoint->port;
    return {};
}

/// `--coinbase ADDR` into `coinbase`; what is wrong with it, or "".
std::string parse_coinbase(const std::string& text, std::optional<Address>& coinbase) {
    const auto a = address_from_hex(text);
    if (!a)
        return a.error() == HexError::wrong_length
                   ? "expected an address (20 bytes, 40 hex digits), got '" + text + "'"
                   : describe_hex_error(text, a.error());
    coinbase = *a;
    return {};
}

/// A list option's parse: `parse` (rpc/cors.hpp) into `target`; what is wrong with it, or "".
std::function<std::string(const std::string&)> parse_list_into(
    Expected<std::vector<std::string>, std::string> (*parse)(std::string_view),
    std::vector<std::string>& target) {
    return [parse, &target](const std::string& text) {
        auto items = parse(text);
        if (!items) return items.error();
        target = std::move(items).value();
        return std::string{};
    };
}

void bind_pool(BoundOptions& o, pool::Config& c) {
    o.count("--txpool-max-pending", {"Pending transactions held"}, c.max_pending);
    o.count("--txpool-max-queued", {"Queued transactions held"}, c.max_queued);
    o.count("--txpool-max-per-sender", {"Transactions of one sender"}, c.max_per_sender);
    o.count("--txpool-max-queued-per-sender", {"Queued transactions of one sender"},
            c.max_queued_per_sender);
    o.duration("--txpool-lifetime", "S", {"Seconds a queued transaction is kept"},
               c.queued_lifetime);
}

void bind_sealer(BoundOptions& o, NodeConfig& c) {
    o.duration("--block-time", "MS",
               {"Seal at most every MS ms; 0: a block as soon as transactions are pending and "
                "the previous block is committed"},
               c.seal.block_time, {0});
    o.count("--max-block-txs",
            {"Transactions per block; a full block is sealed at once (with --abci: the most this "
             "node proposes; default: as many as the gas limit allows)"},
            c.seal.max_block_txs);
    o.value("--coinbase", "ADDR", {"Fee recipient", "the genesis coinbase"}, "",
            [&c](const std::string& text) { return parse_coinbase(text, c.coinbase); });
}

void bind_server(BoundOptions& o, NodeConfig& c) {
    rpc::HttpOptions& h = c.http;
    o.count("--rpc-max-body", "BYTES", {"Largest request body in bytes"}, h.max_body_bytes);
    o.count("--rpc-max-batch", {"Most calls in one batch"}, c.limits.max_batch);
    o.count("--rpc-max-connections", {"Connections at once"}, h.max_connections);
    o.count("--rpc-max-response", "BYTES",
            {"Bytes of a batch's response past which its calls get -32003"},
            c.limits.max_response_bytes);
    o.count("--rpc-max-unsent", "BYTES", {"Bytes of large responses unsent at once, all clients"},
            h.max_unsent_bytes);
    // As many threads read and write the connections as run their calls (rpc/http_server.hpp).
    o.count("--rpc-threads",
            {"Threads serving the connections, and as many running calls", "one per core"},
            h.workers, {1, kMaxRpcThreads});
    o.duration("--rpc-header-timeout", "MS", {"Time in ms for a request's header"},
               h.header_timeout);
    o.duration("--rpc-read-timeout", "MS", {"Time in ms for a whole request once begun"},
               h.read_timeout);
    o.duration("--rpc-idle-timeout", "MS", {"Keep-alive connection idle time in ms"},
               h.idle_timeout);
    o.value("--http-cors-origins", "LIST",
            {"Origins whose pages may call JSON-RPC from a browser (CORS) and open WebSocket "
             "connections: comma-separated, as a browser sends them (http://localhost:5173; one * "
             "in an origin matches any text: http://localhost:*), or * for any",
             "none"},
            "", parse_list_into(rpc::parse_cors_origins, h.access.cors_origins));
    o.value("--http-vhosts", "LIST",
            {"Host names a request may name in its Host header, comma-separated, or * for any "
             "(others get 403, against DNS rebinding; an IP address is always served)"},
            "localhost", parse_list_into(rpc::parse_vhosts, h.access.vhosts));
    o.flag("--no-status-page",
           "GET / answers an empty 200 (a health check) instead of the status page",
           c.no_status_page);
    o.flag("--rpc-allow-unprotected-txs",
           "Accept transactions without EIP-155 replay protection over RPC",
           c.allow_unprotected_txs);
}

/// `--abci`: tcp://HOST:PORT or unix://PATH; what is wrong with it, or "".
std::string parse_abci_address(const std::string& text, std::string& address) {
    const bool tcp = text.starts_with("tcp://") && text.size() > 6;
    const bool unix_socket = text.starts_with("unix://") && text.size() > 7;
    if (!tcp && !unix_socket) return "expected tcp://HOST:PORT or unix://PATH, got '" + text + "'";
    address = text;
    return {};
}

/// The options of a node whose blocks come from CometBFT.
void bind_network(BoundOptions& o, NodeConfig& c) {
    o.value("--abci", "ADDRESS",
            {"Take blocks from CometBFT: serve its ABCI connections at tcp://HOST:PORT or "
             "unix://PATH instead of sealing (--block-time is then CometBFT's timeout_commit)"},
            "", [&c](const std::string& text) { return parse_abci_address(text, c.abci); });
    o.value("--cometbft-rpc", "URL",
            {"CometBFT's RPC (http://HOST:PORT): admitted transactions are handed to it to "
             "gossip, and eth_syncing, net_peerCount and /metrics read the network from it"},
            "", [&c](const std::string& text) {
                if (auto endpoint = cometbft::parse_rpc_url(text); !endpoint)
                    return endpoint.error();
                c.cometbft_rpc = text;
                return std::string{};
            });
    o.count("--cometbft-batch",
            {"Transactions per broadcast_tx_async batch (CometBFT's rpc.max_request_batch_size "
             "bounds it)"},
            c.cometbft.batch, {1, 10'000});
    o.count("--snapshot-interval",
            {"With --abci: a state-sync snapshot after the commit of every multiple of N blocks, "
             "in DATADIR/snapshots/, listed and served to CometBFT; 0 takes none"},
            c.snapshot_interval, {0, std::numeric_limits<int64_t>::max()});
    o.count("--snapshot-keep", {"State-sync snapshots kept, the newest"}, c.snapshot_keep,
            {1, 1000});
}

/// --log-level and --log-format.
void bind_log(BoundOptions& o, NodeConfig& c) {
    o.value("--log-level", "LEVEL",
            {"Lines written: error, warn, info or debug, each with those before it"},
            std::string{log::name(c.log_level)}, [&c](const std::string& text) {
                const auto level = log::parse_level(text);
                if (!level) return "expected error, warn, info or debug, got " + squote(text);
                c.log_level = *level;
                return std::string{};
            });
    o.value("--log-format", "FORMAT",
            {"text, or json: one JSON object per line (\"t\", \"lvl\", \"module\", \"msg\" and "
             "the line's own members)"},
            std::string{log::name(c.log_format)}, [&c](const std::string& text) {
                const auto format = log::parse_format(text);
                if (!format) return "expected text or json, got " + squote(text);
                c.log_format = *format;
                return std::string{};
            });
}

/// Every option of `run`, bound into `c`.
void bind_run_options(BoundOptions& o, NodeConfig& c) {
    o.text("--datadir", "DIR", {"The node's data directory (barrel-node init)", "", true},
           c.datadir);
    rpc::HttpOptions& h = c.http;
    o.value("--http", "HOST:PORT",
            {"Where to serve JSON-RPC (an IPv6 address in brackets: [::1]:8545); port 0 picks a "
             "free one"},
            h.address + ":" + std::to_string(h.port),
            [&h](const std::string& text) { return parse_endpoint(text, h); });
    o.flag("--verify-state",
           "Before serving, check that the stored state sums to the head's state root (as "
           "barrel-node verify); refuse to start if not",
           c.verify_state);
    o.count("--retain-blocks",
            {"Blocks kept: older blocks, their transactions and receipts are deleted in the "
             "background (with --abci, CometBFT prunes its own block store to the same height); "
             "0 keeps every block"},
            c.retain_blocks, {0, std::numeric_limits<int64_t>::max()});
    bind_sealer(o, c);
    bind_pool(o, c.pool);
    bind_server(o, c);
    bind_network(o, c);
    bind_log(o, c);
}

/// What `run` takes besides its settings: where they come from, and whether to print them.
const OptionSpec kConfigOption{
    "--config", "FILE.toml",
    "Settings from a TOML file: each key an option above without its dashes "
    "(txpool-max-pending = 5000); an option given here overrides the file's"};
const OptionSpec kDumpConfigOption{
    "--dump-config", "",
    "Print the settings (the file's, then the options given) as a --config file, and exit"};

/// The options' specs: the settings', then --config and --dump-config.
std::vector<OptionSpec> run_option_specs() {
    auto specs =
        options::bound_specs<NodeConfig, bind_run_options, Sources::command_line_and_file>();
    specs.push_back(kConfigOption);
    specs.push_back(kDumpConfigOption);
    return specs;
}

int run_handler(Context& ctx, const ParsedArgs& args) {
    NodeConfig config;
    BoundOptions bound{Sources::command_line_and_file};
    bind_run_options(bound, config);
    if (const auto file = args.value(kConfigOption.name)) {
        const std::string path{*file};
        bound.apply_file(path, read_small_file(path, "config"));
    }
    bound.apply(args);
    if (args.has(kDumpConfigOption.name)) {
        ctx.out << "# barrel-node run's settings (barrel-node run --config FILE reads them back)\n"
                << bound.dump();
        return kExitOk;
    }
    bound.check_required("run");
    log::standard_error().set_level(config.log_level);
    log::standard_error().set_format(config.log_format);
    config.http.threads = config.http.workers;
    config.http.status_page = !config.no_status_page;
    if (!config.cometbft_rpc.empty() && config.abci.empty())
        fail("--cometbft-rpc needs --abci (a node on its own has no CometBFT)");
    if (config.snapshot_interval > 0 && config.abci.empty())
        fail("--snapshot-interval needs --abci (snapshots are served to CometBFT's state sync)");
    // Every validator builds each decided block itself: a fee recipient of one node's own
    // would give it another state root than the others', and halt it at the next height.
    if (!config.abci.empty() && config.coinbase)
        fail(
            "--coinbase cannot be used with --abci: every node of a network builds the same "
            "blocks (the fee recipient is the genesis coinbase)");

    // Under consensus a block's size is the chain's rule (gas limit, CometBFT's max_bytes):
    // --max-block-txs only bounds this node's own proposals.
    if (!config.abci.empty() && args.has("--max-block-txs"))
        config.max_proposal_txs = config.seal.max_block_txs;

    auto opened = Node::open(std::move(config), ctx.err);
    if (!opened) fail(opened.error());
    Node& node = **opened;
    if (auto started = node.start(); !started) fail(started.error());
    node.wait();
    if (auto stopped = node.stop(); !stopped) fail(stopped.error());
    return kExitOk;
}

}  // namespace

Command run_command() {
    return {
        .name = "run",
        .summary = "Run the node: JSON-RPC for wallets, a transaction pool and a block sealer",
        .args = {},
        .options = run_option_specs(),
        .details =
            "Serves Ethereum JSON-RPC over HTTP (POST /; GET /metrics in Prometheus text format;\n"
            "GET / a status page for a browser) for wallets, SDKs and, with --http-cors-origins,\n"
            "dapps in web pages (docs/rpc.md lists the methods, with curl examples). Sent\n"
            "transactions enter the pool; a block is sealed as soon as any are pending and the\n"
            "previous block is committed (with --block-time MS: at most every MS ms, or at once\n"
            "when --max-block-txs are pending). A line per sealed block goes to\n"
            "stderr. Admitted transactions are appended to DIR/transactions.rlp as they are\n"
            "admitted (re-admitted at the next start, also after a SIGKILL). SIGINT or SIGTERM:\n"
            "stop taking requests, finish the block in flight, rewrite the journal with the\n"
            "pool, exit 0.\n"
            "Settings may come from a TOML file (--config FILE.toml, a key per option:\n"
            "--dump-config prints one); an option on the command line overrides the file's.\n"
            "Log lines (stderr) have a time, a level and a module; --log-format json writes\n"
            "each as one JSON object.\n"
            "With --abci, the node is the application of a CometBFT node instead (DESIGN.md,\n"
            "\"Network\"; `barrel-node testnet` makes a local network): CometBFT decides every\n"
            "block, no sealer runs, and with --cometbft-rpc sent transactions are gossiped.",
        .handler = run_handler,
    };
}

}  // namespace barrel::cli
