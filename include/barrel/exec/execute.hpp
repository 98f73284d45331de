#pragma once
/// @file
/// Stage 3: PTE, the parallel transaction executor. Conflict keys per transaction → a DAG
/// → transactions run in parallel in dependency order, with receipts, write set and roots
/// identical to executing them one by one in block order (docs/architecture.md).

#include <barrel/block/block.hpp>
#include <barrel/exec/dag_transfer.hpp>
#include <barrel/state/lattice.hpp>
#include <barrel/state/state.hpp>

#include <string>
#include <vector>

namespace barrel::exec {

struct ChainConfig {
    uint64_t chain_id{1};
    /// EIP-1559 base fee of the chain (constant; 0 by default).
    u256 base_fee{0};
    friend bool operator==(const ChainConfig&, const ChainConfig&) = default;
};

struct Receipt {
    bool status{false};  ///< true: success; false: failed (creation, malformed or payable call)
    uint64_t gas_used{0};
    uint64_t cumulative_gas_used{0};
    Bytes output;  ///< return data (DagTransfer ret words), empty for transfers

    friend bool operator==(const Receipt&, const Receipt&) = default;
};

/// The gas `tx` uses when a block executes it, which in barrel depends on the transaction alone:
/// its intrinsic gas, or its whole gas limit for a contract creation and for a DagTransfer call
/// that is malformed or carries value. Its receipt's gas_used (eth_feeHistory weighs by it).
uint64_t gas_used(const tx::Transaction& tx) noexcept;

/// keccak256(RLP([tx_hash, status, gas_used, cumulative_gas_used, output])) (docs/formats.md).
Hash receipt_hash(const Hash& tx_hash, const Receipt& receipt);

/// How transactions are scheduled. All modes give identical results.
enum class Schedule : uint8_t {
    automatic,  ///< dynamic ready queue, or serial when the DAG has no width
    serial,     ///< block order on the calling thread (the baseline)
    levels,     ///< level by level: tbb::parallel_for over each level's blocked range
    dynamic,  ///< ready queue: tbb::parallel_for_each with a feeder, successors fed as they unblock
};

std::string_view to_string(Schedule s) noexcept;

struct DagStats {
    size_t transactions{0};
    size_t edges{0};
    size_t levels{0};     ///< length of the longest dependency chain
    size_t max_width{0};  ///< most transactions on one level
    size_t barriers{0};   ///< conflicts-with-everything transactions (contract creations)
    Schedule used{Schedule::serial};
};

struct Outcome {
    std::vector<Receipt> receipts;
    std::vector<Hash> receipt_hashes;
    state::WriteSet writes;
    state::Lattice lattice;  ///< the state's lattice after the block; state_root is its root()
    uint64_t gas_used{0};
    u256 fees;  ///< credited to the coinbase after the block
    Hash txs_root;
    Hash receipts_root;
    Hash state_root;
    DagStats dag;
};

enum class [[nodiscard]] ExecErrorCode : uint8_t{
    missing_header,            ///< a bare transaction list cannot be executed
    missing_senders,           ///< stages 1 and 2 have not run: senders or transaction hashes
                               ///< do not match the transactions one for one
    nonce_mismatch,            ///< tx nonce != account nonce
    insufficient_balance,      ///< balance < gas_limit × max fee + value
    fee_cap_below_base_fee,    ///< EIP-1559 max fee below the chain's base fee
    gas_price_below_base_fee,  ///< legacy or EIP-2930 gas price below the chain's base fee (as
                               ///< in Ethereum since London: such a block is invalid)
    block_gas_exceeded,  ///< cumulative gas + this tx's gas limit above the header's gas limit
    balance_overflow,    ///< a credit would exceed 2^256 − 1
    state_unreadable,    ///< the parent state could not be read (state::ReadErrorCode::io);
                         ///< not the block's fault, and tx_index is 0
    state_corrupt,       ///< a parent state value does not decode (ReadErrorCode::corruption);
                         ///< not the block's fault, and tx_index is 0
};

struct ExecError {
    ExecErrorCode code{ExecErrorCode::nonce_mismatch};
    size_t tx_index{0};
    friend bool operator==(const ExecError&, const ExecError&) = default;
};

std::string_view to_string(ExecErrorCode code) noexcept;
std::string describe(const ExecError& e);

struct ExecOptions {
    Schedule schedule{Schedule::automatic};
    /// Compute the state commitment (Outcome::lattice, state_root). Off for what never reads
    /// it (eth_call, eth_estimateGas): the outcome's lattice is then the parent's, and its
    /// state_root that lattice's root, whatever the block wrote.
    bool commitment{true};
};

/// Executes a decoded and verified block (senders filled) against `parent`, whose lattice is
/// `parent_lattice`. Never writes to `parent`: the outcome carries the write set and the new
/// lattice. The block is rejected whole at the lowest-index invalid transaction.
Expected<Outcome, ExecError> execute(const block::Block& block, const state::StateReader& parent,
                                     const state::Lattice& parent_lattice,
                                     const ChainConfig& config, const ExecOptions& options = {});

/// How a header disagrees with the outcome of executing its block.
enum class [[nodiscard]] SealErrorCode : uint8_t{
    gas_used_mismatch,
    txs_root_mismatch,
    receipts_root_mismatch,
    state_root_mismatch,
};
std::string_view to_string(SealErrorCode code) noexcept;

/// Checks the header's gas used and roots against the outcome.
Expected<void, SealErrorCode> check_seal(const block::Header& header,
                                         const Outcome& outcome) noexcept;

}  // namespace barrel::exec
