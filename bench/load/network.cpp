#include "network.hpp"

#include "common/args.hpp"
#include "node_process.hpp"
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace barrel::load {

namespace fs = std::filesystem;

namespace {

using bench::fail;

/// The last `count` non-empty lines of `text`, indented, for an error message.
std::string last_lines(const std::string& text, size_t count) {
    std::vector<std::string> lines;
    std::istringstream in{text};
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) lines.push_back(line);
    std::string out;
    for (size_t k = lines.size() > count ? lines.size() - count : 0; k < lines.size(); ++k)
        out += "\n  " + lines[k];
    return out.empty() ? " (no output)" : out;
}

}  // namespace

std::vector<std::string> init_arguments(const std::string& dir, const TestnetSettings& s) {
    std::vector<std::string> args{"init",
                                  "--dir",
                                  dir,
                                  "--validators",
                                  std::to_string(s.validators),
                                  "--base-port",
                                  std::to_string(s.base_port),
                                  "--timeout-commit",
                                  std::to_string(s.timeout_commit_ms)};
    if (s.app == App::kvstore) {
        args.insert(args.end(), {"--app", "kvstore"});
    } else {
        if (!s.genesis_path.empty()) args.insert(args.end(), {"--genesis", s.genesis_path});
        // One word each: an argument that starts with "--" would otherwise read as an option.
        for (const auto& a : s.node_args) args.push_back("--node-arg=" + a);
    }
    if (!s.hosts.empty()) {
        std::string hosts;
        for (const auto& h : s.hosts) hosts += (hosts.empty() ? "" : ",") + h;
        args.insert(args.end(), {"--hosts", hosts});
    }
    args.insert(args.end(), s.comet_args.begin(), s.comet_args.end());
    return args;
}

Expected<std::vector<NetNode>, std::string> parse_nodes(std::string_view testnet_json) {
    auto net = testnet::parse_testnet(testnet_json);
    if (!net) return unexpected(net.error());
    std::vector<NetNode> out;
    for (testnet::Node& n : net->nodes) {
        NetNode node;
        node.index = n.index;
        // parse_testnet built the URLs from a numeric address and a port: they parse.
        node.cometbft_rpc = *parse_http_url(n.cometbft_rpc_url());
        if (n.app == App::barrel) node.json_rpc = *parse_http_url(n.json_rpc_url());
        node.layout = std::move(n);
        out.push_back(std::move(node));
    }
    return out;
}

Network::Network(std::string barrel_node, std::string dir, const TestnetSettings& settings,
                 bool keep, NetNamespaces* namespaces)
    : m_node{std::move(barrel_node)},
      m_dir{std::move(dir)},
      m_keep{keep},
      m_namespaces{namespaces} {
    m_on_interrupt.emplace([this] { tear_down(); });
    try {
        testnet(init_arguments(m_dir, settings), "init");
        auto nodes = parse_nodes(read_text_file(m_dir + "/testnet.json"));
        if (!nodes) fail(m_dir + "/testnet.json: " + nodes.error());
        m_nodes = std::move(*nodes);
        m_running = true;
        testnet({"start", "--dir", m_dir}, "start");
    } catch (...) {
        // No destructor runs for an object whose constructor throws.
        const auto held = InterruptCleanup::lock();
        m_on_interrupt->release(held);
        tear_down();
        throw;
    }
}

Network::~Network() {
    const auto held = InterruptCleanup::lock();
    if (m_on_interrupt) m_on_interrupt->release(held);
    tear_down();
}

void Network::testnet(const std::vector<std::string>& args, const std::string& log_name) {
    std::vector<std::string> argv{m_node, "testnet"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = testnet::run_program(argv);
    if (!r) fail(r.error());
    // Beside the folder, not in it: init wants it absent or empty.
    if (m_keep) std::ofstream{m_dir + "." + log_name + ".log"} << r->output;
    if (r->status != 0) {
        std::string command = "barrel-node testnet";
        for (const auto& a : args) command += " " + a;
        fail(command + ": exit status " + std::to_string(r->status) + ":" +
             last_lines(r->output, 8));
    }
}

void Network::kill(size_t i) {
    testnet({"stop", "--dir", m_dir, "--node", std::to_string(i), "--kill"}, "kill");
}

void Network::restart(size_t i) {
    testnet({"start", "--dir", m_dir, "--node", std::to_string(i)}, "restart");
}

const NetNode& Network::join() {
    testnet({"join", "--dir", m_dir}, "join");
    auto nodes = parse_nodes(read_text_file(m_dir + "/testnet.json"));
    if (!nodes) fail(m_dir + "/testnet.json: " + nodes.error());
    if (nodes->size() != m_nodes.size() + 1)
        fail(m_dir + "/testnet.json: testnet join added no node");
    m_nodes = std::move(*nodes);
    return m_nodes.back();
}

void Network::pause(size_t i) {
    const testnet::Node& n = m_nodes[i].layout;
    for (const auto pid : {testnet::barrel_pid(n), testnet::cometbft_pid(n)})
        if (pid) {
            ::kill(*pid, SIGSTOP);
            m_paused.push_back(*pid);
        }
}

void Network::resume() {
    for (const pid_t pid : m_paused) ::kill(pid, SIGCONT);
    m_paused.clear();
}

void Network::isolate(const std::vector<size_t>& nodes) {
    if (m_namespaces == nullptr) fail("isolate: the network runs in no namespaces");
    m_namespaces->isolate(nodes);
}

void Network::heal() {
    if (m_namespaces != nullptr) m_namespaces->heal();
}

void Network::stop() {
    if (!m_running) return;
    testnet({"stop", "--dir", m_dir}, "stop");
    m_running = false;
}

void Network::tear_down() {
    // A stopped process would act on no signal but SIGKILL: it is continued first, whatever
    // stops it next.
    for (const pid_t pid : m_paused) ::kill(pid, SIGCONT);
    m_paused.clear();
    if (m_running) {
        m_running = false;
        // Already failing or ending: if it cannot run, the nodes' pid files name what is left.
        (void)testnet::run_program({m_node, "testnet", "stop", "--dir", m_dir, "--kill"});
    }
    std::error_code ec;
    if (!m_keep) fs::remove_all(m_dir, ec);
}

}  // namespace barrel::load
