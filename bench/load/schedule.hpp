#pragma once
// The send schedule: which transactions go in which batch over which connection. Transaction i
// is sender i % S's (i / S)-th: the list is in nonce rounds (nonce k of every sender before
// nonce k + 1 of any). Each sender belongs to one connection (sender % C), and a connection
// sends its batches one after another, so every sender's transactions reach the node in nonce
// order whatever the timing between connections: none is queued for a nonce gap.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace barrel::load {

/// Transaction indices, in the order they are sent.
using Batch = std::vector<uint32_t>;

/// The batches of each of `connections` connections (at most `batch` transactions each).
/// Needs senders >= connections >= 1, batch >= 1.
std::vector<std::vector<Batch>> make_schedule(size_t txs, size_t senders, size_t batch,
                                              size_t connections);

/// Per connection, per batch of `schedule`: the request body, a JSON-RPC batch whose ids are the
/// transactions' indices, transaction i's call `call(i)` (its "method" and "params" members).
std::vector<std::vector<std::string>> batch_bodies(
    const std::vector<std::vector<Batch>>& schedule,
    const std::function<std::string(uint32_t)>& call);

/// The sender of transaction `i`, and its place among that sender's transactions.
inline size_t sender_of(size_t i, size_t senders) noexcept { return i % senders; }
inline uint64_t nonce_offset_of(size_t i, size_t senders) noexcept { return i / senders; }

}  // namespace barrel::load
