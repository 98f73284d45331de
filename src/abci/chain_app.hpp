#pragma once
// barrel as CometBFT's application (DESIGN.md, "Network", which fixes the mapping): the pool,
// the pipeline and the store behind the ABCI calls. Consensus decides the pace; no sealer runs.
//
// - Info: the head's number and state root. InitChain: the genesis in `app_state` must be the
//   datadir's (`barrel-node init` from the same file); its state root is the initial app hash.
// - CheckTx: pool admission (`already known` is OK: a transaction this node admitted over
//   JSON-RPC comes back from CometBFT's mempool); a recheck asks the pool whether the
//   transaction is still there, recovering nothing.
// - PrepareProposal: the pool's selection, as the sealer takes it, within max_tx_bytes and the
//   block gas limit; CometBFT's own list is ignored.
// - ProcessProposal: the block the proposal's transactions make at this height (header from the
//   request: number = height, timestamp = its time in seconds, parent = the head, coinbase =
//   the genesis' fee address of the request's proposer_address (validator_coinbases), else
//   ChainConfig::coinbase) checked by the pipeline without committing (check_template); REJECT
//   for anything barrel would refuse; the outcome kept by the proposal's hash for FinalizeBlock.
// - FinalizeBlock: that outcome (or the same check, during replay and block sync); app_hash =
//   the state root; nothing persisted. Commit: the one atomic store commit of exactly that
//   outcome (commit_checked), then the pool.
// Crash rules: barrel may be behind CometBFT after a crash, never ahead; the handshake replays.
//
// Determinism: every validator must run with the same coinbase (it is in every header's hash), as
// they share the genesis (whose validator_coinbases the store holds). What a block may hold is
// the chain's rule alone (the genesis gas limit, CometBFT's block max_bytes): max_proposal_txs
// bounds only what this node proposes, never what it accepts from another proposer.
// Threads: the consensus calls run one at a time under a lock of their own; Info reads a copy of
// the head under another, so it never waits for a block; CheckTx needs only the pool, which is
// thread-safe.

#include <barrel/core/bytes.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/seal/sealer.hpp>
#include <barrel/store/store.hpp>
#include <barrel/sync/snapshot.hpp>

