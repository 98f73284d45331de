#pragma once
// The Ethereum JSON-RPC methods of `barrel-node run` (docs/rpc.md lists them with examples):
// what wallets and SDKs need to send transfers and read chains. A request body goes in, a
// response body comes out; the calls of a batch that send transactions are admitted to the
// pool together, so their senders are recovered in one parallel loop.

#include <barrel/core/uint256.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/store/store.hpp>

#include "metrics/node_metrics.hpp"
#include "rpc/jsonrpc.hpp"

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::rpc {

/// What the methods read and write. The node owns all of it and outlives the methods.
struct Node {
    const store::Store& store;
    pool::Pool& pool;
    std::string client_version;
    /// The priority fee eth_maxPriorityFeePerGas suggests (and eth_gasPrice adds to the base
    /// fee): 1 gwei, what go-ethereum's dev mode suggests.
    u256 suggested_tip{1'000'000'000};
    /// Called after a request admitted transactions (the sealer may have a full block now).
    std::function<void()> on_admitted{};
    /// Where calls, admissions and rejections are counted (none: not counted).
    metrics::NodeMetrics* metrics{nullptr};
    /// eth_sendRawTransaction takes legacy transactions signed without a chain id (pre-EIP-155,
    /// replayable on any chain); go-ethereum's default, and barrel's, is to refuse them
    /// (`run --rpc-allow-unprotected-txs`).
    bool allow_unprotected_txs{false};
};

class Methods {
public:
    Methods(Node& node, const Limits& limits);

    /// The response body for a request body ("" when every call was a notification). Every
    /// call of the request reads the same snapshot of the store (Store::snapshot).
    std::string handle(std::string_view body);

    /// One call's result or error (for tests; handle() is what the server uses).
    Expected<json, Error> call(const Call& call);

private:
    /// call(), for the method at `method` in the method table.
    Expected<json, Error> call_one(size_t method, const Call& call);

    Node& m_node;
    Limits m_limits;
    /// Each method's counters, by its position in the method table (methods.cpp), then those of
    /// unknown methods: found once here, so a call costs no label lookup.
    std::vector<metrics::MethodCounters> m_counters;
};

}  // namespace barrel::rpc
