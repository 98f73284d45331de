// `barrel-node testnet`'s files: the node layout, the edits to CometBFT's config.toml and
// genesis.json, and DIR/testnet.json (testnet.hpp).

#include <barrel/core/uint256.hpp>

#include "testnet/testnet.hpp"
#include <arpa/inet.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>
#include <utility>

namespace barrel::testnet {

namespace {

using Json = nlohmann::ordered_json;

std::string http_url(const std::string& host, uint16_t port) {
    return "http://" + host + ":" + std::to_string(port);
}

std::string_view trim(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t\r\n");
    return s.substr(first, last - first + 1);
}

}  // namespace

// ---- Layout
// --------------------------------------------------------------------------------------

std::string_view app_name(App app) { return app == App::kvstore ? "kvstore" : "barrel"; }

std::optional<App> parse_app(std::string_view name) {
    if (name == "barrel") return App::barrel;
    if (name == "kvstore") return App::kvstore;
    return std::nullopt;
}

std::optional<std::string> range_error(const NumericSetting& s, uint64_t value) {
    if (value >= s.min && value <= s.max) return std::nullopt;
    return "expected " + std::to_string(s.min) + " to " + std::to_string(s.max) +
           std::string{s.unit} + ", got " + std::to_string(value);
}

Expected<NodePorts, std::string> node_ports(uint64_t base, size_t index) {
    const uint64_t first = base + kPortStride * index;
    const uint64_t last = first + kAbciOffset;
    if (base == 0 || last > 65535)
        return unexpected("the ports of node " + std::to_string(index) + " from base port " +
                          std::to_string(base) + " run past 65535 (node " + std::to_string(index) +
                          " needs " + std::to_string(first) + " to " + std::to_string(last) + ")");
    auto port = [&](uint64_t offset) { return static_cast<uint16_t>(first + offset); };
    return NodePorts{port(kP2pOffset), port(kCometRpcOffset), port(kJsonRpcOffset),
                     port(kAbciOffset)};
}

std::string Node::json_rpc_url() const { return http_url(host, ports.json_rpc); }
std::string Node::cometbft_rpc_url() const { return http_url(host, ports.cometbft_rpc); }
std::string Node::p2p_address() const {
    return node_id + "@" + host + ":" + std::to_string(ports.p2p);
}
std::string Node::barrel_log() const { return home + "/barrel.log"; }
std::string Node::cometbft_log() const { return home + "/cometbft.log"; }
std::string Node::barrel_pid_file() const { return home + "/barrel.pid"; }
std::string Node::cometbft_pid_file() const { return home + "/cometbft.pid"; }

Expected<Node, std::string> make_node(const std::string& dir, size_t index, bool validator,
                                      uint64_t base_port, std::string node_id, App app,
                                      std::string host) {
    auto ports = node_ports(base_port, index);
    if (!ports) return unexpected(ports.error());
    if (!is_ipv4_address(host))
        return unexpected("node " + std::to_string(index) + ": host '" + host +
                          "' is not a numeric IPv4 address");
    Node n;
    n.index = index;
    n.host = std::move(host);
    n.validator = validator;
    n.app = app;
    n.node_id = std::move(node_id);
    n.home = dir + "/node" + std::to_string(index);
    n.ports = *ports;
    if (app == App::kvstore) {
        n.abci = "kvstore";  // CometBFT's built-in application, in its own process
        return n;
    }
    n.datadir = n.home + "/barrel";
    const std::string socket = n.home + "/abci.sock";
    // A Unix socket needs no port and no other process can take it; a path too long for
    // sockaddr_un falls back to the node's TCP port.
    n.abci = socket.size() <= kMaxUnixSocketPath
                 ? "unix://" + socket
                 : "tcp://127.0.0.1:" + std::to_string(n.ports.abci);
    return n;
}

bool is_ipv4_address(std::string_view text) {
    in_addr address{};
    return ::inet_pton(AF_INET, std::string{text}.c_str(), &address) == 1;
}

std::vector<std::string> exec_prefix(std::string_view prefix, size_t index) {
    std::vector<std::string> words;
    std::istringstream in{std::string{prefix}};
    for (std::string word; in >> word;) {
        for (size_t at; (at = word.find("{node}")) != std::string::npos;)
            word.replace(at, 6, std::to_string(index));
        words.push_back(std::move(word));
    }
    return words;
}

std::string Testnet::genesis_path() const { return dir + "/genesis.json"; }

std::string testnet_file(const std::string& dir) { return dir + "/testnet.json"; }

// ---- testnet.json
// --------------------------------------------------------------------------------

namespace {

Json node_json(const Node& n) {
    const bool barrel = n.app == App::barrel;
    Json logs = Json::object();
    Json pid_files = Json::object();
    if (barrel) {
        logs["barrel"] = n.barrel_log();
        pid_files["barrel"] = n.barrel_pid_file();
    }
    logs["cometbft"] = n.cometbft_log();
    pid_files["cometbft"] = n.cometbft_pid_file();
    Json j = {{"index", n.index}, {"validator", n.validator}};
    // Written only when it is not loopback: a file of a loopback network reads as before.
    if (n.host != kLoopbackHost) j["host"] = n.host;
    if (barrel) j["json_rpc"] = n.json_rpc_url();
    j["cometbft_rpc"] = n.cometbft_rpc_url();
    j["p2p"] = n.p2p_address();
    j["abci"] = n.abci;
    j["home"] = n.home;
    if (barrel) j["datadir"] = n.datadir;
    j["logs"] = std::move(logs);
    j["pid_files"] = std::move(pid_files);
    return j;
}

Json settings_json(const CometSettings& settings) {
    Json j = Json::object();
    for (const auto& s : kNumericSettings)
        if (const auto& v = settings.*s.field) j[std::string{s.member}] = *v;
    for (const auto& s : kBoolSettings)
        if (const auto& v = settings.*s.field) j[std::string{s.member}] = *v;
    return j;
}

}  // namespace

std::string to_json_text(const Testnet& net) {
    Json nodes = Json::array();
    for (const Node& n : net.nodes) nodes.push_back(node_json(n));
    Json doc = {{"chain_id", net.chain_id}, {"app", app_name(net.app)}, {"dir", net.dir}};
    if (net.app == App::barrel) doc["genesis"] = net.genesis_path();
    doc["base_port"] = net.base_port;
    doc["timeout_commit_ms"] = net.timeout_commit_ms;
    doc["settings"] = settings_json(net.settings);
    if (net.app == App::barrel) {
        doc["node_args"] = net.node_args;
        doc["snapshot_interval"] = net.snapshot_interval;
    }
    doc["nodes"] = std::move(nodes);
    return doc.dump(2) + "\n";
}

namespace {

/// Reads testnet.json's members; each failure names the member.
class Reader {
public:
    explicit Reader(std::string path) : m_path{std::move(path)} {}

