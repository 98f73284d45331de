#pragma once
// The parameters of a call, read by position with Ethereum's encodings and go-ethereum's checks:
// quantities are "0x" hex without leading zeros, data is "0x" hex of whole bytes, addresses and
// hashes have their exact length, blocks are a tag, a number or an EIP-1898 object. A bad
// parameter is invalid_params (-32602) naming its position and name:
// "invalid argument 0 (address): hex string has length 38, want 40 for an address".

#include <barrel/core/bytes.hpp>
#include <barrel/core/uint256.hpp>

#include "rpc/jsonrpc.hpp"

#include <optional>
#include <string_view>

namespace barrel::rpc {

/// A block as a call names it. On a single-sealer chain `safe` and `finalized` are the head, like
/// `latest`; so is `pending`, except where a method counts the pool (eth_getTransactionCount).
struct BlockRef {
    enum class Kind : uint8_t { latest, pending, earliest, number, hash };
    Kind kind{Kind::latest};
    uint64_t number{0};
    Hash hash;
};

/// A view: the json it reads must outlive it.
class Params {
public:
    /// Fails unless `params` is an array (named parameters are not supported, as in
    /// go-ethereum) with between `required` and `max` elements.
    static Expected<Params, Error> positional(const json& params, size_t required, size_t max);

    /// Whether parameter i was given (and is not null).
    bool has(size_t i) const noexcept { return i < m_params->size() && !(*m_params)[i].is_null(); }

    Expected<Address, Error> address(size_t i, std::string_view name) const;
    Expected<Hash, Error> hash(size_t i, std::string_view name) const;
    Expected<Bytes, Error> data(size_t i, std::string_view name) const;
    Expected<uint64_t, Error> quantity(size_t i, std::string_view name) const;
    Expected<u256, Error> quantity256(size_t i, std::string_view name) const;
    Expected<bool, Error> boolean(size_t i, std::string_view name) const;
    /// A block tag, number or {"blockNumber"}/{"blockHash"} object; `latest` when absent.
    Expected<BlockRef, Error> block(size_t i, std::string_view name) const;

    const json& at(size_t i) const { return (*m_params)[i]; }

private:
    explicit Params(const json& params) noexcept : m_params{&params} {}
    const json* m_params;
};

/// invalid_params: "invalid argument I (NAME): REASON".
Error invalid_argument(size_t i, std::string_view name, std::string_view reason);

/// The checks of a quantity string, for parameters inside objects too (a call object's fields).
/// The error is the reason alone ("hex number with leading zero digits").
Expected<u256, std::string> parse_quantity(const json& value, size_t max_bits);
Expected<Bytes, std::string> parse_data(const json& value);
Expected<BlockRef, std::string> parse_block(const json& value);

}  // namespace barrel::rpc
