// `barrel-node testnet`'s files: the node layout, the edits to CometBFT's config.toml and
// genesis.json, and DIR/testnet.json (testnet.hpp).

#include <barrel/core/uint256.hpp>

#include "testnet.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>
#include <utility>

namespace barrel::cli::testnet {

namespace {

using Json = nlohmann::ordered_json;

std::string loopback_url(uint16_t port) { return "http://127.0.0.1:" + std::to_string(port); }

std::string_view trim(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t\r\n");
    return s.substr(first, last - first + 1);
}

}  // namespace

// ---- Layout
// --------------------------------------------------------------------------------------

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

std::string Node::json_rpc_url() const { return loopback_url(ports.json_rpc); }
std::string Node::cometbft_rpc_url() const { return loopback_url(ports.cometbft_rpc); }
std::string Node::p2p_address() const {
    return node_id + "@127.0.0.1:" + std::to_string(ports.p2p);
}
std::string Node::barrel_log() const { return home + "/barrel.log"; }
std::string Node::cometbft_log() const { return home + "/cometbft.log"; }
std::string Node::barrel_pid_file() const { return home + "/barrel.pid"; }
std::string Node::cometbft_pid_file() const { return home + "/cometbft.pid"; }

Expected<Node, std::string> make_node(const std::string& dir, size_t index, bool validator,
                                      uint64_t base_port, std::string node_id) {
    auto ports = node_ports(base_port, index);
    if (!ports) return unexpected(ports.error());
    Node n;
    n.index = index;
    n.validator = validator;
    n.node_id = std::move(node_id);
    n.home = dir + "/node" + std::to_string(index);
    n.datadir = n.home + "/barrel";
    n.ports = *ports;
    const std::string socket = n.home + "/abci.sock";
    // A Unix socket needs no port and no other process can take it; a path too long for
    // sockaddr_un falls back to the node's TCP port.
    n.abci = socket.size() <= kMaxUnixSocketPath
                 ? "unix://" + socket
                 : "tcp://127.0.0.1:" + std::to_string(n.ports.abci);
    return n;
}

std::string Testnet::genesis_path() const { return dir + "/genesis.json"; }

std::string testnet_file(const std::string& dir) { return dir + "/testnet.json"; }

// ---- testnet.json
// --------------------------------------------------------------------------------

std::string to_json_text(const Testnet& net) {
    Json nodes = Json::array();
    for (const Node& n : net.nodes) {
        nodes.push_back({
            {"index", n.index},
            {"validator", n.validator},
            {"json_rpc", n.json_rpc_url()},
            {"cometbft_rpc", n.cometbft_rpc_url()},
            {"p2p", n.p2p_address()},
            {"abci", n.abci},
            {"home", n.home},
            {"datadir", n.datadir},
            {"logs", {{"barrel", n.barrel_log()}, {"cometbft", n.cometbft_log()}}},
        });
    }
    const Json doc = {
        {"chain_id", net.chain_id},   {"genesis", net.genesis_path()},
        {"base_port", net.base_port}, {"timeout_commit_ms", net.timeout_commit_ms},
        {"nodes", std::move(nodes)},
    };
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

/// "ID@127.0.0.1:PORT" → ID; the port must be the node's.
std::string node_id_of(const std::string& p2p, uint16_t port, const std::string& where) {
    const auto at = p2p.find('@');
    const std::string expected_tail = "@127.0.0.1:" + std::to_string(port);
    if (at == std::string::npos || at == 0 || p2p.substr(at) != expected_tail)
        throw Reader::Failure{where + ": expected ID" + expected_tail + ", got '" + p2p + "'"};
    return p2p.substr(0, at);
}

}  // namespace

Expected<Testnet, std::string> parse_testnet(std::string_view text) {
    const Json doc = Json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return unexpected("not a JSON object");
    try {
        Reader top{""};
        Testnet net;
        net.chain_id = top.string(doc, "chain_id");
        const std::string genesis = top.string(doc, "genesis");
        const std::string suffix = "/genesis.json";
        if (genesis.size() <= suffix.size() ||
            genesis.compare(genesis.size() - suffix.size(), suffix.size(), suffix) != 0)
            return unexpected("genesis: expected DIR/genesis.json, got '" + genesis + "'");
        net.dir = genesis.substr(0, genesis.size() - suffix.size());
        net.base_port = top.number(doc, "base_port");
        net.timeout_commit_ms = top.number(doc, "timeout_commit_ms");
        const Json& nodes = top.member(doc, "nodes");
        if (!nodes.is_array() || nodes.empty())
            return unexpected("nodes: expected an array of at least one node");
        for (size_t i = 0; i < nodes.size(); ++i) {
            Reader r{"nodes." + std::to_string(i)};
            const Json& n = nodes[i];
            if (!n.is_object()) return unexpected("nodes." + std::to_string(i) + ": not an object");
            if (r.number(n, "index") != i)
                return unexpected(r.at("index") + ": expected " + std::to_string(i));
            auto ports = node_ports(net.base_port, i);
            if (!ports) return unexpected(ports.error());
            auto node = make_node(net.dir, i, r.boolean(n, "validator"), net.base_port,
                                  node_id_of(r.string(n, "p2p"), ports->p2p, r.at("p2p")));
            if (!node) return unexpected(node.error());
            // The paths and addresses follow from DIR and the index: a file that says otherwise
            // was edited by hand, and the commands would act on the wrong files.
            const std::pair<const char*, std::string> derived[] = {
                {"home", node->home},
                {"datadir", node->datadir},
                {"abci", node->abci},
                {"json_rpc", node->json_rpc_url()},
                {"cometbft_rpc", node->cometbft_rpc_url()},
            };
            for (const auto& [name, value] : derived)
                if (r.string(n, name) != value)
                    return unexpected(r.at(name) + ": expected '" + value + "'");
            net.nodes.push_back(std::move(*node));
        }
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

Expected<std::string, std::string> configure_node(std::string_view config_toml,
                                                  const NodeConfig& config) {
    const Node& n = *config.node;
    std::string peers;
    for (const auto& p : config.persistent_peers) peers += (peers.empty() ? "" : ",") + p;
    const std::string tcp = "tcp://127.0.0.1:";
    const std::pair<std::string_view, std::pair<std::string_view, std::string>> edits[] = {
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

}  // namespace barrel::cli::testnet