    const Json& member(const Json& object, const std::string& name) {
        const auto it = object.find(name);
        if (it == object.end()) throw Failure{at(name) + ": missing"};
        return *it;
    }
    std::string string(const Json& object, const std::string& name) {
        const Json& v = member(object, name);
        if (!v.is_string()) throw Failure{at(name) + ": not a string"};
        return v.get<std::string>();
    }
    uint64_t number(const Json& object, const std::string& name) {
        const Json& v = member(object, name);
        if (!v.is_number_unsigned()) throw Failure{at(name) + ": not an unsigned integer"};
        return v.get<uint64_t>();
    }
    bool boolean(const Json& object, const std::string& name) {
        const Json& v = member(object, name);
        if (!v.is_boolean()) throw Failure{at(name) + ": not true or false"};
        return v.get<bool>();
    }
    std::string at(const std::string& name) const {
        return m_path.empty() ? name : m_path + "." + name;
    }

    struct Failure {
        std::string message;
    };

private:
    std::string m_path;
};

/// "ID@HOST:PORT" → ID; the host and port must be the node's.
std::string node_id_of(const std::string& p2p, const std::string& host, uint16_t port,
                       const std::string& where) {
    const auto at = p2p.find('@');
    const std::string expected_tail = "@" + host + ":" + std::to_string(port);
    if (at == std::string::npos || at == 0 || p2p.substr(at) != expected_tail)
        throw Reader::Failure{where + ": expected ID" + expected_tail + ", got '" + p2p + "'"};
    return p2p.substr(0, at);
}

std::string_view without_suffix(std::string_view s, std::string_view suffix) {
    if (s.size() <= suffix.size() || s.substr(s.size() - suffix.size()) != suffix) return {};
    return s.substr(0, s.size() - suffix.size());
}

/// "settings": the members given, each within its bounds (absent: CometBFT's default).
CometSettings parse_settings(const Json& doc) {
    CometSettings settings;
    const auto it = doc.find("settings");
    if (it == doc.end()) return settings;
    if (!it->is_object()) throw Reader::Failure{"settings: not an object"};
    Reader r{"settings"};
    for (const auto& s : kNumericSettings) {
        const std::string name{s.member};
        if (!it->contains(name)) continue;
        const uint64_t v = r.number(*it, name);
        if (auto e = range_error(s, v)) throw Reader::Failure{r.at(name) + ": " + *e};
        settings.*s.field = v;
    }
    for (const auto& s : kBoolSettings)
        if (it->contains(std::string{s.member}))
            settings.*s.field = r.boolean(*it, std::string{s.member});
    return settings;
}

/// "node_args": an array of strings (absent: none); a kvstore network has none.
std::vector<std::string> parse_node_args(const Json& doc, App app) {
    std::vector<std::string> args;
    const auto it = doc.find("node_args");
    if (it == doc.end()) return args;
    if (!it->is_array()) throw Reader::Failure{"node_args: not an array of strings"};
    for (const Json& a : *it) {
        if (!a.is_string()) throw Reader::Failure{"node_args: not an array of strings"};
        args.push_back(a.get<std::string>());
    }
    if (app == App::kvstore && !args.empty())
        throw Reader::Failure{"node_args: a kvstore network runs no barrel-node"};
    return args;
}

/// The members before "nodes". DIR is "dir", or (a file written before "dir" was) the folder of
/// "genesis"; a barrel network's genesis must be DIR/genesis.json.
Testnet parse_network(const Json& doc) {
    Reader top{""};
    Testnet net;
    net.chain_id = top.string(doc, "chain_id");
    if (doc.contains("app")) {
        const auto app = parse_app(top.string(doc, "app"));
        if (!app) throw Reader::Failure{"app: expected \"barrel\" or \"kvstore\""};
        net.app = *app;
    }
    const std::string genesis = net.app == App::barrel ? top.string(doc, "genesis") : "";
    net.dir = doc.contains("dir") ? top.string(doc, "dir")
                                  : std::string{without_suffix(genesis, "/genesis.json")};
    if (net.app == App::barrel && (net.dir.empty() || genesis != net.genesis_path()))
        throw Reader::Failure{"genesis: expected DIR/genesis.json, got '" + genesis + "'"};
    if (net.dir.empty() || net.dir.front() != '/')
        throw Reader::Failure{"dir: expected an absolute path"};
    net.base_port = top.number(doc, "base_port");
    net.timeout_commit_ms = top.number(doc, "timeout_commit_ms");
    net.settings = parse_settings(doc);
    net.node_args = parse_node_args(doc, net.app);
    if (doc.contains("snapshot_interval")) {
        net.snapshot_interval = top.number(doc, "snapshot_interval");
        if (net.app != App::barrel && net.snapshot_interval != 0)
            throw Reader::Failure{"snapshot_interval: a kvstore network runs no barrel-node"};
    }
    return net;
}

/// Node `i` of "nodes": its paths and addresses follow from DIR, the index and the app.
Node parse_node(const Json& n, size_t i, const Testnet& net) {
    Reader r{"nodes." + std::to_string(i)};
    if (!n.is_object()) throw Reader::Failure{"nodes." + std::to_string(i) + ": not an object"};
    if (r.number(n, "index") != i)
        throw Reader::Failure{r.at("index") + ": expected " + std::to_string(i)};
    auto ports = node_ports(net.base_port, i);
    if (!ports) throw Reader::Failure{ports.error()};
    const std::string host = n.contains("host") ? r.string(n, "host") : std::string{kLoopbackHost};
    if (!is_ipv4_address(host))
        throw Reader::Failure{r.at("host") + ": not a numeric IPv4 address: '" + host + "'"};
    auto node =
        make_node(net.dir, i, r.boolean(n, "validator"), net.base_port,
                  node_id_of(r.string(n, "p2p"), host, ports->p2p, r.at("p2p")), net.app, host);
    if (!node) throw Reader::Failure{node.error()};
    // A file that says otherwise was edited by hand, and the commands would act on the wrong
    // files.
    std::vector<std::pair<const char*, std::string>> derived = {
        {"home", node->home},
        {"abci", node->abci},
        {"cometbft_rpc", node->cometbft_rpc_url()},
    };
    if (net.app == App::barrel) {
        derived.emplace_back("datadir", node->datadir);
        derived.emplace_back("json_rpc", node->json_rpc_url());
    }
    for (const auto& [name, value] : derived)
        if (r.string(n, name) != value)
            throw Reader::Failure{r.at(name) + ": expected '" + value + "'"};
    return std::move(*node);
}

}  // namespace

Expected<Testnet, std::string> parse_testnet(std::string_view text) {
    const Json doc = Json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return unexpected("not a JSON object");
    try {
        Testnet net = parse_network(doc);
        const Json& nodes = Reader{""}.member(doc, "nodes");
        if (!nodes.is_array() || nodes.empty())
            return unexpected("nodes: expected an array of at least one node");
        for (size_t i = 0; i < nodes.size(); ++i) net.nodes.push_back(parse_node(nodes[i], i, net));
        return net;
    } catch (const Reader::Failure& f) {
        return unexpected(f.message);
    }
}

// ---- config.toml
// ---------------------------------------------------------------------------------

std::string toml_string(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

Expected<std::string, std::string> set_toml_value(std::string_view text, std::string_view section,
                                                  std::string_view key, std::string_view value) {
    std::string current;  // the section of the line being read
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t end = std::min(text.find('\n', pos), text.size());
        const std::string_view line = text.substr(pos, end - pos);
        const std::string_view stripped = trim(line);
        if (stripped.size() >= 2 && stripped.front() == '[' && stripped.back() == ']') {
            current = std::string{trim(stripped.substr(1, stripped.size() - 2))};
        } else if (current == section && !stripped.empty() && stripped.front() != '#') {
            const size_t eq = stripped.find('=');
            if (eq != std::string_view::npos && trim(stripped.substr(0, eq)) == key) {
                const size_t indent = line.find_first_not_of(" \t");
                std::string out{text.substr(0, pos)};
                out += line.substr(0, indent);
                out += key;
                out += " = ";
                out += value;
                out += text.substr(end);
                return out;
            }
        }
        pos = end + 1;
    }
    return unexpected(
        "config.toml: no key '" + std::string{key} + "' in " +
        (section.empty() ? std::string{"the top table"} : "[" + std::string{section} + "]"));
}

namespace {

using TomlEdit = std::pair<std::string_view, std::pair<std::string_view, std::string>>;

/// The settings given, as config.toml edits (max_block_bytes is the genesis').
std::vector<TomlEdit> settings_edits(const CometSettings& s) {
    std::vector<TomlEdit> edits;
    auto flag = [](bool b) { return std::string{b ? "true" : "false"}; };
    if (s.timeout_propose_ms)
        edits.push_back(
            {"consensus",
             {"timeout_propose", toml_string(std::to_string(*s.timeout_propose_ms) + "ms")}});
    if (s.create_empty_blocks)
        edits.push_back({"consensus", {"create_empty_blocks", flag(*s.create_empty_blocks)}});
    if (s.mempool_size) edits.push_back({"mempool", {"size", std::to_string(*s.mempool_size)}});
    if (s.mempool_max_txs_bytes)
        edits.push_back({"mempool", {"max_txs_bytes", std::to_string(*s.mempool_max_txs_bytes)}});
    if (s.recheck) edits.push_back({"mempool", {"recheck", flag(*s.recheck)}});
    return edits;
}

}  // namespace

Expected<std::string, std::string> configure_node(std::string_view config_toml,
                                                  const NodeConfig& config) {
    const Node& n = *config.node;
    std::string peers;
    for (const auto& p : config.persistent_peers) peers += (peers.empty() ? "" : ",") + p;
    const std::string tcp = "tcp://" + n.host + ":";
    std::vector<TomlEdit> edits = {
        {"", {"moniker", toml_string("node" + std::to_string(n.index))}},
        {"", {"proxy_app", toml_string(n.abci)}},
        {"", {"abci", toml_string("socket")}},
        {"rpc", {"laddr", toml_string(tcp + std::to_string(n.ports.cometbft_rpc))}},
        {"rpc", {"max_request_batch_size", std::to_string(kBroadcastBatch)}},
        {"p2p", {"laddr", toml_string(tcp + std::to_string(n.ports.p2p))}},
        {"p2p", {"external_address", toml_string("")}},
        {"p2p", {"persistent_peers", toml_string(peers)}},
        {"p2p", {"addr_book_strict", "false"}},
        {"p2p", {"allow_duplicate_ip", "true"}},
        {"consensus",
         {"timeout_commit", toml_string(std::to_string(config.timeout_commit_ms) + "ms")}},
        {"instrumentation", {"prometheus", "false"}},
    };
    for (auto& e : settings_edits(config.settings)) edits.push_back(std::move(e));
    if (const auto& sync = config.state_sync) {
        std::string servers;
        for (const auto& s : sync->rpc_servers) servers += (servers.empty() ? "" : ",") + s;
        edits.push_back({"statesync", {"enable", "true"}});
        edits.push_back({"statesync", {"rpc_servers", toml_string(servers)}});
        edits.push_back({"statesync", {"trust_height", std::to_string(sync->trust_height)}});
        edits.push_back({"statesync", {"trust_hash", toml_string(sync->trust_hash)}});
        // CometBFT's 15 s default: the network offers snapshots from the start on loopback.
        edits.push_back({"statesync", {"discovery_time", toml_string("5s")}});
    }
    std::string text{config_toml};
    for (const auto& [section, entry] : edits) {
        auto edited = set_toml_value(text, section, entry.first, entry.second);
        if (!edited) return unexpected(edited.error());
        text = std::move(*edited);
    }
    return text;
}

// ---- genesis.json
// --------------------------------------------------------------------------------

Expected<std::string, std::string> with_app_state(std::string_view cometbft_genesis,
                                                  std::string_view barrel_genesis) {
    Json doc = Json::parse(cometbft_genesis, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return unexpected(std::string{"CometBFT's genesis.json: not a JSON object"});
    doc.erase("app_state");
    // nlohmann would rewrite the numbers of barrel's genesis (a balance past 2^64 as a double):
    // its text goes in as it is, spliced in as the last member.
    std::string text = doc.dump(2);
    const size_t close = text.rfind('}');
    std::string member = std::string{doc.empty() ? "\n" : ",\n"} + "  \"app_state\": ";
    member += trim(barrel_genesis);
    member += "\n";
    text.replace(close, 1, member + "}");
    return text + "\n";
}

Expected<std::string, std::string> with_max_block_bytes(std::string_view cometbft_genesis,
                                                        uint64_t max_bytes) {
    const std::string what = "CometBFT's genesis.json: ";
    Json doc = Json::parse(cometbft_genesis, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return unexpected(what + "not a JSON object");
    // CometBFT writes its int64s as strings ("22020096"); the member must be where v0.38 has it.
    auto member = [&](std::initializer_list<const char*> path) -> Json* {
        Json* v = &doc;
        for (const char* name : path) {
            if (!v->is_object() || !v->contains(name)) return nullptr;
            v = &(*v)[name];
        }
        return v->is_string() ? v : nullptr;
    };
    Json* block = member({"consensus_params", "block", "max_bytes"});
    if (block == nullptr) return unexpected(what + "no consensus_params.block.max_bytes string");
    if (const Json* evidence = member({"consensus_params", "evidence", "max_bytes"})) {
        const auto e = parse_u64(evidence->get<std::string>());
        if (e && *e > max_bytes)
            return unexpected(what + "consensus_params.evidence.max_bytes " + std::to_string(*e) +
                              " does not fit a block of " + std::to_string(max_bytes));
    }
    *block = std::to_string(max_bytes);
    return doc.dump(2) + "\n";
}

Expected<std::string, std::string> cometbft_chain_id(std::string_view cometbft_genesis) {
    const Json doc = Json::parse(cometbft_genesis, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return unexpected(std::string{"CometBFT's genesis.json: not a JSON object"});
    const auto it = doc.find("chain_id");
    if (it == doc.end() || !it->is_string())
        return unexpected(std::string{"CometBFT's genesis.json: no chain_id"});
    return it->get<std::string>();
}

std::string default_genesis_text() {
    std::ostringstream g;
    g << "{\n"
      << "  \"chain_id\": \"0x539\",\n"
      << "  \"base_fee\": \"0x7\",\n"
      << "  \"gas_limit\": \"0x1c9c380\",\n"
      << "  \"timestamp\": \"0x0\",\n"
      << "  \"coinbase\": \"0xc0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0\",\n"
      << "  \"accounts\": {\n"
      << "    \"" << kDevAccount << "\": {\"balance\": \"0xd3c21bcecceda1000000\"}\n"
      << "  },\n"
      << "  \"users\": {}\n"
      << "}\n";
    return g.str();
}

}  // namespace barrel::testnet
