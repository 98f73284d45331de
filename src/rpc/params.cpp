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

template <class T>
Expected<T, Error> named(Expected<T, std::string> v, size_t i, std::string_view name) {
    if (!v) return unexpected(invalid_argument(i, name, v.error()));
    return std::move(v).value();
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

Expected<Params, Error> Params::positional(const json& params, size_t required, size_t max) {
    if (!params.is_array()) return unexpected(Error{code::invalid_params, "non-array args"});
    if (params.size() > max)
        return unexpected(
            Error{code::invalid_params, "too many arguments, want at most " + std::to_string(max)});
    for (size_t i = params.size(); i < required; ++i)
        return unexpected(Error{code::invalid_params,
                                "missing value for required argument " + std::to_string(i)});
    return Params{params};
}

Expected<Address, Error> Params::address(size_t i, std::string_view name) const {
    return named(parse_fixed<20>(at(i), "an address"), i, name);
}

Expected<Hash, Error> Params::hash(size_t i, std::string_view name) const {
    return named(parse_fixed<32>(at(i), "a hash"), i, name);
}

Expected<Bytes, Error> Params::data(size_t i, std::string_view name) const {
    return named(parse_data(at(i)), i, name);
}

Expected<uint64_t, Error> Params::quantity(size_t i, std::string_view name) const {
    auto v = parse_quantity(at(i), 64);
    if (!v) return unexpected(invalid_argument(i, name, v.error()));
    return static_cast<uint64_t>(*v);
}

Expected<u256, Error> Params::quantity256(size_t i, std::string_view name) const {
    return named(parse_quantity(at(i), 256), i, name);
}

Expected<bool, Error> Params::boolean(size_t i, std::string_view name) const {
    if (!at(i).is_boolean()) return unexpected(invalid_argument(i, name, "want true or false"));
    return at(i).get<bool>();
}

Expected<BlockRef, Error> Params::block(size_t i, std::string_view name) const {
    if (!has(i)) return BlockRef{};
    return named(parse_block(at(i)), i, name);
}

}  // namespace barrel::rpc
