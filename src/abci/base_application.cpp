#include "abci/application.hpp"

namespace barrel::abci {

Answer<pb::ResponseInfo> BaseApplication::info(const pb::RequestInfo& /*request*/) {
    return pb::ResponseInfo{};
}

Answer<pb::ResponseQuery> BaseApplication::query(const pb::RequestQuery& /*request*/) {
    return pb::ResponseQuery{};
}

std::vector<Answer<pb::ResponseCheckTx>> Application::check_txs(
    std::span<const pb::RequestCheckTx* const> requests) {
    std::vector<Answer<pb::ResponseCheckTx>> answers;
    answers.reserve(requests.size());
    for (const pb::RequestCheckTx* request : requests) answers.push_back(check_tx(*request));
    return answers;
}

Answer<pb::ResponseCheckTx> BaseApplication::check_tx(const pb::RequestCheckTx& /*request*/) {
    return pb::ResponseCheckTx{};
}

Answer<pb::ResponseInitChain> BaseApplication::init_chain(const pb::RequestInitChain& /*request*/) {
    return pb::ResponseInitChain{};
}

Answer<pb::ResponsePrepareProposal> BaseApplication::prepare_proposal(
    const pb::RequestPrepareProposal& request) {
    // As CometBFT's: its transactions in its order, stopping at the first past max_tx_bytes.
    pb::ResponsePrepareProposal response;
    int64_t total = 0;
    for (const std::string& tx : request.txs()) {
        total += static_cast<int64_t>(tx.size());
        if (total > request.max_tx_bytes()) break;
        response.add_txs(tx);
    }
    return response;
}

Answer<pb::ResponseProcessProposal> BaseApplication::process_proposal(
    const pb::RequestProcessProposal& /*request*/) {
    pb::ResponseProcessProposal response;
    response.set_status(pb::ResponseProcessProposal::ACCEPT);
    return response;
}

Answer<pb::ResponseExtendVote> BaseApplication::extend_vote(
    const pb::RequestExtendVote& /*request*/) {
    return pb::ResponseExtendVote{};
}

Answer<pb::ResponseVerifyVoteExtension> BaseApplication::verify_vote_extension(
    const pb::RequestVerifyVoteExtension& /*request*/) {
    pb::ResponseVerifyVoteExtension response;
    response.set_status(pb::ResponseVerifyVoteExtension::ACCEPT);
    return response;
}

Answer<pb::ResponseFinalizeBlock> BaseApplication::finalize_block(
    const pb::RequestFinalizeBlock& request) {
    pb::ResponseFinalizeBlock response;
    for (int i = 0; i < request.txs_size(); ++i) response.add_tx_results();  // code 0: OK
    return response;
}

Answer<pb::ResponseCommit> BaseApplication::commit(const pb::RequestCommit& /*request*/) {
    return pb::ResponseCommit{};
}

Answer<pb::ResponseListSnapshots> BaseApplication::list_snapshots(
    const pb::RequestListSnapshots& /*request*/) {
    return pb::ResponseListSnapshots{};
}

Answer<pb::ResponseOfferSnapshot> BaseApplication::offer_snapshot(
    const pb::RequestOfferSnapshot& /*request*/) {
    return pb::ResponseOfferSnapshot{};
}

Answer<pb::ResponseLoadSnapshotChunk> BaseApplication::load_snapshot_chunk(
    const pb::RequestLoadSnapshotChunk& /*request*/) {
    return pb::ResponseLoadSnapshotChunk{};
}

Answer<pb::ResponseApplySnapshotChunk> BaseApplication::apply_snapshot_chunk(
    const pb::RequestApplySnapshotChunk& /*request*/) {
    return pb::ResponseApplySnapshotChunk{};
}

}  // namespace barrel::abci