#include "abci/application.hpp"

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::abci {

struct ChainConfig {
    /// Transactions this node puts in a proposal at most (`run --max-block-txs` with --abci).
    /// No bound of its own by default: the gas limit and max_tx_bytes bound a proposal. A
    /// proposal of another validator is never refused for its count: a bound of one node's
    /// would make it refuse what the others accept.
    size_t max_proposal_txs{SIZE_MAX};
    /// The fee recipient of a block whose proposer the genesis maps to no fee address
    /// (validator_coinbases; DESIGN.md: the genesis coinbase).
    Address coinbase{};
    /// Info's `version`: the software's ("barrel/v0.1.0"), which CometBFT logs at the handshake.
    std::string version{};
    /// Blocks kept (`run --retain-blocks`; the store prunes its own): Commit's retain_height is
    /// head - retain_blocks + 1, so that CometBFT prunes its block store to the same height.
    /// 0 keeps every block (retain_height 0).
    uint64_t retain_blocks{0};
    /// The lowest height that must stay in CometBFT's block store whatever retain_blocks says
    /// (the oldest state-sync snapshot kept: a node restoring it needs the blocks after it);
    /// none by default, and the oldest snapshot kept when `snapshots` is given. Called at every
    /// Commit, on the consensus connection's thread.
    std::function<std::optional<uint64_t>()> lowest_retained_height{};
    /// State-sync snapshots (docs/formats.md, "State sync snapshots"): ListSnapshots lists and
    /// LoadSnapshotChunk serves these; none served without.
    sync::Snapshots* snapshots{nullptr};
    /// After Commit of a height that is a multiple of it, a snapshot of that height is taken in
    /// the background (`run --snapshot-interval`); 0 takes none.
    uint64_t snapshot_interval{0};
    /// The background writer's hooks (the node's log; a test's hold).
    sync::WriterHooks snapshot_hooks{};
};

/// Commit's retain_height for a head of `head` (CometBFT: 0 keeps every block; otherwise the
/// blocks below it may be deleted): head - retain_blocks + 1 when more blocks than that are
/// committed, never above `lowest_retained` (when given), 0 when nothing is to be pruned.
int64_t retain_height(uint64_t head, uint64_t retain_blocks,
                      std::optional<uint64_t> lowest_retained) noexcept;

/// Info's app_version: the version of barrel's state machine, which CometBFT writes into every
/// block header, so every node must report the same.
inline constexpr uint64_t kAppVersion = 1;

/// CheckTx's code for a transaction the pool refused: 1 + the pool::RejectCode, in the enum's
/// order (malformed 1, oversized 2, invalid 3, invalid_sender 4, exceeds_block_gas_limit 5,
/// fee_cap_below_base_fee 6, already_known 7 (never sent: already known is 0), nonce_too_low 8,
/// nonce_too_high 9, insufficient_funds 10, replacement_underpriced 11, account_limit 12,
/// pool_full 13, state_unreadable 14; unprotected 15 is never sent: CheckTx takes what peers
/// gossip, as go-ethereum takes them). The log is the pool's go-ethereum message. A store that
/// cannot be read during CheckTx is code 14, not an error: the mempool loses one transaction
/// and the node goes on, where an error would stop CometBFT.
uint32_t check_tx_code(pool::RejectCode code) noexcept;
/// CheckTx's code for a recheck of a transaction the pool no longer holds (a block included it,
/// replaced it or made it invalid): CometBFT's mempool drops it.
inline constexpr uint32_t kNoLongerPooled = 100;

/// What the node hears from the application (metrics, subscriptions, the log line).
struct Observer {
    /// A block was committed (after Commit, with the pool updated).
    std::function<void(const seal::Sealed&)> on_committed{};
    /// A proposal was rejected at `height`, and why: a PipelineError's description ("block 3:
    /// execute: transaction 1: nonce_mismatch"), or one of the app's own rules ("block 3: 2501
    /// transactions, more than max_block_txs (2500)", "block 3: transaction 0: empty").
    std::function<void(uint64_t height, std::string_view reason)> on_rejected{};
    /// Height `height` was decided in `round`. CometBFT tells the round of a height only with
    /// the next one (FinalizeBlock's decided_last_commit), so this comes at FinalizeBlock of
    /// height + 1, for every height from 1 on.
    std::function<void(uint64_t height, int32_t round)> on_finalized{};
    /// A block was checked (`call`: "prepare_proposal", "process_proposal" or "finalize_block"
    /// when FinalizeBlock had no kept outcome): of its `transactions`, how many senders the
    /// verify stage found in the sender cache (the rest it recovered). On a validator that
    /// received the transactions by gossip, CheckTx recovered each sender once: every one hits.
    /// A block that failed before verify (malformed) counts none. The node's own proposal is
    /// not checked again at ProcessProposal (PrepareProposal did), so it is not reported twice.
    std::function<void(std::string_view call, uint64_t height, size_t transactions,
                       size_t senders_cached)>
        on_checked{};
    /// PrepareProposal dropped a pooled transaction its block failed on (as the sealer does) and
    /// built the block again without it.
    std::function<void(const seal::Dropped&)> on_dropped{};
    /// State sync: a snapshot offered and accepted or refused, a chunk refused (and its peer),
    /// the restore done; one line each ("snapshot of height 50 accepted: 3 chunks").
    std::function<void(std::string_view line)> on_state_sync{};
};

/// ExtendVote is BaseApplication's: barrel extends no vote.
class ChainApp final : public BaseApplication {
public:
    ChainApp(store::Store& store, pipeline::Pipeline& pipeline, pool::Pool& pool,
             ChainConfig config, Observer observer = {});

    Answer<pb::ResponseInfo> info(const pb::RequestInfo& request) override;
    Answer<pb::ResponseQuery> query(const pb::RequestQuery& request) override;
    Answer<pb::ResponseCheckTx> check_tx(const pb::RequestCheckTx& request) override;
    /// The run's transactions are admitted as one batch, from the first one the pool does not
    /// hold on; a recheck is answered from the pool after the requests before it.
    std::vector<Answer<pb::ResponseCheckTx>> check_txs(
        std::span<const pb::RequestCheckTx* const> requests) override;
    Answer<pb::ResponseInitChain> init_chain(const pb::RequestInitChain& request) override;
    Answer<pb::ResponsePrepareProposal> prepare_proposal(
        const pb::RequestPrepareProposal& request) override;
    Answer<pb::ResponseProcessProposal> process_proposal(
        const pb::RequestProcessProposal& request) override;
    Answer<pb::ResponseVerifyVoteExtension> verify_vote_extension(
        const pb::RequestVerifyVoteExtension& request) override;
    Answer<pb::ResponseFinalizeBlock> finalize_block(
        const pb::RequestFinalizeBlock& request) override;
    Answer<pb::ResponseCommit> commit(const pb::RequestCommit& request) override;
    Answer<pb::ResponseListSnapshots> list_snapshots(
        const pb::RequestListSnapshots& request) override;
    Answer<pb::ResponseOfferSnapshot> offer_snapshot(
        const pb::RequestOfferSnapshot& request) override;
    Answer<pb::ResponseLoadSnapshotChunk> load_snapshot_chunk(
        const pb::RequestLoadSnapshotChunk& request) override;
    Answer<pb::ResponseApplySnapshotChunk> apply_snapshot_chunk(
        const pb::RequestApplySnapshotChunk& request) override;

    /// Until the background writer has written the snapshots asked for so far (tests).
    void wait_for_snapshots();

    /// A state-sync restore under way: the snapshot's height, its data chunks (the index not
    /// counted) and how many are in. None when no restore runs. Thread-safe (eth_syncing).
    struct RestoreProgress {
        uint64_t height{0};
        uint64_t chunks{0};
        uint64_t applied{0};
    };
    std::optional<RestoreProgress> restore_progress() const;

private:
    /// gas_wanted of a transaction admission found already known: the pooled one's.
    int64_t known_gas(BytesView tx, const Hash& hash) const;
    /// A proposal checked by ProcessProposal: CometBFT's block hash and barrel's checked block.
    struct Kept {
        std::string hash;
        pipeline::CheckedBlock block;
    };
    /// Why a check failed, and whose fault that is.
    struct Refusal {
        std::string reason;  ///< a PipelineError's description, or the app's own rule
        /// The node's own failure (the store could not be read), not the block's: never a
        /// REJECT, always an error (CometBFT stops rather than vote on a state it cannot read).
        bool node_failure{false};
        std::optional<pipeline::PipelineError> error;  ///< the pipeline's, when it failed there
    };

    /// Checks the block `txs` make at `height`, proposed by the validator `proposer`
    /// (decode, verify, execute, seal; nothing written) and reports the sender cache's hits for
    /// `call`. `pooled`, when given, are the pool's transactions `txs` are the encodings of (this
    /// node's own proposal): decoded, hashed and recovered at their admission, they are neither
    /// decoded nor recovered again. Under m_consensus.
    Expected<pipeline::CheckedBlock, Refusal> check(std::string_view call, int64_t height,
                                                    const google::protobuf::Timestamp& time,
                                                    const std::string& proposer,
                                                    std::span<const BytesView> txs,
                                                    std::span<const pool::TxPtr> pooled = {});

    store::Store& m_store;
    pipeline::Pipeline& m_pipeline;
    pool::Pool& m_pool;
    ChainConfig m_config;
    Observer m_observer;

    /// The consensus connection's calls, one at a time (CometBFT sends them so; the lock makes
    /// it the app's guarantee too), and what they keep between them.
    std::mutex m_consensus;
    int64_t m_retain_height{0};  ///< the last Commit's retain_height (under m_consensus)
    std::optional<uint64_t> m_snapshot_requested;  ///< the newest snapshot asked for (Commit's)
    std::vector<Kept> m_kept;         ///< this height's checked proposals, the newest last
    std::optional<Kept> m_finalized;  ///< what FinalizeBlock decided, for Commit
    /// The block this node's last PrepareProposal checked: its own proposal comes back through
    /// ProcessProposal, which takes it instead of executing the same block again.
    std::optional<pipeline::CheckedBlock> m_prepared;

    /// The committed head as Info reports it: a copy, since Store::head() is the committing
    /// thread's.
    mutable std::mutex m_head_mutex;
    store::Head m_head;

    /// The snapshot connection's restore (OfferSnapshot, ApplySnapshotChunk), one at a time.
    mutable std::mutex m_restore_mutex;
    std::unique_ptr<sync::Restorer> m_restorer;

    /// Takes the snapshots after Commit; last, so that it stops before anything it reads.
    std::unique_ptr<sync::BackgroundWriter> m_snapshot_writer;
};

}  // namespace barrel::abci
