#pragma once
// --join: a full node joins the network after the run, by block sync, and its replay of the
// run's history is timed.

#include "net_load.hpp"

#include <chrono>

namespace barrel::load::net {

/// Adds a full node to `net` (`testnet join`) and waits until its application has committed the
/// run's last height (r.last_height); throws bench::Failure if its height stays still for
/// `stall`.
NetRunResult::Join time_join(Network& net, const NetRunResult& r, std::chrono::seconds stall);

}  // namespace barrel::load::net
