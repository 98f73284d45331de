#include "net_namespaces.hpp"

#include "common/args.hpp"
#include "node_process.hpp"
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace barrel::load {

namespace {

constexpr const char* kSubnet = "10.77.0.";
constexpr const char* kHub0 = "10.77.0.254";  ///< the hub on br0
constexpr const char* kHub1 = "10.77.0.253";  ///< the hub on br1, for the isolated nodes

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
    for (const char* br : {"br0", "br1"}) {
        ip({"link", "add", br, "type", "bridge"});
        ip({"link", "set", br, "up"});
    }
    ip({"addr", "add", std::string{kHub0} + "/24", "dev", "br0"});
    ip({"addr", "add", std::string{kHub1} + "/32", "dev", "br1"});
    try {
        for (; m_made < count; ++m_made) {
            const std::string ns = m_prefix + "-n" + std::to_string(m_made);
            const std::string veth = "v" + std::to_string(m_made);
            ip({"netns", "add", ns});
            ip({"link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns});
            ip({"link", "set", veth, "master", "br0", "up"});
            ip({"-n", ns, "link", "set", "lo", "up"});
            ip({"-n", ns, "addr", "add", host(m_made) + "/24", "dev", "eth0"});
            ip({"-n", ns, "link", "set", "eth0", "up"});
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
        run_to_end({m_ip, "netns", "del", m_prefix + "-n" + std::to_string(i)}, "/dev/null");
    m_made = 0;
}

std::string NetNamespaces::host(size_t i) const { return kSubnet + std::to_string(i + 1); }

std::string NetNamespaces::exec_prefix() const {
    return m_ip + " netns exec " + m_prefix + "-n{node}";
}

void NetNamespaces::ip(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{m_ip};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string log = "/tmp/" + m_prefix + ".ip.log";
    const int status = run_to_end(argv, log);
    const std::string output = read_text_file(log);
    std::error_code ec;
    std::filesystem::remove(log, ec);
    if (status != 0) {
        std::string command = "ip";
        for (const auto& a : args) command += " " + a;
        throw bench::Failure{1,
                             command + ": exit status " + std::to_string(status) + ": " + output};
    }
}

void NetNamespaces::isolate(const std::vector<size_t>& nodes) {
    for (size_t i : nodes) {
        ip({"link", "set", "v" + std::to_string(i), "master", "br1"});
        ip({"route", "add", host(i) + "/32", "dev", "br1", "src", kHub1});
        m_isolated.push_back(i);
    }
}

void NetNamespaces::heal() {
    for (size_t i : m_isolated) {
        ip({"route", "del", host(i) + "/32"});
        ip({"link", "set", "v" + std::to_string(i), "master", "br0"});
    }
    m_isolated.clear();
}

}  // namespace barrel::load
