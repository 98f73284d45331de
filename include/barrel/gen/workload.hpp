#pragma once
/// @file
/// The sealed workload generator behind `barrel-node gen`: a genesis with funded accounts (and
/// DagTransfer users) and a chain of signed blocks whose headers are filled in by executing them,
/// so every block imports as valid. Everything is a function of the options: the same options give
/// byte-identical output whatever the number of threads.

#include <barrel/chain/genesis.hpp>
#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::gen {

/// What the transactions of a block do.
enum class Mix : uint8_t {
    transfer,  ///< EIP-155 legacy value transfers between funded accounts
    dag,       ///< DagTransfer precompile calls (mostly userTransfer), some failing with a code
    mixed,     ///< every transaction type, transfers, DagTransfer calls, malformed precompile
               ///< calls (status 0) and at most one contract creation (a DAG barrier) per block
};

std::string_view to_string(Mix mix) noexcept;
/// "transfer", "dag" or "mixed"; nullopt for anything else.
std::optional<Mix> parse_mix(std::string_view text) noexcept;

struct Options {
    uint64_t seed{1};
    size_t blocks{1};
    size_t txs{2500};         ///< transactions per block
    size_t accounts{10'000};  ///< funded accounts (and, for dag/mixed, DagTransfer users)
    /// Size of the hot sets: the first hot_accounts accounts (transfers) and users (DagTransfer
    /// calls). Account and user keys never conflict with each other, so with hot_ratio 1 and one
    /// hot account a transfer or dag block is one dependency chain, a mixed block about two.
    size_t hot_accounts{4};
    /// Probability that a transaction's recipient (and, half the time, its sender) or a call's
    /// user is drawn from the hot set instead of from everyone.
    double hot_ratio{0.0};
    Mix mix{Mix::transfer};
    uint64_t chain_id{1};
};

/// Option limits, checked by generate().
inline constexpr size_t kMaxTxsPerBlock = 1'000'000;
inline constexpr size_t kMaxAccounts = 1'000'000;
inline constexpr size_t kMaxTotalTxs = 10'000'000;  ///< blocks × txs (all blocks are in memory)

struct Workload {
    chain::Genesis genesis;
    std::vector<Bytes> blocks;  ///< sealed wire blocks, block 1 first
    /// The senders of each block's transactions, in order (what stage 2 must recover).
    std::vector<std::vector<Address>> senders;
};

/// Checks the options; the error is one line naming the option as `barrel-node gen` spells it,
/// e.g. "--hot-ratio: must be between 0 and 1, got 1.5".
Expected<void, std::string> validate(const Options& options);

/// Generates and seals the workload. Errors: those of validate(), or (never expected) a block the
/// executor rejects, named by number and reason.
Expected<Workload, std::string> generate(const Options& options);

/// The genesis generate() would produce for these options, without the blocks (the load
/// generator sends its own transactions to a node of this genesis). The block count and the mix
/// matter only as they shape the genesis: `txs` sets the block gas limit, a dag or mixed mix adds
/// the users and a base fee.
Expected<chain::Genesis, std::string> generate_genesis(const Options& options);

/// The secp256k1 secret of funded account `index`: keccak256("barrel-gen" ‖ seed ‖ index), both
/// as 8 big-endian bytes, re-hashed until it is a valid secret.
Hash account_key(uint64_t seed, size_t index);

/// The DagTransfer user name of user `index`: "user" and at least six digits ("user000123").
std::string user_name(size_t index);

/// The fee recipient of generated blocks: 0xba77e1…01, not the address of any generated key
/// (address derivation would have to hit it).
Address coinbase_address() noexcept;

}  // namespace barrel::gen
