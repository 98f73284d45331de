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
//   request: number = height, timestamp = its time in seconds, parent = the head, coinbase = the
//   genesis's) checked by the pipeline without committing; REJECT for anything barrel would
//   refuse; the outcome kept by the proposal's hash for FinalizeBlock.
// - FinalizeBlock: that outcome (or the same check, during replay and block sync); app_hash =
//   the state root; nothing persisted. Commit: the one atomic store commit, then the pool.
// Crash rules: barrel may be behind CometBFT after a crash, never ahead; the handshake replays.

#include <barrel/core/bytes.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/seal/sealer.hpp>
#include <barrel/store/store.hpp>

#include "abci/application.hpp"

#include <cstdint>
#include <functional>
#include <string_view>

namespace barrel::abci {

struct ChainConfig {
    /// Transactions per block at most (the sealer's bound).
    size_t max_block_txs{2500};
    /// The fee recipient of every block (DESIGN.md: the genesis coinbase).
    Address coinbase{};
};

/// What the node hears from the application (metrics, subscriptions, the log line).
struct Observer {
    /// A block was committed (after Commit, with the pool updated).
    std::function<void(const seal::Sealed&)> on_committed{};
    /// Every ABCI call, with how long the application took ("finalize_block", 12.5).
    std::function<void(std::string_view call, double ms)> on_call{};
    /// A proposal was rejected at `height`, and why (a PipelineError's description).
    std::function<void(uint64_t height, std::string_view reason)> on_rejected{};
    /// A height was finalized in `round` (FinalizeBlock's decided_last_commit round is the
    /// previous height's; this is the round of the proposal that was decided, when known).
    std::function<void(uint64_t height, int32_t round)> on_finalized{};
};

class ChainApp final : public Application {
public:
    ChainApp(store::Store& store, pipeline::Pipeline& pipeline, pool::Pool& pool,
             ChainConfig config, Observer observer = {});

    Answer<pb::ResponseInfo> info(const pb::RequestInfo& request) override;
    Answer<pb::ResponseQuery> query(const pb::RequestQuery& request) override;
    Answer<pb::ResponseCheckTx> check_tx(const pb::RequestCheckTx& request) override;
    Answer<pb::ResponseInitChain> init_chain(const pb::RequestInitChain& request) override;
    Answer<pb::ResponsePrepareProposal> prepare_proposal(
        const pb::RequestPrepareProposal& request) override;
    Answer<pb::ResponseProcessProposal> process_proposal(
        const pb::RequestProcessProposal& request) override;
    Answer<pb::ResponseExtendVote> extend_vote(const pb::RequestExtendVote& request) override;
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

    // (private state: the helper implementing this adds what it needs)
};

}  // namespace barrel::abci
