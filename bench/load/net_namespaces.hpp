#pragma once
// The network namespaces of `barrel-load --network --perturb disconnect|partition`, the layout of
// test/network/netns.mjs (docs/network.md, "Perturbations"): barrel-load moves itself into a
// network namespace of its own (unshare), the hub; validator I's two processes run in namespace
// PREFIX-nI (`testnet start` behind the prefix "ip netns exec PREFIX-n{node}") at 10.77.0.(I+1),
// on two links: its peer link, a veth to bridge br0 in the hub, and its control link, a veth to
// the hub alone, over which the hub (the load's connections and watchers, at 10.77.1.254) reaches
// it. Isolating validators moves their peer veths to a second bridge, br1: they lose every link to
// the others, and the hub's connections to every node go on untouched. Nothing is made outside the
// hub and the named namespaces, whose names carry barrel-load's pid: runs side by side do not
// collide. Needs root and iproute2's `ip`.

#include "interrupt.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace barrel::load {

class NetNamespaces {
public:
    /// Moves this process (before it starts any thread: a thread keeps the namespace it had)
    /// into a new network namespace and makes the bridges and `count` node namespaces. Throws
    /// bench::Failure (status 1) saying what it needs if it cannot (not root, no `ip`).
    explicit NetNamespaces(size_t count);
    /// Deletes the node namespaces (the hub's bridges go with this process).
    ~NetNamespaces();
    NetNamespaces(const NetNamespaces&) = delete;
    NetNamespaces& operator=(const NetNamespaces&) = delete;

    /// Validator `i`'s address, for `testnet init --hosts`.
    std::string host(size_t i) const;
    /// The prefix `testnet start` starts node I's processes behind (BARREL_TESTNET_EXEC_PREFIX).
    std::string exec_prefix() const;

    /// Cuts `nodes` off from the rest (a disconnect of one, a partition of several).
    void isolate(const std::vector<size_t>& nodes);
    /// Joins what isolate cut off again.
    void heal();

private:
    void ip(const std::vector<std::string>& args) const;
    void remove_namespaces();

    std::string m_ip, m_prefix;
    size_t m_made{0};
    std::vector<size_t> m_isolated;
    std::optional<InterruptCleanup> m_on_interrupt;  ///< an interrupt deletes them too
};

}  // namespace barrel::load
