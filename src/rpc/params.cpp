#include "rpc/params.hpp"

#include <barrel/core/hex.hpp>

#include <string>

namespace barrel::rpc {

namespace {

/// The digits after "0x", or why there are none (go-ethereum's hexutil words).
Expected<std::string_view, std::string> hex_digits(const json& value) {
    if (!value.is_string()) return unexpected(std::string{"want a 0x-prefixed hex string"});
    const auto& text = value.get_ref<const std::string&>();
    if (text.empty()) return unexpected(std::string{"empty hex string"});
    if (text.size() < 2 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X'))
        return unexpected(std::string{"hex string without 0x prefix"});
    return std::string_view{text}.substr(2);
}

template <size_t N>
Expected<FixedBytes<N>, std::string> parse_fixed(const json& value, std::string_view what) {
    auto bytes = parse_data(value);
    if (!bytes) return unexpected(bytes.error());
    if (bytes->size() != N)
        return unexpected("hex string has length " + std::to_string(bytes->size() * 2) + ", want " +
                          std::to_string(N * 2) + " for " + std::string{what});
    return FixedBytes<N>::from_view(*bytes);
}

}  // namespace

Expected<BlockRef, std::string> parse_block(const json& v) {
    if (v.is_object()) {
        const auto number = v.find("blockNumber");
        const auto hash = v.find("blockHash");
        if ((number == v.end()) == (hash == v.end()))
            return unexpected(std::string{"want exactly one of blockNumber and blockHash"});
        if (hash != v.end()) {
            auto h = parse_fixed<32>(*hash, "a hash");
            if (!h) return unexpected("blockHash: " + h.error());
            return BlockRef{BlockRef::Kind::hash, 0, *h};
        }
        if (number->is_object())
            return unexpected(std::string{"blockNumber: want a tag or number"});
        auto ref = parse_block(*number);
        if (!ref) return unexpected("blockNumber: " + ref.error());
        return ref;
    }
    if (!v.is_string()) return unexpected(std::string{"want a block tag or number"});
    const auto& tag = v.get_ref<const std::string&>();
    if (tag == "latest" || tag == "safe" || tag == "finalized") return BlockRef{};
    if (tag == "pending") return BlockRef{BlockRef::Kind::pending, 0, {}};
    if (tag == "earliest") return BlockRef{BlockRef::Kind::earliest, 0, {}};
    if (!tag.starts_with("0x") && !tag.starts_with("0X"))
        return unexpected("unknown block tag \"" + tag +
                          "\" (want latest, earliest, pending, safe, finalized or a 0x number)");
    auto n = parse_quantity(v, 64);
    if (!n) return unexpected(n.error());
    return BlockRef{BlockRef::Kind::number, static_cast<uint64_t>(*n), {}};
}

Error invalid_argument(size_t i, std::string_view name, std::string_view reason) {
    return Error{code::invalid_params, "invalid argument " + std::to_string(i) + " (" +
                                           std::string{name} + "): " + std::string{reason}};
}

Expected<u256, std::string> parse_quantity(const json& value, size_t max_bits) {
    auto digits = hex_digits(value);
    if (!digits) return unexpected(digits.error());
    if (digits->empty()) return unexpected(std::string{"hex string \"0x\""});
    if (digits->size() > 1 && (*digits)[0] == '0')
        return unexpected(std::string{"hex number with leading zero digits"});
    if (digits->size() * 4 > max_bits)
        return unexpected("hex number > " + std::to_string(max_bits) + " bits");
    u256 v = 0;
    for (const char c : *digits) {
        const int d = hex_digit_value(c);
        if (d < 0) return unexpected(std::string{"invalid hex string"});
        v = (v << 4) | d;
    }
    return v;
}

Expected<Bytes, std::string> parse_data(const json& value) {
    auto digits = hex_digits(value);
    if (!digits) return unexpected(digits.error());
    if (digits->size() % 2 != 0) return unexpected(std::string{"hex string of odd length"});
    Bytes out(digits->size() / 2);
    if (!decode_hex_digits(*digits, out)) return unexpected(std::string{"invalid hex string"});
    return out;
}

Expected<void, Error> check_arity(const json& params, size_t required, size_t max) {
    if (!params.is_array()) return unexpected(Error{code::invalid_params, "non-array args"});
    if (params.size() > max)
        return unexpected(
            Error{code::invalid_params, "too many arguments, want at most " + std::to_string(max)});
    if (params.size() < required)
        return unexpected(Error{code::invalid_params, "missing value for required argument " +
                                                          std::to_string(params.size())});
    return {};
}

Expected<Address, std::string> parse_address(const json& value) {
    return parse_fixed<20>(value, "an address");
}

Expected<Hash, std::string> parse_hash(const json& value) {
    return parse_fixed<32>(value, "a hash");
}

template <>
Expected<Address, std::string> Decoder<Address>::read(const json& value) {
    return parse_address(value);
}

template <>
Expected<Hash, std::string> Decoder<Hash>::read(const json& value) {
    return parse_hash(value);
}

template <>
Expected<Bytes, std::string> Decoder<Bytes>::read(const json& value) {
    return parse_data(value);
}

template <>
Expected<uint64_t, std::string> Decoder<uint64_t>::read(const json& value) {
    auto v = parse_quantity(value, 64);
    if (!v) return unexpected(std::move(v.error()));
    return static_cast<uint64_t>(*v);
}

template <>
Expected<u256, std::string> Decoder<u256>::read(const json& value) {
    return parse_quantity(value, 256);
}

template <>
Expected<bool, std::string> Decoder<bool>::read(const json& value) {
    if (!value.is_boolean()) return unexpected(std::string{"want true or false"});
    return value.get<bool>();
}

template <>
Expected<BlockRef, std::string> Decoder<BlockRef>::read(const json& value) {
    if (value.is_null()) return BlockRef{};
    return parse_block(value);
}

}  // namespace barrel::rpc
