#pragma once
// The Ethereum JSON-RPC methods of `barrel-node run` (docs/rpc.md lists them with examples):
// what wallets and SDKs need to send transfers and read chains. A request body goes in, a
// response body comes out, a step at a time (Methods::Run, batch.cpp): a batch's calls run in
// order, as if alone, except that the consecutive calls of a method whose table entry says so
// run together (a run of sends is admitted to the pool at once, so their senders are recovered
// in one parallel loop). The methods and their table are methods.cpp (method_table.hpp), the
// call object of eth_call and eth_estimateGas call_args.cpp, their simulation simulate.cpp.

#include <barrel/core/uint256.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/store/store.hpp>

#include "metrics/node_metrics.hpp"
#include "rpc/events.hpp"
#include "rpc/filters.hpp"
#include "rpc/jsonrpc.hpp"
#include "rpc/subscriber.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::rpc {

/// A node's view of its network, as its consensus engine reports it.
struct NetworkStatus {
    size_t peers{0};
    /// Catching up (block sync, replay): the highest height heard of, beside the node's head.
    bool catching_up{false};
    uint64_t starting_height{0};  ///< the head when catching up began
    uint64_t highest_height{0};
    /// A state-sync restore under way: the snapshot's height, its data chunks and how many of
    /// them are in (eth_syncing's stateSync* members).
    struct Restore {
        uint64_t height{0};
        uint64_t chunks{0};
        uint64_t applied{0};
    };
    std::optional<Restore> restoring{};
};

/// What the methods read and write. The node owns all of it and outlives the methods.
struct Node {
    const store::Store& store;
    pool::Pool& pool;
    std::string client_version;
    /// The priority fee eth_maxPriorityFeePerGas suggests (and eth_gasPrice adds to the base
    /// fee): 1 gwei, what go-ethereum's dev mode suggests.
    u256 suggested_tip{1'000'000'000};
    /// Called after a request admitted transactions, with their encodings (the node's hand-off:
    /// the local sealer may have a full block now; on a network, CometBFT is given them to
    /// gossip).
    std::function<void(std::span<const BytesView> admitted)> on_admitted{};
    /// Where the node stands against its network (eth_syncing, net_peerCount); none: a lone
    /// sealer, never syncing and without peers.
    std::function<NetworkStatus()> network{};
    /// Called before each call runs (a seam for tests: a call that throws).
    std::function<void(const Call&)> before_call{};
    /// Where admitted transactions are announced (filters, subscriptions); none: not announced.
    Events* events{nullptr};
    /// Where calls, admissions and rejections are counted (none: not counted).
    metrics::NodeMetrics* metrics{nullptr};
    /// eth_sendRawTransaction takes legacy transactions signed without a chain id (pre-EIP-155,
    /// replayable on any chain); go-ethereum's default, and barrel's, is to refuse them
    /// (`run --rpc-allow-unprotected-txs`).
    bool allow_unprotected_txs{false};
};

class FeeHistoryCache;

class Methods {
public:
    /// The node's filters live here (node-wide: every connection's calls share them).
    Methods(Node& node, const Limits& limits, FilterConfig filters = {});
    ~Methods();

    /// A request's calls in progress.
    class Run {
    public:
        /// Answers the next call, or the next run of consecutive calls of a method that joins
        /// a batch (Method::batch: consecutive sends are admitted together); false once every
        /// call is answered. A call that throws is answered -32603 "method
        /// handler crashed" (and logged); the batch goes on. Once a batch's response passes
        /// Limits::max_response_bytes, each remaining call is answered -32003 "response too
        /// large" without running.
        bool step();
        /// The response body ("" when every call was a notification).
        std::string finish() &&;

    private:
        friend class Methods;
        Run(Methods& methods, Request request, Subscriber* subscriber);
        Run(Methods& methods, const Error& error);
        /// Call `call` alone.
        void answer(size_t call);
        /// Calls first..end, consecutive calls of `method`, run together by its batch handler.
        void answer_together(size_t method, size_t first, size_t end);

        Methods& m_methods;
        Request m_request;
        size_t m_next{0};
        ResponseWriter m_writer;
        Subscriber* m_subscriber{nullptr};
        /// One snapshot for the request, taken at its first read.
        std::optional<Expected<std::unique_ptr<store::Snapshot>, store::StoreError>> m_view;
    };

    /// The request in `body`, ready to be run a step at a time (a body that is not a request
    /// makes a run with its error already written). `subscriber`: the connection's, which
    /// eth_subscribe and eth_unsubscribe reach (a WebSocket's), which must outlive the Run;
    /// none: they answer -32601 "notifications not supported".
    Run begin(std::string_view body, Subscriber* subscriber = nullptr);

    /// The response body for a request body ("" when every call was a notification): begin()
    /// and every step at once. Every call of the request reads the same snapshot of the store
    /// (Store::snapshot).
    std::string handle(std::string_view body);

    /// One call's result or error (for tests; handle() is what the server uses).
    Expected<json, Error> call(const Call& call, Subscriber* subscriber = nullptr);

private:
    /// call(), for the method at `method` in the method table.
    Expected<json, Error> call_one(size_t method, const Call& call, Subscriber* subscriber);

    Node& m_node;
    Limits m_limits;
    std::unique_ptr<FeeHistoryCache> m_fee_cache;
    std::unique_ptr<Filters> m_filters;
    /// Each method's counters, by its position in the method table (methods.cpp), then those of
    /// unknown methods: found once here, so a call costs no label lookup.
    std::vector<metrics::MethodCounters> m_counters;
};

}  // namespace barrel::rpc
