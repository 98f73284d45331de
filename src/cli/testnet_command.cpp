// `barrel-node testnet init|start|stop|join`: a network of barrel nodes on CometBFT on loopback
// (docs/network.md). Each node is two processes, `cometbft node --home DIR/nodeI` (consensus,
// peer-to-peer, transaction gossip, block sync) and `barrel-node run --abci …` (its
// application, JSON-RPC, WebSocket, /metrics), started detached with their pid files beside them;
// testnet.hpp holds the files and the process helpers these handlers use.
//
// - `init` writes everything into a temporary folder beside DIR and renames it into place at the
//   end: a failure at any step leaves nothing behind.
// - A kvstore network (`init --app kvstore`) is the same network with CometBFT's built-in
//   application: only the `cometbft node` processes, to measure CometBFT's own limit beside barrel.
// - `start` starts barrel before cometbft (CometBFT connects to its application at once and
//   exits if none answers) and waits until each answers; `stop` stops cometbft before barrel
//   (an application that leaves first makes CometBFT fail its ABCI connection).

#include <barrel/chain/genesis.hpp>
#include <barrel/cli/cli.hpp>
#include <barrel/cli/files.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/store/store.hpp>

#include "command.hpp"
#include "options/bound_options.hpp"
#include "rpc/cors.hpp"
#include "testnet/testnet.hpp"
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <thread>

