// `barrel-node testnet init|start|stop|join`: a network of barrel nodes on CometBFT on loopback
// (docs/network.md). Each node is two processes, `cometbft node --home DIR/nodeI` (consensus,
// peer-to-peer, transaction gossip, block sync) and `barrel-node run --abci …` (its
// application, JSON-RPC, WebSocket, /metrics), started detached with their pid files beside them;
// testnet.hpp holds the files and the process helpers these handlers use.
//
// - `init` writes everything into a temporary folder beside DIR and renames it into place at the
//   end: a failure at any step leaves nothing behind.
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
#include "testnet.hpp"
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

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
using Clock = std::chrono::steady_clock;

constexpr uint64_t kMaxTimeoutCommitMs = 3'600'000;
constexpr uint64_t kDefaultStartTimeoutS = 60;
/// How long a SIGTERMed process has to exit before it gets SIGKILL, and a SIGKILLed one to be gone.
constexpr auto kStopGrace = std::chrono::seconds(20);
constexpr auto kKillGrace = std::chrono::seconds(10);
constexpr auto kPollInterval = std::chrono::milliseconds(100);
constexpr size_t kLogTailLines = 20;
/// The CometBFT release barrel speaks (DESIGN.md, "Network"); v0.38.x share its ABCI wire format.
constexpr std::string_view kCometVersionPrefix = "0.38.";

