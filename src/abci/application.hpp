#pragma once
// What the ABCI server (server.hpp) calls: one method per ABCI 2.0 request of CometBFT v0.38
// (DESIGN.md, "Network"). The messages are CometBFT's own, generated from its .proto files
// (cmake/AbciProto.cmake).
//
// Threads: the server reads CometBFT's four connections (consensus, mempool, query, snapshot) on
// a thread each and calls the application from all of them at once; requests of one connection
// come one at a time and in order (consecutive CheckTx in one call, check_txs). An implementation
// serialises what must be (CometBFT itself holds the mempool across Commit, so CheckTx never
// overlaps a commit it could observe half done).
//
// Errors: a method that cannot answer (the store failed) returns a message; the server answers
// with ResponseException, on which CometBFT stops the node rather than go on with an application
// whose state it cannot know. A request that is merely wrong (a transaction the pool refuses, a
// proposal barrel would not produce) is answered in the response itself (CheckTx's code,
// ProcessProposal's REJECT), never as an exception.

#include <barrel/core/expected.hpp>

#include <tendermint/abci/types.pb.h>

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::abci {

namespace pb = ::tendermint::abci;

template <class Response>
using Answer = Expected<Response, std::string>;

class Application {
public:
    virtual ~Application() = default;

    // Query connection.
    virtual Answer<pb::ResponseInfo> info(const pb::RequestInfo& request) = 0;
    virtual Answer<pb::ResponseQuery> query(const pb::RequestQuery& request) = 0;

    // Mempool connection.
    virtual Answer<pb::ResponseCheckTx> check_tx(const pb::RequestCheckTx& request) = 0;
    /// CheckTx of consecutive requests of the mempool connection, one answer each in their
    /// order, as if check_tx had been asked of each in turn. The server hands over together the
    /// CheckTx requests it has read and not yet answered, the Flushes among them aside (their
    /// answers follow the answers before them): CometBFT's client pipelines them and waits only
    /// for its synchronous Flushes, and an application can check them in parallel (barrel
    /// recovers their senders on every core). This default asks check_tx of each.
    virtual std::vector<Answer<pb::ResponseCheckTx>> check_txs(
        std::span<const pb::RequestCheckTx* const> requests);

    // Consensus connection, in this order per height: [InitChain once] PrepareProposal (the
    // proposer) / ProcessProposal (every validator, possibly several per height: one per
    // round), ExtendVote / VerifyVoteExtension (only if vote extensions are enabled),
    // FinalizeBlock, Commit.
    virtual Answer<pb::ResponseInitChain> init_chain(const pb::RequestInitChain& request) = 0;
    virtual Answer<pb::ResponsePrepareProposal> prepare_proposal(
        const pb::RequestPrepareProposal& request) = 0;
    virtual Answer<pb::ResponseProcessProposal> process_proposal(
        const pb::RequestProcessProposal& request) = 0;
    virtual Answer<pb::ResponseExtendVote> extend_vote(const pb::RequestExtendVote& request) = 0;
    virtual Answer<pb::ResponseVerifyVoteExtension> verify_vote_extension(
        const pb::RequestVerifyVoteExtension& request) = 0;
    virtual Answer<pb::ResponseFinalizeBlock> finalize_block(
        const pb::RequestFinalizeBlock& request) = 0;
    virtual Answer<pb::ResponseCommit> commit(const pb::RequestCommit& request) = 0;

    // Snapshot connection (state sync: format 1 snapshots, src/sync and include/barrel/sync).
    virtual Answer<pb::ResponseListSnapshots> list_snapshots(
        const pb::RequestListSnapshots& request) = 0;
    virtual Answer<pb::ResponseOfferSnapshot> offer_snapshot(
        const pb::RequestOfferSnapshot& request) = 0;
    virtual Answer<pb::ResponseLoadSnapshotChunk> load_snapshot_chunk(
        const pb::RequestLoadSnapshotChunk& request) = 0;
    virtual Answer<pb::ResponseApplySnapshotChunk> apply_snapshot_chunk(
        const pb::RequestApplySnapshotChunk& request) = 0;
};

/// CometBFT's default answers (abci/types/application.go, BaseApplication): an application, a
/// test stand-in or a fuzz target derives from it and overrides only the calls it means.
/// PrepareProposal proposes CometBFT's transactions as they come, up to max_tx_bytes;
/// ProcessProposal and VerifyVoteExtension accept; FinalizeBlock answers code 0 for each
/// transaction; every other call answers an empty response of its kind (code 0).
class BaseApplication : public Application {
public:
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
};

/// Told of each call `dispatch` makes to an application: its name, the Request field's
/// ("check_tx", "finalize_block"), and how long the application took, in milliseconds.
using CallObserver = std::function<void(std::string_view call, double ms)>;

/// The Request field `request` holds ("check_tx"), "" when none.
std::string_view call_name(const pb::Request& request) noexcept;

/// Answers one request with `app` (Echo and Flush by themselves): the Response the server writes
/// back, ResponseException when the application could not answer or the request has no value.
/// Each application call is timed here, and only here, for `on_call` (when it is set).
pb::Response dispatch(Application& app, const pb::Request& request,
                      const CallObserver& on_call = {});

/// Answers consecutive CheckTx requests (each request's value is check_tx) with one call of
/// app.check_txs: one Response each, in their order. `on_call` is told "check_tx" once per
/// request, each with an equal share of the call's time.
std::vector<pb::Response> dispatch_check_txs(Application& app,
                                             std::span<const pb::Request> requests,
                                             const CallObserver& on_call = {});

}  // namespace barrel::abci