namespace barrel::cli {

namespace {

namespace fs = std::filesystem;
using namespace testnet;
// testnet's, not cli::Node and cli::NodeConfig (node.hpp), which a unity batch may hold too.
using testnet::Node;
using testnet::NodeConfig;
using Clock = std::chrono::steady_clock;
using options::BoundOptions;

/// The longest `start` and `join` wait for the nodes to answer (--timeout S).
constexpr uint64_t kMaxStartTimeoutS = 3600;
/// How long a SIGTERMed process has to exit before it gets SIGKILL, and a SIGKILLed one to be gone.
constexpr auto kStopGrace = std::chrono::seconds(20);
constexpr auto kKillGrace = std::chrono::seconds(10);
constexpr auto kPollInterval = std::chrono::milliseconds(100);
constexpr size_t kLogTailLines = 20;
/// The CometBFT release barrel speaks (DESIGN.md, "Network"); v0.38.x share its ABCI wire format.
constexpr std::string_view kCometVersionPrefix = "0.38.";

/// DIR as an absolute path without "." or "..", and no trailing slash.
std::string absolute_dir(const std::string& dir) {
    if (dir.empty()) fail("--dir: empty path");
    fs::path p = fs::absolute(fs::path{dir}).lexically_normal();
    if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
    return p.string();
}

bool is_executable_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

std::string first_line(const std::string& text) {
    std::string line = text.substr(0, text.find('\n'));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    return line;
}

/// The last non-empty line a program printed: what it says when it fails.
std::string last_line(const std::string& text) {
    std::istringstream in{text};
    std::string last;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) last = line;
    return last;
}

// ---- The cometbft binary ---------------------------------------------------------------------

/// Where cometbft is looked for without --cometbft: PATH, then Go's bin folders (`go install`
/// puts it in $(go env GOPATH)/bin: $GOPATH/bin, or ~/go/bin by default).
std::optional<std::string> search_cometbft() {
    auto in_dirs = [](const std::string& list) -> std::optional<std::string> {
        std::istringstream dirs{list};
        for (std::string d; std::getline(dirs, d, ':');) {
            if (d.empty()) continue;
            const std::string candidate = d + "/cometbft";
            if (is_executable_file(candidate)) return candidate;
        }
        return std::nullopt;
    };
    if (const char* path = std::getenv("PATH"); path != nullptr)
        if (auto found = in_dirs(path)) return found;
    std::string go_bins;
    if (const char* gopath = std::getenv("GOPATH"); gopath != nullptr && *gopath != '\0') {
        std::istringstream dirs{gopath};
        for (std::string d; std::getline(dirs, d, ':');) go_bins += d + "/bin:";
    }
    if (const char* path = std::getenv("PATH"); path != nullptr) {
        std::istringstream dirs{path};
        for (std::string d; std::getline(dirs, d, ':');) {
            if (d.empty() || !is_executable_file(d + "/go")) continue;
            if (auto r = run_program({d + "/go", "env", "GOPATH"}); r && r->status == 0) {
                std::istringstream gopaths{first_line(r->output)};
                for (std::string g; std::getline(gopaths, g, ':');) go_bins += g + "/bin:";
            }
            break;
        }
    }
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
        go_bins += std::string{home} + "/go/bin";
    return in_dirs(go_bins);
}

/// The cometbft to run: --cometbft, or the one found; it must be a v0.38 release.
std::string find_cometbft(const std::optional<std::string>& given) {
    std::string path;
    if (given) {
        path = *given;
        if (!is_executable_file(path))
            fail("--cometbft " + squote(path) + ": not an executable file");
    } else {
        auto found = search_cometbft();
        if (!found)
            fail(
                "no cometbft found (not on PATH, nor in $(go env GOPATH)/bin or ~/go/bin): build "
                "it with scripts/deps.sh --cometbft, or give --cometbft PATH");
        path = *found;
    }
    auto version = run_program({path, "version"});
    if (!version) fail(version.error());
    const std::string v = first_line(version->output);
    if (version->status != 0 || v.rfind(kCometVersionPrefix, 0) != 0)
        fail("cometbft " + squote(path) + " is version " + squote(v) +
             "; barrel speaks CometBFT v0.38 (scripts/deps.sh --cometbft builds v0.38.26)");
    return path;
}

/// Runs cometbft; its output is kept for the error line only.
std::string run_cometbft(const std::string& cometbft, const std::vector<std::string>& args) {
    std::vector<std::string> argv{cometbft};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_program(argv);
    if (!r) fail(r.error());
    if (r->status != 0)
        fail("cometbft " + args.front() + " failed (exit status " + std::to_string(r->status) +
             "): " + last_line(r->output));
    return r->output;
}

std::string node_id_of(const std::string& cometbft, const std::string& home) {
    const std::string id = first_line(run_cometbft(cometbft, {"show-node-id", "--home", home}));
    if (id.size() != 40 || !from_hex(id))
        fail("cometbft show-node-id: unexpected answer '" + id + "'");
    return id;
}

// ---- Files
// ---------------------------------------------------------------------------------------

void write_text(const std::string& path, std::string_view text) {
    if (auto r = io::replace_file(path, as_bytes(text), false); !r) fail(r.error().message);
}

chain::Genesis parse_barrel_genesis(const std::string& text, const std::string& path) {
    auto genesis = chain::parse_genesis(text);
    if (!genesis) fail("genesis " + squote(path) + ": " + genesis.error());
    return std::move(genesis).value();
}

/// barrel's datadir for a node, made as `barrel-node init` makes one.
void init_datadir(const std::string& datadir, const chain::Genesis& genesis) {
    auto s = store::Store::init(datadir, genesis);
    if (!s) fail(s.error().message);
}

/// Removes a folder being built unless it was handed over (renamed into place).
class BuildFolder {
public:
    explicit BuildFolder(std::string path) : m_path{std::move(path)} {}
    ~BuildFolder() {
        if (m_path.empty()) return;
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    BuildFolder(const BuildFolder&) = delete;
    BuildFolder& operator=(const BuildFolder&) = delete;
    const std::string& path() const noexcept { return m_path; }
    void release() noexcept { m_path.clear(); }

private:
    std::string m_path;
};

/// The testnet in --dir (`dir_as_given`).
Testnet load_testnet(const std::string& dir_as_given) {
    const std::string dir = absolute_dir(dir_as_given);
    const std::string file = testnet_file(dir);
    std::error_code ec;
    if (!fs::exists(file, ec))
        fail("no testnet in " + squote(dir) +
             " (no testnet.json): make one with barrel-node "
             "testnet init --dir " +
             dir_as_given);
    auto net = parse_testnet(read_small_file(file, "testnet file"));
    if (!net) fail(squote(file) + ": " + net.error());
    if (net->dir != dir)
        fail(squote(file) + ": made for " + squote(net->dir) +
             " (the paths in its nodes' config.toml are absolute: make the testnet again there)");
    return std::move(net).value();
}

/// --node I as the nodes to act on: one, or all of them.
std::vector<size_t> selected_nodes(const std::optional<uint64_t>& node, const Testnet& net) {
    std::vector<size_t> nodes;
    if (node) {
        const uint64_t i = *node;
        if (i >= net.nodes.size())
            fail("--node " + std::to_string(i) + ": the testnet has " +
                 std::to_string(net.nodes.size()) + " nodes (0 to " +
                 std::to_string(net.nodes.size() - 1) + ")");
        nodes.push_back(static_cast<size_t>(i));
    } else {
        for (size_t i = 0; i < net.nodes.size(); ++i) nodes.push_back(i);
    }
    return nodes;
}

// ---- Processes
// -----------------------------------------------------------------------------------

std::string self_executable() {
    std::error_code ec;
    const auto p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) fail("cannot find barrel-node's own path (/proc/self/exe): " + ec.message());
    return p.string();
}

void remove_file(const std::string& path) {
    std::error_code ec;
    fs::remove(path, ec);
}

/// The log's last lines on stderr, then the error line naming the node and the log.
[[noreturn]] void fail_with_log(Context& ctx, const std::string& message, const std::string& log) {
    const std::string tail = tail_of_file(log, kLogTailLines);
    if (!tail.empty()) ctx.err << "--- the last lines of " << log << " ---\n" << tail << "---\n";
    fail(message + " (its log: " + log + ")");
}

/// Waits until `probe` answers, the process dies or the deadline passes.
template <class Probe>
void wait_until_answers(Context& ctx, const Node& n, std::string_view program, int pid,
                        std::string_view marker, const std::string& url, const std::string& log,
                        Clock::time_point deadline, Probe probe) {
    const std::string who = "node " + std::to_string(n.index) + ": " + std::string{program};
    for (;;) {
        if (probe()) return;
        if (!process_running(pid, marker))
            fail_with_log(ctx, who + " exited before it answered on " + url, log);
        if (Clock::now() >= deadline)
            fail_with_log(ctx, who + " did not answer on " + url + " in time", log);
        std::this_thread::sleep_for(kPollInterval);
    }
}

/// Sends `signal` to the processes and waits until they are gone: those still there after
/// `grace` get SIGKILL. Returns whether any had to be killed so.
bool stop_processes(const std::vector<std::pair<int, std::string>>& processes, int signal,
                    Clock::duration grace) {
    for (const auto& [pid, marker] : processes) signal_group(pid, signal);
    auto all_gone = [&] {
        for (const auto& [pid, marker] : processes)
            if (process_running(pid, marker)) return false;
        return true;
    };
    const auto deadline = Clock::now() + grace;
    while (!all_gone() && Clock::now() < deadline) std::this_thread::sleep_for(kPollInterval / 2);
    if (all_gone()) return false;
    for (const auto& [pid, marker] : processes)
        if (process_running(pid, marker)) signal_group(pid, SIGKILL);
    const auto kill_deadline = Clock::now() + kKillGrace;
    while (!all_gone() && Clock::now() < kill_deadline)
        std::this_thread::sleep_for(kPollInterval / 2);
    if (!all_gone()) fail("processes did not exit after SIGKILL");
    return true;
}

void write_pid_file(const std::string& path, int pid) {
    write_text(path, std::to_string(pid) + "\n");
}

/// Node `n`'s `barrel-node run`: its datadir, ABCI address and ports, then init's --node-args.
std::vector<std::string> barrel_argv(const std::string& self, const Testnet& net, const Node& n) {
    std::vector<std::string> argv{self,
                                  "run",
                                  "--datadir",
                                  n.datadir,
                                  "--abci",
                                  n.abci,
                                  "--cometbft-rpc",
                                  n.cometbft_rpc_url(),
                                  "--cometbft-batch",
                                  std::to_string(kBroadcastBatch),
                                  "--http",
                                  n.host + ":" + std::to_string(n.ports.json_rpc)};
    if (net.snapshot_interval != 0) {
        argv.emplace_back("--snapshot-interval");
        argv.push_back(std::to_string(net.snapshot_interval));
    }
    // A dapp in development on this machine can call every node, unless init said otherwise.
    if (std::find(net.node_args.begin(), net.node_args.end(), "--http-cors-origins") ==
        net.node_args.end()) {
        argv.emplace_back("--http-cors-origins");
        argv.emplace_back(rpc::kLocalDappOrigins);
    }
    argv.insert(argv.end(), net.node_args.begin(), net.node_args.end());
    return argv;
}

std::string unix_socket_of(const Node& n) {
    const std::string prefix = "unix://";
    return n.abci.rfind(prefix, 0) == 0 ? n.abci.substr(prefix.size()) : std::string{};
}

using Row = std::vector<std::string>;

/// Columns padded to their widest entry, two spaces apart.
void print_rows(Context& ctx, const std::vector<Row>& rows) {
    std::vector<size_t> width;
    for (const auto& r : rows) {
        width.resize(std::max(width.size(), r.size()));
        for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
    }
    for (const auto& r : rows) {
        std::string line;
        for (size_t c = 0; c < r.size(); ++c)
            line += c + 1 == r.size() ? r[c] : r[c] + std::string(width[c] - r[c].size() + 2, ' ');
        ctx.out << line << "\n";
    }
}

/// A table's first columns: the node, and its JSON-RPC URL (a kvstore node has none).
Row node_columns(const Testnet& net, const Node& n, bool with_full) {
    Row row{std::to_string(n.index) + (with_full && !n.validator ? " (full)" : "")};
    if (net.app == App::barrel) row.push_back(n.json_rpc_url());
    return row;
}

Row header_row(const Testnet& net, std::string_view last) {
    Row row{"node"};
    if (net.app == App::barrel) row.emplace_back("JSON-RPC");
    row.emplace_back("CometBFT RPC");
    row.emplace_back(last);
    return row;
}

void print_table(Context& ctx, const Testnet& net, const std::vector<size_t>& nodes) {
    std::vector<Row> rows{header_row(net, "height")};
    for (size_t i : nodes) {
        const Node& n = net.nodes[i];
        const auto h = cometbft_height(n.cometbft_rpc_url());
        Row row = node_columns(net, n, true);
        row.push_back(n.cometbft_rpc_url());
        row.push_back(h ? std::to_string(*h) : "-");
        rows.push_back(std::move(row));
    }
    print_rows(ctx, rows);
}

/// The nodes of `nodes` not running whole, each with whether its barrel-node must be started
/// (a kvstore node has none). A cometbft running without its barrel-node is stopped first.
std::vector<std::pair<size_t, bool>> nodes_to_start(Context& ctx, const Testnet& net,
                                                    const std::vector<size_t>& nodes) {
    std::vector<std::pair<size_t, bool>> out;
    for (size_t i : nodes) {
        const Node& n = net.nodes[i];
        const bool has_barrel = n.app == App::barrel;
        const auto b = barrel_pid(n);
        const auto c = cometbft_pid(n);
        if (c && (b || !has_barrel)) {
            ctx.out << "node " << i << " is already running\n";
            continue;
        }
        if (has_barrel && !b && c) {
            // A CometBFT whose application is gone cannot go on: start the pair afresh.
            ctx.out << "node " << i << ": cometbft runs without its barrel-node: restarting both\n";
            stop_processes({{*c, n.home}}, SIGTERM, kStopGrace);
        }
        out.emplace_back(i, has_barrel && !b);
    }
    return out;
}

/// Node `n`'s command `argv` behind kExecPrefixEnv's prefix, if the environment gives one.
std::vector<std::string> with_exec_prefix(const Node& n, std::vector<std::string> argv) {
    const char* prefix = std::getenv(kExecPrefixEnv);
    if (prefix == nullptr || *prefix == '\0') return argv;
    std::vector<std::string> full = exec_prefix(prefix, n.index);
    if (full.empty() || full.front().front() != '/')
        fail(std::string{kExecPrefixEnv} + ": expected an absolute path first, got " +
             squote(prefix));
    full.insert(full.end(), argv.begin(), argv.end());
    return full;
}

/// Starts the barrel-nodes of `nodes` and waits until each answers JSON-RPC and its socket.
void start_barrels(Context& ctx, const Testnet& net, const std::vector<size_t>& nodes,
                   Clock::time_point deadline) {
    const std::string self = self_executable();
    std::vector<std::pair<size_t, int>> started;
    for (size_t i : nodes) {
        const Node& n = net.nodes[i];
        // A socket left by a killed node: the node is stopped, so nothing listens on it.
        if (const std::string socket = unix_socket_of(n); !socket.empty()) remove_file(socket);
        auto pid = spawn_detached(with_exec_prefix(n, barrel_argv(self, net, n)), n.barrel_log());
        if (!pid) fail("node " + std::to_string(i) + ": " + pid.error());
        write_pid_file(n.barrel_pid_file(), *pid);
        started.emplace_back(i, *pid);
    }
    for (const auto& [i, pid] : started) {
        const Node& n = net.nodes[i];
        const std::string socket = unix_socket_of(n);
        wait_until_answers(ctx, n, "barrel-node", pid, n.datadir, n.json_rpc_url(), n.barrel_log(),
                           deadline, [&] {
                               std::error_code ec;
                               return barrel_height(n.json_rpc_url()).has_value() &&
                                      (socket.empty() || fs::exists(socket, ec));
                           });
    }
}

/// Starts the cometbfts of `nodes` and waits until each answers /status.
void start_cometbfts(Context& ctx, const Testnet& net, const std::vector<size_t>& nodes,
                     const std::string& cometbft, Clock::time_point deadline) {
    std::vector<std::pair<size_t, int>> started;
    for (size_t i : nodes) {
        const Node& n = net.nodes[i];
        auto pid = spawn_detached(with_exec_prefix(n, {cometbft, "node", "--home", n.home}),
                                  n.cometbft_log());
        if (!pid) fail("node " + std::to_string(i) + ": " + pid.error());
        write_pid_file(n.cometbft_pid_file(), *pid);
        started.emplace_back(i, *pid);
    }
    for (const auto& [i, pid] : started) {
        const Node& n = net.nodes[i];
        wait_until_answers(ctx, n, "cometbft", pid, n.home, n.cometbft_rpc_url() + "/status",
                           n.cometbft_log(), deadline,
                           [&] { return cometbft_height(n.cometbft_rpc_url()).has_value(); });
    }
}

/// Waits until every node of `nodes` has a block past genesis.
void wait_for_first_blocks(Context& ctx, const Testnet& net, const std::vector<size_t>& nodes,
                           Clock::time_point deadline) {
    for (size_t i : nodes) {
        const Node& n = net.nodes[i];
        for (;;) {
            const auto h = cometbft_height(n.cometbft_rpc_url());
            if (h && *h >= 1) break;
            if (Clock::now() >= deadline)
                fail_with_log(ctx,
                              "node " + std::to_string(i) +
                                  ": no block committed in time (are its peers up?)",
                              n.cometbft_log());
            std::this_thread::sleep_for(kPollInterval);
        }
    }
}

/// Starts the nodes that do not run (barrel, then cometbft), waits until each answers, then
/// prints the table. With `wait_for_blocks`, waits until every node has a block past genesis.
void start_nodes(Context& ctx, const Testnet& net, const std::vector<size_t>& nodes,
                 const std::string& cometbft, std::chrono::seconds timeout, bool wait_for_blocks) {
    const auto deadline = Clock::now() + timeout;
    std::vector<size_t> need_barrel, need_cometbft;
    for (const auto& [i, barrel] : nodes_to_start(ctx, net, nodes)) {
        if (barrel) need_barrel.push_back(i);
        need_cometbft.push_back(i);
    }
    if (!need_barrel.empty()) start_barrels(ctx, net, need_barrel, deadline);
    start_cometbfts(ctx, net, need_cometbft, cometbft, deadline);
    if (wait_for_blocks) wait_for_first_blocks(ctx, net, nodes, deadline);
    print_table(ctx, net, nodes);
}

// ---- The options
// ---------------------------------------------------------------------------------

void bind_dir(BoundOptions& o, std::string& dir) {
    o.text("--dir", "DIR", {"The testnet's folder", "", true}, dir);
}

void bind_cometbft(BoundOptions& o, std::optional<std::string>& path) {
    o.text("--cometbft", "PATH",
           {"The cometbft binary", "on PATH, or in $(go env GOPATH)/bin or ~/go/bin"}, path);
}

void bind_timeout(BoundOptions& o, std::chrono::seconds& timeout) {
    o.duration("--timeout", "S", {"Seconds to wait for the nodes to answer"}, timeout,
               {1, kMaxStartTimeoutS});
}

void bind_node(BoundOptions& o, std::optional<uint64_t>& node) {
    o.count("--node", "I", {"Only node I", "every node"}, node, {0, kMaxNodes - 1});
}

/// What `start`, `stop` and `join` are given.
struct NodesOptions {
    std::string dir;  ///< as given
    std::optional<uint64_t> node;
    std::optional<std::string> cometbft;
    std::chrono::seconds timeout{60};
    bool kill{false};
    bool state_sync{false};
};

void bind_start(BoundOptions& o, NodesOptions& c) {
    bind_dir(o, c.dir);
    bind_node(o, c.node);
    bind_cometbft(o, c.cometbft);
    bind_timeout(o, c.timeout);
}

void bind_stop(BoundOptions& o, NodesOptions& c) {
    bind_dir(o, c.dir);
    bind_node(o, c.node);
    o.flag("--kill", "SIGKILL both processes at once (a crash) instead of SIGTERM", c.kill);
}

void bind_join(BoundOptions& o, NodesOptions& c) {
    bind_dir(o, c.dir);
    o.flag("--state-sync",
           "Join from a validator's state snapshot (CometBFT state sync, checked against the "
           "light client's app hash) instead of replaying every block",
           c.state_sync);
    bind_cometbft(o, c.cometbft);
    bind_timeout(o, c.timeout);
}

// ---- init
// ----------------------------------------------------------------------------------------

/// What `init` is asked for: bound (bind_init), then checked (init_options).
struct InitOptions {
    std::string dir_as_given;
    std::string dir;  ///< absolute
    size_t validators{0};
    App app{App::barrel};
    uint64_t base_port{kDefaultBasePort};
    std::vector<std::string> hosts;  ///< one per validator (--hosts), or all kLoopbackHost
    uint64_t timeout_commit_ms{kDefaultTimeoutCommitMs};
    CometSettings settings;
    std::vector<std::string> node_args;
    uint64_t snapshot_interval{kDefaultSnapshotInterval};
    std::optional<std::string> genesis_path;  ///< none: the default dev genesis
    std::optional<std::string> cometbft;
    std::string genesis_text;  ///< barrel's genesis, as given (none for kvstore)
    chain::Genesis genesis;
};

/// The options `testnet start` gives each barrel-node itself: a --node-arg may not give them
/// again (run would refuse the option given twice, and the node would not start).
constexpr std::array<std::string_view, 6> kStartsOwnArgs = {
    "--datadir", "--abci", "--cometbft-rpc", "--cometbft-batch", "--http", "--snapshot-interval"};

/// What each CometBFT setting of init is, and CometBFT's own default, which a setting not given
/// keeps (testnet.hpp's kNumericSettings and kBoolSettings hold their ranges).
struct SettingHelp {
    std::string_view option;
    std::string_view help;
    std::string_view cometbft_default;
};
constexpr SettingHelp kSettingHelp[] = {
    {"--timeout-propose", "[consensus] timeout_propose, in ms", "3000"},
    {"--mempool-size", "[mempool] size, in transactions", "5000"},
    {"--mempool-max-txs-bytes", "[mempool] max_txs_bytes", "1073741824"},
    {"--max-block-bytes", "The genesis' consensus_params.block.max_bytes", "22020096"},
    {"--recheck", "[mempool] recheck", "true"},
    {"--create-empty-blocks", "[consensus] create_empty_blocks", "true"},
};

BoundOptions::Help setting_help(std::string_view option) {
    for (const SettingHelp& h : kSettingHelp)
        if (h.option == option)
            return {std::string{h.help}, "CometBFT's, " + std::string{h.cometbft_default}};
    return {};
}

void bind_settings(BoundOptions& o, CometSettings& c) {
    for (const NumericSetting& s : kNumericSettings)
        o.count(std::string{s.option}, s.unit.empty() ? "N" : "MS", setting_help(s.option),
                c.*s.field, {s.min, s.max});
    for (const BoolSetting& s : kBoolSettings)
        o.value(std::string{s.option}, "true|false", setting_help(s.option), "",
                [&c, field = s.field](const std::string& text) {
                    if (text != "true" && text != "false")
                        return "expected true or false, got " + squote(text);
                    c.*field = text == "true";
                    return std::string{};
                });
}

/// --hosts A,B,…: each a numeric IPv4 address (how many: checked against --validators later).
std::string parse_hosts(const std::string& text, std::vector<std::string>& hosts) {
    hosts.clear();
    std::istringstream in{text};
    for (std::string h; std::getline(in, h, ',');) {
        if (!is_ipv4_address(h)) return squote(h) + " is not a numeric IPv4 address";
        hosts.push_back(h);
    }
    return {};
}

void bind_init(BoundOptions& o, InitOptions& c) {
    bind_dir(o, c.dir_as_given);
    o.count("--validators", {"How many validators", "", true}, c.validators, {1, kMaxNodes});
    o.text("--genesis", "FILE",
           {"barrel's genesis (docs/formats.md)", "a dev genesis funding one well-known key"},
           c.genesis_path);
    o.count("--base-port", "P",
            {"Node I listens on P+10I (P2P), P+10I+1 (CometBFT RPC), P+10I+2 (JSON-RPC)"},
            c.base_port, {1, 65535});
    o.value("--hosts", "A,B,...",
            {"Each validator's numeric IPv4 address, in order, to listen on and be dialled at "
             "(for nodes in network namespaces of their own)",
             std::string{kLoopbackHost} + " for all"},
            "", [&c](const std::string& text) { return parse_hosts(text, c.hosts); });
    o.count("--timeout-commit", "MS", {"CometBFT's pause after each block, in ms"},
            c.timeout_commit_ms, {0, kMaxTimeoutMs});
    o.value("--app", "barrel|kvstore",
            {"barrel, or kvstore: CometBFT's built-in application, no work per transaction "
             "(CometBFT's own limit)"},
            std::string{app_name(c.app)}, [&c](const std::string& text) {
                const auto app = parse_app(text);
                if (!app) return "expected barrel or kvstore, got " + squote(text);
                c.app = *app;
                return std::string{};
            });
    bind_settings(o, c.settings);
    o.count("--snapshot-interval",
            {"Every barrel-node takes a state snapshot every N heights, for nodes that join by "
             "state sync; 0: none"},
            c.snapshot_interval, {0, kMaxSnapshotInterval});
    o.repeated("--node-arg", "ARG",
               "One more argument for every node's barrel-node run (--node-arg "
               "--txpool-max-pending --node-arg 40000)",
               c.node_args);
    bind_cometbft(o, c.cometbft);
}

/// What only a barrel network takes (--genesis, --node-arg, --snapshot-interval), checked; the
/// genesis read.
void check_app_options(const ParsedArgs& args, InitOptions& o) {
    if (o.app == App::kvstore) {
        if (o.genesis_path)
            fail("--genesis: a kvstore network has no barrel genesis (--app kvstore)");
        if (!o.node_args.empty()) fail("--node-arg: a kvstore network runs no barrel-node");
        if (args.has("--snapshot-interval"))
            fail("--snapshot-interval: a kvstore network runs no barrel-node (--app kvstore)");
        o.snapshot_interval = 0;
        return;
    }
    for (std::string_view a : o.node_args)
        for (std::string_view own : kStartsOwnArgs)
            if (a == own || a.substr(0, a.find('=')) == own)
                fail("--node-arg " + squote(a) + ": testnet start gives each node its own " +
                     std::string{own});
    o.genesis_text =
        o.genesis_path ? read_small_file(*o.genesis_path, "genesis") : default_genesis_text();
    o.genesis = parse_barrel_genesis(o.genesis_text, o.genesis_path.value_or("(default)"));
}

/// init's options, every value checked.
InitOptions init_options(const ParsedArgs& args) {
    InitOptions o = options::bound_from<InitOptions, bind_init>(args);
    o.dir = absolute_dir(o.dir_as_given);
    if (auto last = node_ports(o.base_port, o.validators - 1); !last)
        fail("--base-port: " + last.error());
    if (!args.has("--hosts"))
        o.hosts.assign(o.validators, std::string{kLoopbackHost});
    else if (o.hosts.size() != o.validators)
        fail("--hosts: expected one address per validator (" + std::to_string(o.validators) +
             "), got " + std::to_string(o.hosts.size()));
    check_app_options(args, o);
    std::error_code ec;
    if (fs::exists(o.dir, ec)) {
        if (!fs::is_directory(o.dir, ec))
            fail("--dir " + squote(o.dir) + ": exists and is not a directory");
        if (!fs::is_empty(o.dir, ec)) fail("--dir " + squote(o.dir) + ": exists and is not empty");
    }
    return o;
}

/// DIR's missing parents, made now: the folder to remove again if init fails ("" if none).
std::string make_parents(const fs::path& dir) {
    std::error_code ec;
    fs::path first_missing;
    for (fs::path p = dir.parent_path(); !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
        first_missing = p;
        if (p == p.root_path()) break;
    }
    fs::create_directories(dir.parent_path(), ec);
    if (ec) fail("cannot create " + squote(dir.parent_path().string()) + ": " + ec.message());
    return first_missing.string();
}

/// The network's CometBFT genesis.json: `cometbft testnet`'s, with the block size given and, for
/// barrel, barrel's genesis as its app_state (kvstore takes none).
std::string network_genesis(const InitOptions& o, std::string comet_genesis) {
    if (o.settings.max_block_bytes) {
        auto sized = with_max_block_bytes(comet_genesis, *o.settings.max_block_bytes);
        if (!sized) fail(sized.error());
        comet_genesis = std::move(*sized);
    }
    if (o.app == App::kvstore) return comet_genesis;
    auto full = with_app_state(comet_genesis, o.genesis_text);
    if (!full) fail(full.error());
    return std::move(*full);
}

/// Node `n`'s config.toml in `home` for the network's settings, with `peers` as its peers.
void write_node_config(const Testnet& net, const Node& n, const std::string& home,
                       const std::vector<const Node*>& peers,
                       std::optional<StateSyncConfig> state_sync = std::nullopt) {
    NodeConfig config{&n, {}, net.timeout_commit_ms, net.settings, std::move(state_sync)};
    for (const Node* peer : peers) config.persistent_peers.push_back(peer->p2p_address());
    auto toml =
        configure_node(read_small_file(home + "/config/config.toml", "config.toml"), config);
    if (!toml) fail(toml.error());
    write_text(home + "/config/config.toml", *toml);
}

/// The network written into `tmp` (to be renamed to o.dir): `cometbft testnet`, then each node's
/// config.toml, genesis.json and barrel datadir, barrel's genesis and testnet.json.
Testnet write_network(const InitOptions& o, const std::string& cometbft, const std::string& tmp) {
    run_cometbft(cometbft, {"testnet", "--v", std::to_string(o.validators), "--n", "0", "--o", tmp,
                            "--node-dir-prefix", "node", "--starting-ip-address", "127.0.0.1"});
    Testnet net;
    net.dir = o.dir;
    net.app = o.app;
    net.base_port = o.base_port;
    net.timeout_commit_ms = o.timeout_commit_ms;
    net.settings = o.settings;
    net.node_args = o.node_args;
    net.snapshot_interval = o.snapshot_interval;
    for (size_t i = 0; i < o.validators; ++i) {
        const std::string id = node_id_of(cometbft, tmp + "/node" + std::to_string(i));
        auto node = make_node(o.dir, i, true, o.base_port, id, o.app, o.hosts[i]);
        if (!node) fail(node.error());
        net.nodes.push_back(std::move(*node));
    }
    const std::string comet_genesis =
        read_small_file(tmp + "/node0/config/genesis.json", "genesis.json");
    auto chain_id = cometbft_chain_id(comet_genesis);
    if (!chain_id) fail(chain_id.error());
    net.chain_id = *chain_id;
    const std::string genesis = network_genesis(o, comet_genesis);
    for (const Node& n : net.nodes) {
        const std::string home = tmp + "/node" + std::to_string(n.index);
        std::vector<const Node*> peers;
        for (const Node& peer : net.nodes)
            if (peer.index != n.index) peers.push_back(&peer);
        write_node_config(net, n, home, peers);
        write_text(home + "/config/genesis.json", genesis);
        if (o.app == App::barrel) init_datadir(home + "/barrel", o.genesis);
    }
    if (o.app == App::barrel) write_text(tmp + "/genesis.json", o.genesis_text);
    write_text(tmp + "/testnet.json", to_json_text(net));
    return net;
}

/// "timeout_commit 1000 ms, mempool size 20000, …": the settings init gave every node.
std::string settings_summary(const Testnet& net) {
    std::string out = "timeout_commit " + std::to_string(net.timeout_commit_ms) + " ms";
    for (const auto& s : kNumericSettings)
        if (const auto& v = net.settings.*s.field) {
            // "timeout_propose 500 ms": the config key, not the JSON member's "_ms".
            std::string_view key = s.member;
            if (!s.unit.empty()) key = key.substr(0, key.rfind('_'));
            out += ", " + std::string{key} + " " + std::to_string(*v) + std::string{s.unit};
        }
    for (const auto& s : kBoolSettings)
        if (const auto& v = net.settings.*s.field)
            out += ", " + std::string{s.member} + (*v ? " true" : " false");
    return out;
}

void print_init_summary(Context& ctx, const InitOptions& o, const Testnet& net,
                        std::string_view dir_as_given) {
    ctx.out << "testnet of " << o.validators << (o.validators == 1 ? " validator" : " validators")
            << " in " << o.dir << ": CometBFT chain " << net.chain_id;
    if (o.app == App::kvstore) {
        ctx.out << ", application CometBFT's built-in kvstore (no barrel-node)\n";
    } else {
        const Hash root = chain::state_root(o.genesis);
        const Hash block0 = block::hash_of(chain::genesis_header(o.genesis));
        ctx.out << ", barrel chain id " << o.genesis.config.chain_id << ", genesis block "
                << to_hex(block0) << ", state root " << to_hex(root) << "\n";
    }
    if (o.app == App::barrel && !o.genesis_path)
        ctx.out << "the default genesis funds " << kDevAccount << " with 1000000 ETH; its key "
                << kDevKey << " is public (the first of the mnemonic 'test test test test test "
                << "test test test test test test junk'): for tests only\n";
    ctx.out << "CometBFT settings: " << settings_summary(net)
            << " (the rest: CometBFT's defaults)\n";
    if (!net.node_args.empty()) {
        ctx.out << "each barrel-node run also gets:";
        for (const auto& a : net.node_args) ctx.out << " " << a;
        ctx.out << "\n";
    }
    if (net.snapshot_interval != 0) {
        ctx.out << "state snapshots every " << net.snapshot_interval
                << " heights (a late node joins with: barrel-node testnet join --dir "
                << dir_as_given << " --state-sync)\n";
    }
    std::vector<Row> rows{header_row(net, "P2P")};
    for (const Node& n : net.nodes) {
        Row row = node_columns(net, n, false);
        row.push_back(n.cometbft_rpc_url());
        row.push_back(n.host + ":" + std::to_string(n.ports.p2p));
        rows.push_back(std::move(row));
    }
    print_rows(ctx, rows);
    ctx.out << "start it: barrel-node testnet start --dir " << dir_as_given << "\n";
}

int init_handler(Context& ctx, const ParsedArgs& args) {
    // Every input is checked before anything is written.
    const InitOptions o = init_options(args);
    const std::string cometbft = find_cometbft(o.cometbft);
    const fs::path dir{o.dir};
    BuildFolder made_parents{make_parents(dir)};
    BuildFolder build{(dir.parent_path() /
                       ("." + dir.filename().string() + ".init-" + std::to_string(::getpid())))
                          .string()};
    std::error_code ec;
    fs::remove_all(build.path(), ec);
    const Testnet net = write_network(o, cometbft, build.path());
    if (auto moved = io::rename_durably(build.path(), o.dir); !moved) fail(moved.error().message);
    build.release();
    made_parents.release();
    print_init_summary(ctx, o, net, o.dir_as_given);
    return kExitOk;
}

// ---- start, stop
// ---------------------------------------------------------------------------------

int start_handler(Context& ctx, const ParsedArgs& args) {
    const auto o = options::bound_from<NodesOptions, bind_start>(args);
    const Testnet net = load_testnet(o.dir);
    const auto nodes = selected_nodes(o.node, net);
    const std::string cometbft = find_cometbft(o.cometbft);
    start_nodes(ctx, net, nodes, cometbft, o.timeout, !o.node);
    return kExitOk;
}

int stop_handler(Context& ctx, const ParsedArgs& args) {
    const auto o = options::bound_from<NodesOptions, bind_stop>(args);
    const Testnet net = load_testnet(o.dir);
    const auto nodes = selected_nodes(o.node, net);
    const bool kill = o.kill;
    std::vector<std::pair<int, std::string>> comets, barrels;
    std::vector<size_t> running;
    for (size_t i : nodes) {
        const Node& n = net.nodes[i];
        const auto b = barrel_pid(n);
        const auto c = cometbft_pid(n);
        if (!b && !c) {
            ctx.out << "node " << i << " is not running\n";
            remove_file(n.barrel_pid_file());
            remove_file(n.cometbft_pid_file());
            continue;
        }
        if (c) comets.emplace_back(*c, n.home);
        if (b) barrels.emplace_back(*b, n.datadir);
        running.push_back(i);
    }
    bool forced = false;
    if (kill) {
        // Both processes at once, as a crash of the machine would take them.
        auto all = comets;
        all.insert(all.end(), barrels.begin(), barrels.end());
        stop_processes(all, SIGKILL, kKillGrace);
    } else {
        forced = stop_processes(comets, SIGTERM, kStopGrace);
        forced = stop_processes(barrels, SIGTERM, kStopGrace) || forced;
    }
    for (size_t i : running) {
        const Node& n = net.nodes[i];
        remove_file(n.barrel_pid_file());
        remove_file(n.cometbft_pid_file());
        ctx.out << "node " << i << (kill ? " killed" : " stopped") << "\n";
    }
    if (forced) ctx.out << "(some processes did not exit on SIGTERM and were killed)\n";
    return kExitOk;
}

// ---- join
// ----------------------------------------------------------------------------------------

/// The [statesync] settings of a node joining `net` by state sync: two of its running
/// validators' CometBFT RPC servers for the light client, and the latest block of the first as
/// the trusted header (CometBFT's light client verifies the snapshot's height from it).
StateSyncConfig state_sync_config(const Testnet& net) {
    StateSyncConfig sync;
    std::string reasons;
    for (const Node& n : net.nodes) {
        if (!n.validator) continue;
        const auto latest = cometbft_latest_block(n.cometbft_rpc_url());
        if (!latest) {
            reasons += "; node " + std::to_string(n.index) + ": " + latest.error();
            continue;
        }
        if (sync.rpc_servers.empty()) {
            sync.trust_height = latest->height;
            sync.trust_hash = latest->hash;
        }
        sync.rpc_servers.push_back(n.cometbft_rpc_url());
        if (sync.rpc_servers.size() == 2) break;
    }
    if (sync.rpc_servers.size() < 2)
        fail("--state-sync: CometBFT's light client needs two running validators' RPC, and " +
             std::to_string(sync.rpc_servers.size()) + " answered" + reasons +
             " (start the network first: barrel-node testnet start)");
    if (sync.trust_height == 0)
        fail("--state-sync: the network has no block yet to trust (wait for its first height)");
    return sync;
}

int join_handler(Context& ctx, const ParsedArgs& args) {
    const auto o = options::bound_from<NodesOptions, bind_join>(args);
    Testnet net = load_testnet(o.dir);
    const bool by_state_sync = o.state_sync;
    if (by_state_sync && net.app != App::barrel)
        fail("--state-sync: a kvstore network offers no snapshots (--app kvstore)");
    // Asked first, before anything is made: the network must be running to be trusted.
    std::optional<StateSyncConfig> sync;
    if (by_state_sync) sync = state_sync_config(net);
    const size_t index = net.nodes.size();
    if (index >= kMaxNodes)
        fail("the testnet has " + std::to_string(index) + " nodes, the most it may have");
    auto ports = node_ports(net.base_port, index);
    if (!ports) fail(ports.error());
    const std::string cometbft = find_cometbft(o.cometbft);
    std::optional<chain::Genesis> genesis;
    if (net.app == App::barrel)
        genesis = parse_barrel_genesis(read_small_file(net.genesis_path(), "genesis"),
                                       net.genesis_path());
    const std::string comet_genesis =
        read_small_file(net.nodes[0].home + "/config/genesis.json", "genesis.json");

    const std::string home = net.dir + "/node" + std::to_string(index);
    BuildFolder build{net.dir + "/.node" + std::to_string(index) + ".join-" +
                      std::to_string(::getpid())};
    std::error_code ec;
    fs::remove_all(build.path(), ec);
    const std::string tmp = build.path();
    run_cometbft(cometbft, {"init", "--home", tmp});
    auto node = make_node(net.dir, index, false, net.base_port, node_id_of(cometbft, tmp), net.app);
    if (!node) fail(node.error());
    std::vector<const Node*> peers;
    for (const Node& peer : net.nodes)
        if (peer.validator) peers.push_back(&peer);
    write_node_config(net, *node, tmp, peers, sync);
    // The network's genesis, byte for byte: CometBFT refuses a node whose genesis differs.
    write_text(tmp + "/config/genesis.json", comet_genesis);
    if (genesis) init_datadir(tmp + "/barrel", *genesis);
    if (fs::exists(home, ec)) fail(squote(home) + " exists already, and is not in testnet.json");
    if (auto moved = io::rename_durably(tmp, home); !moved) fail(moved.error().message);
    build.release();
    BuildFolder placed{home};  // removed again if testnet.json cannot be rewritten
    net.nodes.push_back(std::move(*node));
    write_text(testnet_file(net.dir), to_json_text(net));
    placed.release();
    ctx.out << "node " << index << " joins as a full node (not a validator), peers: the "
            << peers.size() << " validators\n";
    if (sync)
        ctx.out << "it restores the state from a snapshot (state sync), trusting height "
                << sync->trust_height << " (" << sync->trust_hash << ") from "
                << sync->rpc_servers[0] << " and " << sync->rpc_servers[1]
                << ", then catches up by block sync\n";
    start_nodes(ctx, net, {index}, cometbft, o.timeout, false);
    return kExitOk;
}

}  // namespace

