#pragma once
/// @file
/// The four stages as one pipeline: decode → verify → execute → commit, with per-stage timings.
/// `import_block` runs one block at a time; `import_stream` overlaps blocks with oneTBB's
/// parallel_pipeline (decode and verify of later blocks while earlier ones execute and commit, and
/// execution of block N+1 while block N commits), keeping blocks in order, each commit atomic and
/// at most `max_in_flight` blocks in memory.
/// `check_proposal` is the consensus entry point: execute a proposed block without committing.
/// `check_template` and `commit_checked` split seal_stream for a consensus node that builds the
/// block from its proposal's transactions: seal it without committing (vote), then commit exactly
/// what was checked once it is decided.

#include <barrel/block/block.hpp>
#include <barrel/block/sender_cache.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/store/store.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>

namespace barrel::pipeline {

namespace testing {
struct StreamHooks;  // src/pipeline/testing.hpp: seams for tests, not installed
struct Access;
}  // namespace testing

struct StageTimes {
    double decode_ms{0};
    double verify_ms{0};
    double execute_ms{0};
    double commit_ms{0};
    double total_ms() const noexcept { return decode_ms + verify_ms + execute_ms + commit_ms; }
};

struct BlockResult {
    uint64_t number{0};
    Hash hash;
    size_t transactions{0};
    /// Already in the chain (stored, or earlier in the same stream): nothing was done.
    bool skipped{false};
    /// Streamed import: how many earlier blocks were executed but not yet committed when this one
    /// executed (it read the state through their write sets). 0 one block at a time.
    size_t executed_over{0};
    StageTimes times;
    exec::DagStats dag;
    /// Bytes (keys and values) of the RocksDB write batch that committed the block
    /// (store::CommitStats::bytes); 0 for a skipped block.
    size_t commit_bytes{0};
};

enum class Stage : uint8_t { decode, link, verify, execute, seal, commit };
std::string_view to_string(Stage s) noexcept;

/// How a block fails to follow the block before it: the store's head, or in a stream the last
/// block executed.
enum class [[nodiscard]] LinkErrorCode : uint8_t{
    conflicts_with_stored,  ///< at or below the head, and not the block stored at its height
    blocks_missing,         ///< past the head's child: the blocks between are missing
    parent_mismatch,        ///< the head's child by number, but its parent hash is another block's
    not_child_of_head,      ///< a proposal that is not the head's child (check_proposal)
};
std::string_view to_string(LinkErrorCode code) noexcept;

struct LinkError {
    LinkErrorCode code{LinkErrorCode::parent_mismatch};
    uint64_t number{0};       ///< the block's number
    Hash parent_hash;         ///< the block's parent hash
    uint64_t head_number{0};  ///< the block it had to follow
    Hash head_hash;
    friend bool operator==(const LinkError&, const LinkError&) = default;
};
/// "parent hash 0x… is not the head 0x…"
std::string describe(const LinkError& e);

/// The failing stage's own error, to branch on (`std::get_if`) instead of parsing text:
/// decode and verify give a `block::BlockError`, link a `LinkError`, execute an `exec::ExecError`,
/// seal an `exec::SealErrorCode` and commit a `store::StoreError`. A store read that fails while
/// a stage asks the store (is this block already stored?) gives the `store::StoreError`, at that
/// stage.
using StageError = std::variant<block::BlockError, LinkError, exec::ExecError, exec::SealErrorCode,
                                store::StoreError>;
/// The stage error's own line: `block::describe`, `exec::describe`, the seal code's name, the
/// store's message.
std::string describe(const StageError& e);

struct PipelineError {
    Stage stage{Stage::decode};
    std::optional<uint64_t> block_number;  ///< when the header could be read
    size_t block_index{0};                 ///< position in the input (0-based)
    StageError error;                      ///< why, as the stage reported it
};
/// "block 7: verify: transaction 12: invalid_tx: high_s"
std::string describe(const PipelineError& e);

/// The transaction a failed block names as the cause, and the reason's name.
struct Blame {
    size_t tx_index{0};
    /// An exec::ExecErrorCode's name ("nonce_mismatch", …) or, from decode or verify, a
    /// block::BlockErrorCode's ("invalid_tx", …). A metric label.
    std::string reason;
};
/// Whom a failed block blames: an execution error of a transaction's own (a nonce, a balance, a
/// fee below the base fee, the block's gas), or one its decode or verify stage found in it.
/// Nothing for a failure of the block as a whole or of the store. A block producer drops the
/// blamed transaction and builds the block again without it (the sealer, a consensus proposer).
std::optional<Blame> blamed_transaction(const PipelineError& e);

struct Config {
    bool parallel{true};  ///< false: every stage on the calling thread
    block::SenderCache* sender_cache{nullptr};
    exec::Schedule schedule{exec::Schedule::automatic};
    size_t max_in_flight{4};  ///< blocks held at once by import_stream
};

/// Yields the next block's wire bytes, or nullopt at the end.
using BlockSource = std::function<std::optional<Bytes>()>;
/// Called after each block is committed or skipped, in order.
using Progress = std::function<void(const BlockResult&)>;

/// What a consensus node needs to vote on a proposal.
struct ProposalCheck {
    Hash block_hash;
    exec::Outcome outcome;  ///< roots, receipts and write set; nothing was written
    StageTimes times;
};

class CheckedBlock;

class Pipeline {
public:
    Pipeline(store::Store& store, const Config& config);

    /// Imports one wire block: skipped if already stored, else it must be the head's child.
    Expected<BlockResult, PipelineError> import_block(Bytes wire);

