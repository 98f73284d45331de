#pragma once
// eth_call and eth_estimateGas (go-ethereum's internal/ethapi simulate.go and
// eth/gasestimator): a call object run as the only transaction of a block on the head, by the
// same executor as every block, with nothing committed.

#include "rpc/call_args.hpp"
#include "rpc/context.hpp"
#include "rpc/params.hpp"

#include <optional>

namespace barrel::rpc {

/// eth_estimateGas: the gas the call uses, found in one run (barrel's gas use depends on the
/// transaction alone).
Result estimate_gas(Context& c, CallObject object, std::optional<BlockRef> block);

/// eth_call: the call's output.
Result call_method(Context& c, CallObject object, std::optional<BlockRef> block);

}  // namespace barrel::rpc