Command testnet_init_command() {
    return {
        .name = "testnet init",
        .summary = "Write a local network of N validators (CometBFT + barrel) into a folder",
        .args = {},
        .options = options::bound_specs<InitOptions, bind_init>(),
        .details =
            "Runs 'cometbft testnet' into DIR, then gives each node its ports (on loopback, or\n"
            "on its --hosts address), its ABCI socket, its peers and barrel's genesis\n"
            "(CometBFT's genesis.json app_state), and makes its barrel datadir as 'barrel-node\n"
            "init' does. DIR must not exist or be empty; on any error nothing is left.\n"
            "DIR/testnet.json lists every node's URLs, folders and logs.\n"
            "With --app kvstore the nodes run CometBFT's kvstore instead (proxy_app = "
            "\"kvstore\";\n"
            "no barrel-node, no barrel genesis): the same network, to measure CometBFT alone.\n"
            "The CometBFT settings apply to every node of either app; one not given keeps\n"
            "CometBFT's default.\n"
            "Example: barrel-node testnet init --dir net --validators 4",
        .handler = init_handler,
    };
}

Command testnet_start_command() {
    return {
        .name = "testnet start",
        .summary = "Start the nodes of a local network (or one of them) in the background",
        .args = {},
        .options = options::bound_specs<NodesOptions, bind_start>(),
        .details =
            "Starts each node's barrel-node run, then its cometbft node, detached, their output\n"
            "in DIR/nodeI/barrel.log and cometbft.log, and waits until each answers (and, for the\n"
            "whole network, until each has a block). Prints each node's URLs and height. A\n"
            "node already running is left as it is. A kvstore network has only cometbft nodes.\n"
            "BARREL_TESTNET_EXEC_PREFIX (a test seam) starts node I's processes behind a prefix,\n"
            "'{node}' in it replaced by I: '/usr/sbin/ip netns exec ns-{node}' (docs/network.md).",
        .handler = start_handler,
    };
}

Command testnet_stop_command() {
    return {
        .name = "testnet stop",
        .summary = "Stop the nodes of a local network (or one of them)",
        .args = {},
        .options = options::bound_specs<NodesOptions, bind_stop>(),
        .details =
            "SIGTERM to cometbft, then to barrel-node, and waits until they exit (SIGKILL after\n"
            "20 s). A stopped node stays stopped; its data stays: testnet start resumes it.",
        .handler = stop_handler,
    };
}

Command testnet_join_command() {
    return {
        .name = "testnet join",
        .summary = "Add a full node (not a validator) to a local network and start it",
        .args = {},
        .options = options::bound_specs<NodesOptions, bind_join>(),
        .details =
            "Makes DIR/nodeN (cometbft init, the network's genesis.json, the validators as its\n"
            "peers, a barrel datadir from the same genesis, the ports after the last node's),\n"
            "adds it to testnet.json and starts it: it catches up by block sync. With\n"
            "--state-sync its config.toml [statesync] names two running validators' RPC and\n"
            "their latest block as the trusted header: it restores the newest snapshot the\n"
            "validators offer (run --snapshot-interval), then block-syncs from there.",
        .handler = join_handler,
    };
}

}  // namespace barrel::cli
