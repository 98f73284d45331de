#pragma once
/// @file
/// The DagTransfer precompile (FISCO BCOS 2.x) at 0x…5002: Solidity ABI calls on a table of
/// user balances. Each call returns a uint256 `ret`: 0 on success, else FISCO's (negative) codes
/// as two's-complement u256.

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>
#include <barrel/core/uint256.hpp>

#include <optional>
#include <string_view>

namespace barrel::exec {

/// 0x0000000000000000000000000000000000005002
inline constexpr Address kDagTransferAddress = [] {
    Address a;
    a.bytes[18] = 0x50;
    a.bytes[19] = 0x02;
    return a;
}();

enum class DagFunction : uint8_t {
    user_add,       ///< userAdd(string,uint256)
    user_save,      ///< userSave(string,uint256)
    user_draw,      ///< userDraw(string,uint256)
    user_balance,   ///< userBalance(string) returns (uint256 ret, uint256 balance)
    user_transfer,  ///< userTransfer(string,string,uint256)
};

/// FISCO BCOS DagTransfer return codes (docs/formats.md says which function returns which when).
enum class DagCode : int32_t {
    ok = 0,
    invalid_user_name = -51400,  ///< an empty user name (either name of userTransfer)
    invalid_amount = -51401,     ///< amount 0 where a positive amount is required
    user_not_found = -51402,
    user_exists = -51403,
    insufficient_balance = -51404,
    overflow = -51405,
};

/// A decoded call. Names are views into the calldata.
struct DagCall {
    DagFunction function{DagFunction::user_add};
    std::string_view user;  ///< the user (the sender side for userTransfer)
    std::string_view to;    ///< receiver, userTransfer only
    u256 amount;            ///< zero for userBalance
};

/// The 4-byte selector of a function (keccak256 of its signature).
uint32_t selector_of(DagFunction f) noexcept;

/// Decodes calldata strictly: known selector, well-formed ABI head and tails, offsets in range,
/// zero padding, nothing trailing. nullopt for anything else (the call then fails, status 0).
std::optional<DagCall> decode_call(BytesView calldata) noexcept;

/// ABI-encodes a call (for the workload generator and tests).
Bytes encode_call(const DagCall& call);

/// ABI return data: ret (and balance for userBalance).
Bytes encode_return(DagCode code);
Bytes encode_return(DagCode code, const u256& balance);

/// u256 two's complement of a code, as it appears in the return data.
u256 code_word(DagCode code) noexcept;

}  // namespace barrel::exec
