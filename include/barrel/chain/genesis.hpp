#pragma once
/// @file
/// The genesis of a chain: chain parameters and the initial state, read from a JSON file
/// (docs/formats.md, "Genesis"), and the block-0 header every chain file builds on.

#include <barrel/block/header.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/state/lattice.hpp>
#include <barrel/state/state.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace barrel::chain {

/// A CometBFT validator address: the first 20 bytes of the SHA-256 of its public key, as
/// CometBFT's genesis and `priv_validator_key.json` print it (40 hex digits).
using ValidatorAddress = FixedBytes<20>;

/// The defaults here are for a Genesis built in code; a genesis file must name `gas_limit` (and
/// `chain_id`, `accounts`) itself.
struct Genesis {
    exec::ChainConfig config;
    uint64_t gas_limit{200'000'000};  ///< block gas limit blocks are sealed with
    uint64_t timestamp{0};
    Address coinbase;  ///< fee recipient of generated blocks
    /// On a CometBFT network, the fee recipient of the blocks each validator proposes (sorted
    /// by validator); a block of a validator not listed pays `coinbase`. Empty on most chains.
    std::vector<std::pair<ValidatorAddress, Address>> validator_coinbases;
    /// The initial state as a write set (sorted by key), which is also what its root commits to.
    state::WriteSet alloc;

    friend bool operator==(const Genesis&, const Genesis&) = default;
};

/// Parses a genesis document (docs/formats.md, "Genesis": every member, which are required, the
/// defaults of the others, the limits, the supply rule of check_supply). A member named twice in
/// one object, at any depth, is an error, as is a required member missing. Errors are one line
/// naming the offending member, e.g. "accounts.0x12…: balance: not an unsigned 256-bit integer",
/// "gas_limit: missing", "duplicate member \"chain_id\"".
Expected<Genesis, std::string> parse_genesis(std::string_view json_text);

/// The chain's supply rule (DESIGN, "Execution semantics"): the genesis account balances must
/// sum to less than 2^256. Transfers and fees only move value, so then no account balance, no
/// block's fees and no coinbase credit can ever overflow. The error names the sum:
/// "accounts: the balances sum to N, not below 2^256 (no balance could overflow then)".
/// parse_genesis and store::Store::init apply it.
Expected<void, std::string> check_supply(const Genesis& genesis);

/// The fee recipient the genesis names for blocks `proposer` proposes (CometBFT's
/// proposer_address: 20 bytes), or nullopt when it names none (then the chain's coinbase).
std::optional<Address> validator_coinbase(const Genesis& genesis, BytesView proposer);

/// Serialises a genesis document (integers as 0x quantities, keys sorted): parse_genesis of the
/// result gives back an equal Genesis.
std::string to_json_text(const Genesis& genesis);

/// The lattice of the genesis allocation (every account and user added to the empty state's).
state::Lattice genesis_lattice(const Genesis& genesis, bool parallel = false);

/// The genesis state root: genesis_lattice(genesis).root().
Hash state_root(const Genesis& genesis);

/// Block 0: number 0, parent_hash = keccak256(RLP([chain_id, base_fee])) (the chain parameters the
/// header lacks; with validator_coinbases, RLP([chain_id, base_fee, [[validator, coinbase], …]])
/// in the validators' order, so a genesis without them keeps its hash), empty roots for
/// transactions and receipts, the genesis state root. Block 1's parent_hash is its hash.
block::Header genesis_header(const Genesis& genesis);

/// A memory state holding the genesis allocation.
state::MemoryState genesis_state(const Genesis& genesis);

}  // namespace barrel::chain
