#pragma once
/// @file
/// The 256-bit unsigned integer of balances, values and prices: Boost.Multiprecision's fixed
/// 256-bit cpp_int (unchecked: wraps like the EVM; overflow is checked explicitly where the
/// protocol requires it), with fast big-endian loads and stores that fill its limbs directly.

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>

#include <boost/multiprecision/cpp_int.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace barrel {

using u256 = boost::multiprecision::uint256_t;
using u512 = boost::multiprecision::uint512_t;

/// Big-endian bytes (at most 32) to u256. Leading zeros are allowed here; RLP decides canonicity.
u256 load_be(BytesView be) noexcept;

/// Number of significant bytes (0 for zero).
size_t byte_length(const u256& v) noexcept;

/// Writes the minimal big-endian form (no leading zeros; empty for zero) into out[0..n) and
/// returns n. out must hold 32 bytes.
size_t store_be_minimal(const u256& v, uint8_t* out) noexcept;

/// Writes exactly 32 big-endian bytes.
void store_be32(const u256& v, uint8_t* out) noexcept;

/// The four 64-bit limbs, least significant first (a fixed-size copy for packed storage).
std::array<uint64_t, 4> to_limbs(const u256& v) noexcept;
u256 from_limbs(const std::array<uint64_t, 4>& limbs) noexcept;

/// "0x"-prefixed minimal hex quantity ("0x0" for zero), as Ethereum JSON-RPC writes numbers.
std::string to_hex_quantity(const u256& v);
std::string to_hex_quantity(uint64_t v);

/// Decimal string.
std::string to_decimal(const u256& v);

/// Parses a decimal or "0x" hex unsigned integer that fits 256 bits; nullopt otherwise.
std::optional<u256> parse_u256(std::string_view s) noexcept;
/// Parses a decimal or "0x" hex unsigned integer that fits 64 bits; nullopt otherwise.
std::optional<uint64_t> parse_u64(std::string_view s) noexcept;

/// a + b, or nullopt if it overflows 256 bits.
std::optional<u256> checked_add(const u256& a, const u256& b) noexcept;
/// a * b, or nullopt if it overflows 256 bits.
std::optional<u256> checked_mul(const u256& a, const u256& b) noexcept;

}  // namespace barrel
