#pragma once
// What a method runs with (methods.cpp, simulate.cpp): the node, the request's one snapshot of
// the store, and the reads and errors every method shares, in go-ethereum's words.

#include <barrel/core/expected.hpp>
#include <barrel/state/state.hpp>
#include <barrel/store/store.hpp>

#include "rpc/jsonrpc.hpp"
#include "rpc/methods.hpp"
#include "rpc/params.hpp"

#include <optional>
#include <string>
#include <utility>

namespace barrel::rpc {

/// A method's answer: its result, or its error.
using Result = Expected<json, Error>;

/// What the handlers of one request share: the node, and one snapshot of the store that every
/// read of the request goes through, so that a request never sees two heads.
struct Context {
    Node& node;
    const store::Snapshot& view;
    FeeHistoryCache* fee_cache{nullptr};
    Filters* filters{nullptr};
    /// The connection's, for eth_subscribe; none over HTTP.
    Subscriber* subscriber{nullptr};

    const exec::ChainConfig& config() const { return node.store.genesis().config; }
    const u256& base_fee() const { return config().base_fee; }
};

inline Unexpected<Error> server_error(std::string message) {
    return unexpected(Error{code::server_error, std::move(message)});
}

inline Unexpected<Error> invalid_params(std::string message) {
    return unexpected(Error{code::invalid_params, std::move(message)});
}

inline Unexpected<Error> store_failure(const store::StoreError& e) {
    return unexpected(Error{code::internal_error, "store: " + e.message});
}

inline Unexpected<Error> state_failure(const state::ReadError& e) {
    return unexpected(Error{code::internal_error, "state: " + e.message});
}

/// A store query's value, or the call's error.
template <class T>
Expected<T, Error> stored(Expected<T, store::StoreError> v) {
    if (!v) return store_failure(v.error());
    return std::move(v).value();
}

/// The number of a block reference, or nullopt if there is no such block (a number past the
/// head, an unknown hash).
Expected<std::optional<uint64_t>, Error> block_number(const Context& c, const BlockRef& ref);

/// The node keeps the state of its head only: a state query names the head or fails.
Expected<void, Error> require_head_state(const Context& c, const BlockRef& ref);

/// A block a read names must exist (go-ethereum's words when it does not).
Expected<void, Error> require_block(const Context& c, const BlockRef& ref);

/// An account of the snapshot's head state (an empty one when it has none).
Expected<state::Account, Error> account_of(const Context& c, const Address& a);

}  // namespace barrel::rpc
