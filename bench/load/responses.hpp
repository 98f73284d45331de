#pragma once
// What barrel-load reads while the clock runs, read without building a DOM: the answers to a
// batch of eth_sendRawTransaction (one per transaction sent) and to a batch of
// eth_getBlockByNumber(n, false) (each block's transaction hashes), with simdjson's parser (a
// flat tape of the document, no allocation per value, SIMD chosen at run time); and the index
// from a transaction hash to its place in the workload. Every generator microsecond per
// transaction is taken from the node on a shared machine, and nlohmann's tree of these
// responses (a map per object, a string per hash) was the largest part of the generator's
// cost. The checks stay whole: the input must be JSON throughout (simdjson validates all of
// it, UTF-8 included), each answer an object with a numeric id, every hash "0x" and 64 hex
// digits. The calls made outside the timing still use nlohmann.

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::load {

/// "0x" (or "0X") and exactly 64 hex digits of either case: the hash; anything else: nothing.
/// core's hash_from_hex with the prefix required.
std::optional<Hash> hash_of_hex(std::string_view text) noexcept;

/// One answer of an eth_sendRawTransaction batch.
struct SendAnswer {
    uint64_t id{0};
    std::optional<Hash> hash;  ///< the result, when it is a hash (checked by the caller)
    /// The error's message when the call failed ("(no message)" when it has none); it takes
    /// precedence over a result.
    std::optional<std::string> error;
};

/// A block as barrel's eth_getBlockByNumber(n, false) shows it: its hash and its transactions'.
struct EthBlock {
    Hash hash{};
    std::vector<Hash> transactions;
};

/// A block as CometBFT's `block` method shows it: block_id.hash (hex, as CometBFT writes it) and
/// its transactions, base64 (as CometBFT writes them).
struct CometBlock {
    std::string hash;
    std::vector<std::string> transactions;
};

/// Reads the responses; one per thread (it keeps its parser's buffers from call to call).
/// Errors are whole sentences without the method's name, which the caller adds.
class ResponseReader {
public:
    ResponseReader();
    ~ResponseReader();
    ResponseReader(const ResponseReader&) = delete;
    ResponseReader& operator=(const ResponseReader&) = delete;

    /// The answers to a batch of `calls` calls, in the order received (ids are the caller's
    /// to match: this checks only that each is a number).
    Expected<std::vector<SendAnswer>, std::string> send_answers(std::string_view body,
                                                                size_t calls);

    /// The answer to one eth_getBlockByNumber(n, false) (not a batch): the block, or nothing
    /// when it is not there yet (a null result).
    Expected<std::optional<EthBlock>, std::string> eth_block(std::string_view body);

    /// The answer to one CometBFT `block` call (JSON-RPC, not a batch): the block, or nothing when
    /// the height is past the node's ("height 9 must be less than or equal to the current
    /// blockchain height 8"). Any other error is an error.
    Expected<std::optional<CometBlock>, std::string> comet_block(std::string_view body);

    /// The answers to a batch of CometBFT `broadcast_tx_async` calls, as send_answers reads
    /// eth_sendRawTransaction's: an error's message is its `data` when it has one (CometBFT's
    /// message is "Internal error", its data the reason: "tx already exists in cache"); a result
    /// carries no hash to check.
    Expected<std::vector<SendAnswer>, std::string> broadcast_answers(std::string_view body,
                                                                     size_t calls);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// Whether `answers` (to one batch of sends) answer each transaction of `batch` (its transaction
/// indices, ascending, as the calls' ids) exactly once: nothing when they do, else what is wrong
/// ("an answer of id 7, which the batch did not send", "two answers of id 3"). `seen` is
/// scratch that the caller keeps from batch to batch.
std::optional<std::string> check_answer_ids(std::span<const SendAnswer> answers,
                                            std::span<const uint32_t> batch,
                                            std::vector<uint8_t>& seen);

/// Transaction hashes to their indices in a list. Open addressing keyed by a hash's first 8
/// bytes: a keccak output needs no further mixing, a probe is one cache line, and a hash not
/// in the list (another client's) is almost always told by those 8 bytes alone.
class HashIndex {
public:
    HashIndex() = default;
    /// Indexes `hashes`, which must be distinct.
    explicit HashIndex(std::span<const Hash> hashes);

    /// The index of `hash` in the list given to the constructor, which is passed again (the
    /// index keeps no pointer into it, so that the list can move).
    std::optional<uint32_t> find(const Hash& hash, std::span<const Hash> hashes) const noexcept;

private:
    struct Slot {
        uint64_t prefix{0};
        uint32_t index_plus_one{0};  ///< 0: an empty slot
    };
    std::vector<Slot> m_slots;
    size_t m_mask{0};
};

}  // namespace barrel::load
