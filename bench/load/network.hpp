#pragma once
// A network of barrel-load's own (`--network DIR`): `barrel-node testnet init` of N validators
// into a folder under DIR, `testnet start`, and `testnet stop` at the end (the folder removed
// unless kept), driven as subprocesses of the barrel-node binary, as a user types them
// (docs/network.md). The same layout runs barrel (`--app barrel`: each node a barrel-node run
// and a cometbft) or CometBFT's built-in kvstore (`--app kvstore`: cometbft alone), so that
// consensus's own limit on this machine is measured beside barrel's. A node can be SIGKILLed and
// started again mid-run (`testnet stop --node I --kill`, `testnet start --node I`), paused and
// resumed (SIGSTOP, SIGCONT of its two processes), or, in network namespaces, cut off.

#include "interrupt.hpp"
#include "net_namespaces.hpp"
#include "rpc_client.hpp"
#include "testnet/testnet.hpp"
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::load {

/// The testnet's app, as `testnet init --app` takes it ("barrel", "kvstore": app_name).
using testnet::App;
using testnet::app_name;

/// What `testnet init` is given. The CometBFT settings go to both apps alike.
struct TestnetSettings {
    App app{App::barrel};
    size_t validators{4};
    uint64_t base_port{27000};
    uint64_t timeout_commit_ms{500};
    /// The CometBFT settings passed through as given ("--timeout-propose", "3000", …).
    std::vector<std::string> comet_args;
    /// barrel only: the genesis file, and the arguments of every node's `barrel-node run`.
    std::string genesis_path;
    std::vector<std::string> node_args;
    /// Each validator's address (`testnet init --hosts`), when each runs in a network namespace
    /// of its own (net_namespaces.hpp); empty: loopback.
    std::vector<std::string> hosts;
};

/// The `testnet init` arguments for `settings` in `dir` (without the program and "testnet").
std::vector<std::string> init_arguments(const std::string& dir, const TestnetSettings& settings);

/// One node as testnet.json lists it (testnet::parse_testnet), its URLs parsed.
struct NetNode {
    size_t index{0};
    std::optional<HttpUrl> json_rpc;  ///< barrel's JSON-RPC (barrel only)
    HttpUrl cometbft_rpc;
    testnet::Node layout;  ///< its folders and pid files
};

/// testnet.json's nodes, read by testnet::parse_testnet (its errors: "nodes.1.home: missing").
Expected<std::vector<NetNode>, std::string> parse_nodes(std::string_view testnet_json);

class Network {
public:
    /// `testnet init` into `dir` (which must not exist), then `testnet start`. Throws
    /// bench::Failure (status 1) naming the command and its last lines of output if either fails;
    /// what was made is stopped and removed then.
    /// With `namespaces`, each node runs in its namespace (settings.hosts its addresses), and
    /// isolate and heal act on them.
    Network(std::string barrel_node, std::string dir, const TestnetSettings& settings, bool keep,
            NetNamespaces* namespaces = nullptr);
    /// Stops the nodes (SIGKILL: the run is over) and removes the folder unless kept.
    ~Network();
    Network(const Network&) = delete;
    Network& operator=(const Network&) = delete;

    const std::vector<NetNode>& nodes() const noexcept { return m_nodes; }
    const std::string& dir() const noexcept { return m_dir; }

    /// SIGKILL both processes of node `i` (`testnet stop --node I --kill`): a crash.
    void kill(size_t i);
    /// `testnet start --node I`: returns once it answers again.
    void restart(size_t i);
    /// SIGSTOP of both processes of node `i` (by testnet.json's pid files); SIGCONT of what
    /// pause stopped.
    void pause(size_t i);
    void resume();
    /// Cuts `nodes` off from the others (NetNamespaces::isolate), and joins them again; only
    /// with namespaces.
    void isolate(const std::vector<size_t>& nodes);
    void heal();
    /// `testnet join`: a full node joins by block sync; returns it once its RPC answers.
    const NetNode& join();
    /// `testnet stop` (SIGTERM, the orderly way); throws Failure if it fails.
    void stop();

private:
    void testnet(const std::vector<std::string>& args, const std::string& log_name);
    void tear_down();

    std::string m_node;
    std::string m_dir;
    bool m_keep{false};
    bool m_running{false};
    std::vector<NetNode> m_nodes;
    NetNamespaces* m_namespaces{nullptr};
    std::vector<pid_t> m_paused;
    std::optional<InterruptCleanup> m_on_interrupt;
};

}  // namespace barrel::load