    /// Imports blocks from `next` until it is exhausted or a block fails; blocks before a failing
    /// one are committed, nothing of the failing one or later ones is.
    Expected<void, PipelineError> import_stream(const BlockSource& next,
                                                const Progress& progress = {});

    /// Seals blocks from `templates` and commits them, streamed like import_stream: a template is
    /// a wire block whose header carries the transactions' context (timestamp, coinbase, gas
    /// limit, chain id) but not its place or results. Each goes through the same four stages as
    /// an imported block; the execute stage makes it the child of the last block (parent hash
    /// and number) and fills in what execution computed (gas used and the three roots) instead
    /// of checking it, and the block committed is that final one. A block producer's entry
    /// point: the transactions must be valid in order (a pool's pending ones are).
    Expected<void, PipelineError> seal_stream(const BlockSource& templates,
                                              const Progress& progress = {});

    /// Decodes, verifies and executes a proposed child of the head without committing anything.
    /// The proposal's header roots are not required (they are what the check computes). A
    /// failure's `error` says why: a LinkError (`not_child_of_head`), a block::BlockError (decode,
    /// verify), an exec::ExecError, or a store::StoreError if the store could not be read.
    Expected<ProposalCheck, PipelineError> check_proposal(Bytes wire);

    /// "Seal without committing": a template (as seal_stream takes them) goes through decode,
    /// verify and execute against the head, the execute stage making it the head's child and
    /// filling in gas used and roots; nothing is written. A template that names its place (a
    /// consensus height: its number, or its parent hash, non-zero) must be the head's child, else
    /// a LinkError (`not_child_of_head`). A failure's error is the stage's, as for seal_stream.
    Expected<CheckedBlock, PipelineError> check_template(Bytes template_wire);
    /// check_template of a template decoded already, with its senders: a block producer's own
    /// selection from its pool, whose admission decoded, hashed and recovered every transaction
    /// (block::with_header builds it around their bytes). Linked, executed and sealed as the
    /// wire template is; nothing is decoded or recovered again.
    Expected<CheckedBlock, PipelineError> check_template(block::Block decoded_template);

    /// "Commit a checked outcome": commits the block check_template sealed, with the outcome it
    /// computed (no second execution), in the one atomic store commit. Refused at the link stage
    /// if the block no longer follows the head (the head moved since the check: the outcome is
    /// that of another state), else the commit stage's store error. `consensus_hash`: the
    /// consensus engine's hash of the block, stored with it in the same commit
    /// (store::Store::commit); none when empty.
    Expected<BlockResult, PipelineError> commit_checked(const CheckedBlock& checked,
                                                        BytesView consensus_hash = {});

    /// The sender cache the verify stage consults (Config::sender_cache), for a caller that
    /// counts its hits around a check.
    block::SenderCache* sender_cache() const noexcept { return m_config.sender_cache; }

private:
    struct Decoded;
    class Stream;  // import_stream's filters and the state they share
    friend struct testing::Access;
    friend class CheckedBlock;

    /// Decodes a block and looks up whether the store has it already; a template (is_template)
    /// is not looked up: it is no block yet.
    Expected<Decoded, PipelineError> decode(Bytes wire, size_t index, bool is_template);
    Expected<bool, PipelineError> is_stored(const Decoded& d) const;
    /// Recovers the senders of a decoded block (stage 2).
    Expected<void, PipelineError> verify(Decoded& d);
    /// A template's header filled in from its outcome, and the block re-encoded around it
    /// (block::with_header: nothing decoded again).
    void seal(Decoded& d, const exec::Outcome& outcome) const;
    /// decode, then verify unless the block is stored already.
    Expected<Decoded, PipelineError> decode_and_verify(Bytes wire, size_t index, bool is_template);
    /// The rest of check_template, once the template is decoded and its senders known.
    Expected<CheckedBlock, PipelineError> check_decoded_template(Decoded d);
    /// Links `d` to `parent`, executes it against `state` (whose lattice is `parent_lattice`) and
    /// checks its seal; fills d.outcome.
    Expected<void, PipelineError> execute(Decoded& d, const store::Head& parent,
                                          const state::Lattice& parent_lattice,
                                          const state::StateReader& state);
    /// Commits an executed block (or reports a skipped one), with the consensus engine's hash of
    /// it when there is one.
    Expected<BlockResult, PipelineError> commit(const Decoded& d, BytesView consensus_hash = {});
    Expected<BlockResult, PipelineError> execute_and_commit(Decoded& d);

    store::Store& m_store;
    Config m_config;
    bool m_sealing{false};  ///< seal_stream is running: blocks are templates
    const testing::StreamHooks* m_stream_hooks{nullptr};
};

/// A block Pipeline::check_template sealed and executed, not committed: what a consensus node
/// keeps between its vote and the decision, and hands to Pipeline::commit_checked. Move-only.
class CheckedBlock {
public:
    CheckedBlock(CheckedBlock&&) noexcept;
    CheckedBlock& operator=(CheckedBlock&&) noexcept;
    ~CheckedBlock();

    /// The sealed block: its header carries its place, gas used and the outcome's roots; its
    /// senders are filled in.
    const block::Block& block() const noexcept;
    const exec::Outcome& outcome() const noexcept;
    /// Decode, verify and execute (commit is commit_checked's).
    const StageTimes& times() const noexcept;

private:
    friend class Pipeline;
    explicit CheckedBlock(std::unique_ptr<Pipeline::Decoded> decoded) noexcept;
    std::unique_ptr<Pipeline::Decoded> m_decoded;
};

}  // namespace barrel::pipeline