std::string option_text(const ParsedArgs& args, std::string_view name) {
    return std::string{*args.value(name)};
}

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
std::string find_cometbft(const ParsedArgs& args) {
    std::string path;
    if (const auto given = args.value("--cometbft")) {
        path = std::string{*given};
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

Testnet load_testnet(const ParsedArgs& args) {
    const std::string dir = absolute_dir(option_text(args, "--dir"));
    const std::string file = testnet_file(dir);
    std::error_code ec;
    if (!fs::exists(file, ec))
        fail("no testnet in " + squote(dir) +
             " (no testnet.json): make one with barrel-node "
             "testnet init --dir " +
             option_text(args, "--dir"));
    auto net = parse_testnet(read_small_file(file, "testnet file"));
    if (!net) fail(squote(file) + ": " + net.error());
    if (net->dir != dir)
        fail(squote(file) + ": made for " + squote(net->dir) +
             " (the paths in its nodes' config.toml are absolute: make the testnet again there)");
    return std::move(net).value();
}

/// --node I as the nodes to act on: one, or all of them.
std::vector<size_t> selected_nodes(const ParsedArgs& args, const Testnet& net) {
    std::vector<size_t> nodes;
    if (const auto v = args.value("--node")) {
        const uint64_t i = parse_u64_option("--node", *v);
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

std::optional<int> barrel_pid(const Node& n) { return running_pid(n.barrel_pid_file(), n.datadir); }
std::optional<int> cometbft_pid(const Node& n) {
    return running_pid(n.cometbft_pid_file(), n.home);
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

std::vector<std::string> barrel_argv(const std::string& self, const Node& n) {
    return {self,
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
            "127.0.0.1:" + std::to_string(n.ports.json_rpc)};
}

std::string unix_socket_of(const Node& n) {
    const std::string prefix = "unix://";
    return n.abci.rfind(prefix, 0) == 0 ? n.abci.substr(prefix.size()) : std::string{};
}

using Row = std::array<std::string, 4>;

/// Columns padded to their widest entry, two spaces apart.
void print_rows(Context& ctx, const std::vector<Row>& rows) {
    std::array<size_t, 4> width{};
    for (const auto& r : rows)
        for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
    for (const auto& r : rows) {
        std::string line;
        for (size_t c = 0; c < r.size(); ++c)
            line += c + 1 == r.size() ? r[c] : r[c] + std::string(width[c] - r[c].size() + 2, ' ');
        ctx.out << line << "\n";
    }
}

void print_table(Context& ctx, const Testnet& net, const std::vector<size_t>& nodes) {
    std::vector<Row> rows{{"node", "JSON-RPC", "CometBFT RPC", "height"}};
    for (size_t i : nodes) {
        const Node& n = net.nodes[i];
        const auto h = cometbft_height(n.cometbft_rpc_url());
        rows.push_back({std::to_string(i) + (n.validator ? "" : " (full)"), n.json_rpc_url(),
                        n.cometbft_rpc_url(), h ? std::to_string(*h) : "-"});
    }
    print_rows(ctx, rows);
}

/// Starts the nodes that do not run (barrel, then cometbft), waits until each answers, then
/// prints the table. With `wait_for_blocks`, waits until every node has a block past genesis.
void start_nodes(Context& ctx, const Testnet& net, const std::vector<size_t>& nodes,
                 const std::string& cometbft, std::chrono::seconds timeout, bool wait_for_blocks) {
    const std::string self = self_executable();
    const auto deadline = Clock::now() + timeout;
    std::vector<size_t> need_barrel, need_cometbft;
    for (size_t i : nodes) {
        const Node& n = net.nodes[i];
        const auto b = barrel_pid(n);
        const auto c = cometbft_pid(n);
        if (b && c) {
            ctx.out << "node " << i << " is already running\n";
            continue;
        }
        if (!b && c) {
            // A CometBFT whose application is gone cannot go on: start the pair afresh.
            ctx.out << "node " << i << ": cometbft runs without its barrel-node: restarting both\n";
            stop_processes({{*c, n.home}}, SIGTERM, kStopGrace);
        }
        if (!b) need_barrel.push_back(i);
        need_cometbft.push_back(i);
    }
    std::vector<std::pair<size_t, int>> started;
    for (size_t i : need_barrel) {
        const Node& n = net.nodes[i];
        // A socket left by a killed node: the node is stopped, so nothing listens on it.
        if (const std::string socket = unix_socket_of(n); !socket.empty()) remove_file(socket);
        auto pid = spawn_detached(barrel_argv(self, n), n.barrel_log());
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
    started.clear();
    for (size_t i : need_cometbft) {
        const Node& n = net.nodes[i];
        auto pid = spawn_detached({cometbft, "node", "--home", n.home}, n.cometbft_log());
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
    if (wait_for_blocks) {
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
    print_table(ctx, net, nodes);
}

std::chrono::seconds start_timeout(const ParsedArgs& args) {
    uint64_t s = kDefaultStartTimeoutS;
    if (const auto v = args.value("--timeout")) s = parse_u64_option("--timeout", *v);
    if (s == 0 || s > 3600) fail("--timeout: expected 1 to 3600 seconds, got " + std::to_string(s));
    return std::chrono::seconds(s);
}

// ---- init
// ----------------------------------------------------------------------------------------

/// What `init` is asked for, every value checked.
struct InitOptions {
    std::string dir;  ///< absolute
    size_t validators{0};
    uint64_t base_port{kDefaultBasePort};
    uint64_t timeout_commit_ms{kDefaultTimeoutCommitMs};
    bool default_genesis{true};
    std::string genesis_text;  ///< barrel's genesis, as given
    chain::Genesis genesis;
};

InitOptions parse_init_options(const ParsedArgs& args) {
    InitOptions o;
    o.dir = absolute_dir(option_text(args, "--dir"));
    const uint64_t validators = parse_u64_option("--validators", *args.value("--validators"));
    if (validators < 1 || validators > kMaxNodes)
        fail("--validators: expected 1 to " + std::to_string(kMaxNodes) + ", got " +
             std::to_string(validators));
    o.validators = static_cast<size_t>(validators);
    if (const auto v = args.value("--base-port")) o.base_port = parse_u64_option("--base-port", *v);
    if (o.base_port == 0 || o.base_port > 65535)
        fail("--base-port: expected a port from 1 to 65535, got " + std::to_string(o.base_port));
    if (auto last = node_ports(o.base_port, o.validators - 1); !last)
        fail("--base-port: " + last.error());
    if (const auto v = args.value("--timeout-commit"))
        o.timeout_commit_ms = parse_u64_option("--timeout-commit", *v);
    if (o.timeout_commit_ms > kMaxTimeoutCommitMs)
        fail("--timeout-commit: expected at most " + std::to_string(kMaxTimeoutCommitMs) +
             " ms, got " + std::to_string(o.timeout_commit_ms));
    const auto genesis_arg = args.value("--genesis");
    o.default_genesis = !genesis_arg;
    const std::string genesis_path = genesis_arg ? std::string{*genesis_arg} : "(default)";
    o.genesis_text =
        genesis_arg ? read_small_file(genesis_path, "genesis") : default_genesis_text();
    o.genesis = parse_barrel_genesis(o.genesis_text, genesis_path);
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

/// The network written into `tmp` (to be renamed to o.dir): `cometbft testnet`, then each node's
/// config.toml, genesis.json and barrel datadir, barrel's genesis and testnet.json.
Testnet write_network(const InitOptions& o, const std::string& cometbft, const std::string& tmp) {
    run_cometbft(cometbft, {"testnet", "--v", std::to_string(o.validators), "--n", "0", "--o", tmp,
                            "--node-dir-prefix", "node", "--starting-ip-address", "127.0.0.1"});
    Testnet net;
    net.dir = o.dir;
    net.base_port = o.base_port;
    net.timeout_commit_ms = o.timeout_commit_ms;
    for (size_t i = 0; i < o.validators; ++i) {
        const std::string id = node_id_of(cometbft, tmp + "/node" + std::to_string(i));
        auto node = make_node(o.dir, i, true, o.base_port, id);
        if (!node) fail(node.error());
        net.nodes.push_back(std::move(*node));
    }
    const std::string comet_genesis =
        read_small_file(tmp + "/node0/config/genesis.json", "genesis.json");
    auto chain_id = cometbft_chain_id(comet_genesis);
    if (!chain_id) fail(chain_id.error());
    net.chain_id = *chain_id;
    auto full_genesis = with_app_state(comet_genesis, o.genesis_text);
    if (!full_genesis) fail(full_genesis.error());
    for (const Node& n : net.nodes) {
        const std::string home = tmp + "/node" + std::to_string(n.index);
        NodeConfig config{&n, {}, o.timeout_commit_ms};
        for (const Node& peer : net.nodes)
            if (peer.index != n.index) config.persistent_peers.push_back(peer.p2p_address());
        auto toml =
            configure_node(read_small_file(home + "/config/config.toml", "config.toml"), config);
        if (!toml) fail(toml.error());
        write_text(home + "/config/config.toml", *toml);
        write_text(home + "/config/genesis.json", *full_genesis);
        init_datadir(home + "/barrel", o.genesis);
    }
    write_text(tmp + "/genesis.json", o.genesis_text);
    write_text(tmp + "/testnet.json", to_json_text(net));
    return net;
}

void print_init_summary(Context& ctx, const InitOptions& o, const Testnet& net,
                        std::string_view dir_as_given) {
    const Hash root = chain::state_root(o.genesis);
    const Hash block0 = block::hash_of(chain::genesis_header(o.genesis));
    ctx.out << "testnet of " << o.validators << (o.validators == 1 ? " validator" : " validators")
            << " in " << o.dir << ": CometBFT chain " << net.chain_id << ", barrel chain id "
            << o.genesis.config.chain_id << ", genesis block " << to_hex(block0) << ", state root "
            << to_hex(root) << "\n";
    if (o.default_genesis)
        ctx.out << "the default genesis funds " << kDevAccount << " with 1000000 ETH; its key "
                << kDevKey << " is public (the first of the mnemonic 'test test test test test "
                << "test test test test test test junk'): for tests only\n";
    std::vector<Row> rows{{"node", "JSON-RPC", "CometBFT RPC", "P2P"}};
    for (const Node& n : net.nodes)
        rows.push_back({std::to_string(n.index), n.json_rpc_url(), n.cometbft_rpc_url(),
                        "127.0.0.1:" + std::to_string(n.ports.p2p)});
    print_rows(ctx, rows);
    ctx.out << "start it: barrel-node testnet start --dir " << dir_as_given << "\n";
}

int init_handler(Context& ctx, const ParsedArgs& args) {
    // Every input is checked before anything is written.
    const InitOptions o = parse_init_options(args);
    const std::string cometbft = find_cometbft(args);
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
    print_init_summary(ctx, o, net, option_text(args, "--dir"));
    return kExitOk;
}

// ---- start, stop
// ---------------------------------------------------------------------------------

int start_handler(Context& ctx, const ParsedArgs& args) {
    const Testnet net = load_testnet(args);
    const auto nodes = selected_nodes(args, net);
    const auto timeout = start_timeout(args);
    const std::string cometbft = find_cometbft(args);
    start_nodes(ctx, net, nodes, cometbft, timeout, !args.has("--node"));
    return kExitOk;
}

int stop_handler(Context& ctx, const ParsedArgs& args) {
    const Testnet net = load_testnet(args);
    const auto nodes = selected_nodes(args, net);
    const bool kill = args.has("--kill");
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

int join_handler(Context& ctx, const ParsedArgs& args) {
    Testnet net = load_testnet(args);
    const size_t index = net.nodes.size();
    if (index >= kMaxNodes)
        fail("the testnet has " + std::to_string(index) + " nodes, the most it may have");
    auto ports = node_ports(net.base_port, index);
    if (!ports) fail(ports.error());
    const auto timeout = start_timeout(args);
    const std::string cometbft = find_cometbft(args);
    const std::string genesis_text = read_small_file(net.genesis_path(), "genesis");
    const chain::Genesis genesis = parse_barrel_genesis(genesis_text, net.genesis_path());
    const std::string comet_genesis =
        read_small_file(net.nodes[0].home + "/config/genesis.json", "genesis.json");

    const std::string home = net.dir + "/node" + std::to_string(index);
    BuildFolder build{net.dir + "/.node" + std::to_string(index) + ".join-" +
                      std::to_string(::getpid())};
    std::error_code ec;
    fs::remove_all(build.path(), ec);
    const std::string tmp = build.path();
    run_cometbft(cometbft, {"init", "--home", tmp});
    auto node = make_node(net.dir, index, false, net.base_port, node_id_of(cometbft, tmp));
    if (!node) fail(node.error());
    NodeConfig config{&*node, {}, net.timeout_commit_ms};
    for (const Node& peer : net.nodes)
        if (peer.validator) config.persistent_peers.push_back(peer.p2p_address());
    auto toml = configure_node(read_small_file(tmp + "/config/config.toml", "config.toml"), config);
    if (!toml) fail(toml.error());
    write_text(tmp + "/config/config.toml", *toml);
    // The network's genesis, byte for byte: CometBFT refuses a node whose genesis differs.
    write_text(tmp + "/config/genesis.json", comet_genesis);
    init_datadir(tmp + "/barrel", genesis);
    if (fs::exists(home, ec)) fail(squote(home) + " exists already, and is not in testnet.json");
    if (auto moved = io::rename_durably(tmp, home); !moved) fail(moved.error().message);
    build.release();
    BuildFolder placed{home};  // removed again if testnet.json cannot be rewritten
    net.nodes.push_back(std::move(*node));
    write_text(testnet_file(net.dir), to_json_text(net));
    placed.release();
    ctx.out << "node " << index << " joins as a full node (not a validator), peers: the "
            << config.persistent_peers.size() << " validators\n";
    start_nodes(ctx, net, {index}, cometbft, timeout, false);
    return kExitOk;
}

// ---- Specs
// ---------------------------------------------------------------------------------------

constexpr OptionSpec kDirOption{"--dir", "DIR", "The testnet's folder", true};
constexpr OptionSpec kCometOption{"--cometbft", "PATH",
                                  "The cometbft binary (default: on PATH, or in $(go env "
                                  "GOPATH)/bin)"};
constexpr OptionSpec kTimeoutOption{"--timeout", "S",
                                    "Seconds to wait for the nodes to answer (default: 60)"};

}  // namespace

Command testnet_init_command() {
    return {
        .name = "testnet init",
        .summary = "Write a local network of N validators (CometBFT + barrel) into a folder",
        .args = {},
        .options =
            {
                kDirOption,
                {"--validators", "N", "How many validators (1 to 100)", true},
                {"--genesis", "FILE",
                 "barrel's genesis (docs/formats.md; default: a dev genesis funding one "
                 "well-known key)"},
                {"--base-port", "P",
                 "Node I listens on P+10I (P2P), P+10I+1 (CometBFT RPC), P+10I+2 (JSON-RPC) "
                 "(default: 26600)"},
                {"--timeout-commit", "MS",
                 "CometBFT's pause after each block, in ms (default: 1000)"},
                kCometOption,
            },
        .details =
            "Runs 'cometbft testnet' into DIR, then gives each node its loopback ports, its ABCI\n"
            "socket, its peers and barrel's genesis (CometBFT's genesis.json app_state), and "
            "makes\n"
            "its barrel datadir as 'barrel-node init' does. DIR must not exist or be empty; on "
            "any\n"
            "error nothing is left. DIR/testnet.json lists every node's URLs, folders and logs.\n"
            "Example: barrel-node testnet init --dir net --validators 4",
        .handler = init_handler,
    };
}

Command testnet_start_command() {
    return {
        .name = "testnet start",
        .summary = "Start the nodes of a local network (or one of them) in the background",
        .args = {},
        .options = {kDirOption, {"--node", "I", "Only node I"}, kCometOption, kTimeoutOption},
        .details =
            "Starts each node's barrel-node run, then its cometbft node, detached, their output\n"
            "in DIR/nodeI/barrel.log and cometbft.log, and waits until each answers (and, for the\n"
            "whole network, until each has a block). Prints each node's URLs and height. A\n"
            "node already running is left as it is.",
        .handler = start_handler,
    };
}

Command testnet_stop_command() {
    return {
        .name = "testnet stop",
        .summary = "Stop the nodes of a local network (or one of them)",
        .args = {},
        .options = {kDirOption,
                    {"--node", "I", "Only node I"},
                    {"--kill", "", "SIGKILL both processes at once (a crash) instead of SIGTERM"}},
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
        .options = {kDirOption, kCometOption, kTimeoutOption},
        .details =
            "Makes DIR/nodeN (cometbft init, the network's genesis.json, the validators as its\n"
            "peers, a barrel datadir from the same genesis, the ports after the last node's),\n"
            "adds it to testnet.json and starts it: it catches up by block sync.",
        .handler = join_handler,
    };
}

}  // namespace barrel::cli
