#include "net_namespaces.hpp"

#include "common/args.hpp"
#include "testnet/testnet.hpp"
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace barrel::load {

namespace {

constexpr const char* kSubnet = "10.77.0.";
/// The hub's address, on its loopback: each node reaches it over its control link.
constexpr const char* kHub = "10.77.1.254";

std::string find_ip() {
    for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
        if (::access(p, X_OK) == 0) return p;
    return {};
}

}  // namespace

NetNamespaces::NetNamespaces(size_t count)
    : m_ip{find_ip()}, m_prefix{"barrel-load-" + std::to_string(::getpid())} {
    const std::string needs =
        "--perturb disconnect and partition run each validator in a network namespace of its "
        "own: ";
    if (m_ip.empty()) throw bench::Failure{1, needs + "no ip (iproute2) found"};
    if (::unshare(CLONE_NEWNET) != 0)
        throw bench::Failure{
            1, needs + "unshare(CLONE_NEWNET): " + std::strerror(errno) + " (it needs root)"};
    ip({"link", "set", "lo", "up"});
    ip({"addr", "add", std::string{kHub} + "/32", "dev", "lo"});
    for (const char* br : {"br0", "br1"}) {
        ip({"link", "add", br, "type", "bridge"});
        ip({"link", "set", br, "up"});
    }
    try {
        for (; m_made < count; ++m_made) {
            const std::string ns = m_prefix + "-n" + std::to_string(m_made);
            const std::string i = std::to_string(m_made);
            ip({"netns", "add", ns});
            ip({"-n", ns, "link", "set", "lo", "up"});
            // The peer link, on br0.
            ip({"link", "add", "p" + i, "type", "veth", "peer", "name", "eth0", "netns", ns});
            ip({"link", "set", "p" + i, "master", "br0", "up"});
            ip({"-n", ns, "addr", "add", host(m_made) + "/24", "dev", "eth0"});
            ip({"-n", ns, "link", "set", "eth0", "up"});
            // The control link: the hub and the node, one route each way (the hub does not
            // forward, and the node routes its peers on eth0 only).
            ip({"link", "add", "c" + i, "type", "veth", "peer", "name", "ctl", "netns", ns});
            ip({"link", "set", "c" + i, "up"});
            ip({"-n", ns, "link", "set", "ctl", "up"});
            ip({"-n", ns, "route", "add", std::string{kHub} + "/32", "dev", "ctl"});
            ip({"route", "add", host(m_made) + "/32", "dev", "c" + i, "src", kHub});
        }
    } catch (...) {
        // The namespace being made counts too: `ip netns del` of one never made fails quietly.
        ++m_made;
        remove_namespaces();
        throw;
    }
    m_on_interrupt.emplace([this] { remove_namespaces(); });
}

NetNamespaces::~NetNamespaces() {
    const auto held = InterruptCleanup::lock();
    if (m_on_interrupt) m_on_interrupt->release(held);
    remove_namespaces();
}

void NetNamespaces::remove_namespaces() {
    for (size_t i = 0; i < m_made; ++i)
        (void)testnet::run_program({m_ip, "netns", "del", m_prefix + "-n" + std::to_string(i)});
    m_made = 0;
}

std::string NetNamespaces::host(size_t i) const { return kSubnet + std::to_string(i + 1); }

std::string NetNamespaces::exec_prefix() const {
    return m_ip + " netns exec " + m_prefix + "-n{node}";
}

void NetNamespaces::ip(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{m_ip};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = testnet::run_program(argv);
    if (!r) throw bench::Failure{1, r.error()};
    if (r->status != 0) {
        std::string command = "ip";
        for (const auto& a : args) command += " " + a;
        throw bench::Failure{
            1, command + ": exit status " + std::to_string(r->status) + ": " + r->output};
    }
}

void NetNamespaces::isolate(const std::vector<size_t>& nodes) {
    for (size_t i : nodes) {
        ip({"link", "set", "p" + std::to_string(i), "master", "br1"});
        m_isolated.push_back(i);
    }
}

void NetNamespaces::heal() {
    for (size_t i : m_isolated) ip({"link", "set", "p" + std::to_string(i), "master", "br0"});
    m_isolated.clear();
}

}  // namespace barrel::load
