#pragma once
// The parameters of a call, decoded by position into typed arguments, in one place for every
// method (go-ethereum's rpc/service.go and json.go:parsePositionalArguments do the same by
// reflection over a method's argument types; reth by its #[method] macros). Ethereum's
// encodings and go-ethereum's checks: quantities are "0x" hex without leading zeros, data is
// "0x" hex of whole bytes, addresses and hashes have their exact length, blocks are a tag, a
// number or an EIP-1898 object. A bad parameter is invalid_params (-32602) naming its position
// and name: "invalid argument 0 (address): hex string has length 38, want 40 for an address".
//
// A type is a parameter type when Decoder<T> or T::read reads it; std::optional<T> is an optional
// one (absent or null: nullopt). Trailing optional parameters may be left out; more parameters than
// the method takes are refused.

#include <barrel/core/bytes.hpp>
#include <barrel/core/uint256.hpp>

#include "rpc/jsonrpc.hpp"

#include <array>
#include <concepts>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace barrel::rpc {

/// A block as a call names it. On a single-sealer chain `safe` and `finalized` are the head, like
/// `latest`; so is `pending`, except where a method counts the pool (eth_getTransactionCount).
struct BlockRef {
    enum class Kind : uint8_t { latest, pending, earliest, number, hash };
    Kind kind{Kind::latest};
    uint64_t number{0};
    Hash hash;
};

/// How a parameter of type T is read: Decoder<T>::read(value) is the value, or the reason it is
/// not one (what follows "invalid argument I (NAME): "). Defined here for the common types; a
/// method's own parameter type (a call object, a log filter) has instead a static T::read(value)
/// of the same form (ReadsItself).
template <class T>
struct Decoder {
    static Expected<T, std::string> read(const json& value);
};

template <class T>
concept ReadsItself = requires(const json& value) {
    { T::read(value) } -> std::same_as<Expected<T, std::string>>;
};

// The common types (params.cpp): a 20-byte address, a 32-byte hash, data (whole bytes of hex),
// a quantity of at most 64 or 256 bits, a boolean, and a block (a tag, a number or a
// {"blockNumber"}/{"blockHash"} object; null is `latest`).
template <>
Expected<Address, std::string> Decoder<Address>::read(const json& value);
template <>
Expected<Hash, std::string> Decoder<Hash>::read(const json& value);
template <>
Expected<Bytes, std::string> Decoder<Bytes>::read(const json& value);
template <>
Expected<uint64_t, std::string> Decoder<uint64_t>::read(const json& value);
template <>
Expected<u256, std::string> Decoder<u256>::read(const json& value);
template <>
Expected<bool, std::string> Decoder<bool>::read(const json& value);
template <>
Expected<BlockRef, std::string> Decoder<BlockRef>::read(const json& value);

/// invalid_params: "invalid argument I (NAME): REASON".
Error invalid_argument(size_t i, std::string_view name, std::string_view reason);

/// Fails unless `params` is an array (named parameters are not supported, as in go-ethereum)
/// with between `required` and `max` elements.
Expected<void, Error> check_arity(const json& params, size_t required, size_t max);

template <class T>
inline constexpr bool is_optional_v = false;
template <class T>
inline constexpr bool is_optional_v<std::optional<T>> = true;

/// Parameter i of `params` as T, or invalid_argument naming it. A parameter that is not
/// optional must be there (check_arity makes sure).
template <class T>
Expected<T, Error> decode(const json& params, size_t i, std::string_view name) {
    if constexpr (is_optional_v<T>) {
        if (i >= params.size() || params[i].is_null()) return T{};
        auto value = decode<typename T::value_type>(params, i, name);
        if (!value) return unexpected(std::move(value.error()));
        return T{std::move(*value)};
    } else {
        auto value = [&] {
            if constexpr (ReadsItself<T>)
                return T::read(params[i]);
            else
                return Decoder<T>::read(params[i]);
        }();
        if (!value) return unexpected(invalid_argument(i, name, value.error()));
        return std::move(*value);
    }
}

/// How many of the parameters Args must be given: all up to the last one that is not optional.
template <class... Args>
constexpr size_t required_count() {
    constexpr std::array<bool, sizeof...(Args) + 1> optional{is_optional_v<Args>..., false};
    size_t required = 0;
    for (size_t i = 0; i < sizeof...(Args); ++i)
        if (!optional[i]) required = i + 1;
    return required;
}

namespace detail {
template <class... Args, size_t... I>
Expected<std::tuple<Args...>, Error> decode_each(const json& params,
                                                 std::span<const std::string_view> names,
                                                 std::index_sequence<I...>) {
    std::tuple<std::optional<Args>...> slots;
    std::optional<Error> error;
    [[maybe_unused]] auto one = [&]<size_t K>(std::integral_constant<size_t, K>) {
        if (error) return;  // the first bad parameter is the one named
        using T = std::tuple_element_t<K, std::tuple<Args...>>;
        auto value = decode<T>(params, K, names[K]);
        if (value)
            std::get<K>(slots).emplace(std::move(*value));
        else
            error = std::move(value.error());
    };
    (one(std::integral_constant<size_t, I>{}), ...);
    if (error) return unexpected(std::move(*error));
    return std::tuple<Args...>{std::move(*std::get<I>(slots))...};
}
}  // namespace detail

/// A call's positional parameters as typed arguments, `names[i]` naming parameter i in errors.
template <class... Args>
Expected<std::tuple<Args...>, Error> decode_params(const json& params,
                                                   std::span<const std::string_view> names) {
    if (auto arity = check_arity(params, required_count<Args...>(), sizeof...(Args)); !arity)
        return unexpected(std::move(arity.error()));
    return detail::decode_each<Args...>(params, names, std::index_sequence_for<Args...>{});
}

/// The checks of a quantity string, for parameters inside objects too (a call object's fields).
/// The error is the reason alone ("hex number with leading zero digits").
Expected<u256, std::string> parse_quantity(const json& value, size_t max_bits);
Expected<Bytes, std::string> parse_data(const json& value);
Expected<BlockRef, std::string> parse_block(const json& value);
/// A 20-byte address or a 32-byte hash ("hex string has length 38, want 40 for an address").
Expected<Address, std::string> parse_address(const json& value);
Expected<Hash, std::string> parse_hash(const json& value);

}  // namespace barrel::rpc
