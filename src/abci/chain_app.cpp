#include "abci/chain_app.hpp"

#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <utility>
#include <variant>

namespace barrel::abci {

namespace {

using Clock = std::chrono::steady_clock;

/// Proposals of one height kept at once (one per round: a few rounds at most in practice; an
/// older one is dropped, and FinalizeBlock would check it again if it were decided).
constexpr size_t kKeptProposals = 4;

/// The block of `txs` under `header`, from what the pool's admission learned of each (decoded
/// transaction, hash, sender): its wire encoded around their bytes, nothing decoded again.
block::Block from_pool(const block::Header& header, std::span<const pool::TxPtr> txs) {
    block::Block b;
    b.tx_encodings.reserve(txs.size());
    b.tx_hashes.reserve(txs.size());
    b.senders.reserve(txs.size());
    for (const pool::TxPtr& t : txs) {
        b.tx_encodings.emplace_back(t->encoding);
        b.txs.push_back(t->tx);  // its calldata views t->encoding, moved into the wire below
        b.tx_hashes.push_back(t->hash);
        b.senders.push_back(t->sender);
    }
    return block::with_header(std::move(b), header);
}

/// Transactions of a CheckTx run to admit, from which their senders are recovered in parallel
/// (Pool::admit); fewer are admitted one by one on the connection's thread.
constexpr size_t kParallelCheckRun = 16;

/// A reader of the live pool: pool::Pool::find as of every committed block.
constexpr uint64_t kLivePool = std::numeric_limits<uint64_t>::max();

BytesView view_of(const std::string& s) noexcept {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string string_of(BytesView b) { return std::string{as_chars(b)}; }

/// The transactions of a request, as views into it.
std::vector<BytesView> views_of(const google::protobuf::RepeatedPtrField<std::string>& txs) {
    std::vector<BytesView> out;
    out.reserve(static_cast<size_t>(txs.size()));
    for (const std::string& t : txs) out.push_back(view_of(t));
    return out;
}

/// What one transaction adds to a block's Data in protobuf (CometBFT's
/// types.ComputeProtoSizeForTxs, which max_tx_bytes bounds): `repeated bytes txs = 1`, so its
/// key byte, its length as a varint, and its bytes.
size_t proto_size(size_t tx_bytes) noexcept {
    size_t varint = 1;
    for (size_t v = tx_bytes; v >= 0x80; v >>= 7) ++varint;
    return 1 + varint + tx_bytes;
}

/// Whether a failed check is the node's own failure (its store could not be read, or a stage
/// was skipped: a bug), rather than something wrong with the block.
bool is_node_failure(const pipeline::PipelineError& e) noexcept {
    if (std::holds_alternative<store::StoreError>(e.error)) return true;
    if (const auto* x = std::get_if<exec::ExecError>(&e.error)) {
        switch (x->code) {
            case exec::ExecErrorCode::state_unreadable:
            case exec::ExecErrorCode::state_corrupt:
            case exec::ExecErrorCode::missing_header:
            case exec::ExecErrorCode::missing_senders: return true;
            default: return false;
        }
    }
    return false;
}

/// Whether `checked` is the block a template with `context` around `txs` seals into: the same
/// header but for what execution fills in, and the same transaction bytes.
bool is_sealed_from(const pipeline::CheckedBlock& checked, const block::Header& context,
                    std::span<const BytesView> txs) {
    block::Header h = *checked.block().header;
    h.gas_used = context.gas_used;
    h.txs_root = context.txs_root;
    h.receipts_root = context.receipts_root;
    h.state_root = context.state_root;
    const auto& ours = checked.block().tx_encodings;
    return h == context && std::equal(ours.begin(), ours.end(), txs.begin(), txs.end(),
                                      [](BytesView a, BytesView b) {
                                          return std::equal(a.begin(), a.end(), b.begin(), b.end());
                                      });
}

/// "block 0x…, state root 0x…, chain id 7": what identifies a genesis.
std::string genesis_identity(const Hash& hash, const block::Header& h) {
    return "block 0 " + to_hex(hash) + ", state root " + to_hex(h.state_root) + ", chain id " +
           std::to_string(h.chain_id);
}

}  // namespace

int64_t retain_height(uint64_t head, uint64_t retain_blocks,
                      std::optional<uint64_t> lowest_retained) noexcept {
    // The store's own rule (store::Options::retain_blocks): blocks 1 to head when no more than
    // retained, else from head - retain_blocks + 1. CometBFT's store starts at height 1.
    if (retain_blocks == 0 || head <= retain_blocks) return 0;
    uint64_t height = head - retain_blocks + 1;
    if (lowest_retained) height = std::min(height, std::max<uint64_t>(*lowest_retained, 1));
    if (height <= 1) return 0;  // nothing below it: the same as keeping everything
    return static_cast<int64_t>(std::min<uint64_t>(height, std::numeric_limits<int64_t>::max()));
}

uint32_t check_tx_code(pool::RejectCode code) noexcept { return 1 + static_cast<uint32_t>(code); }

ChainApp::ChainApp(store::Store& store, pipeline::Pipeline& pipeline, pool::Pool& pool,
                   ChainConfig config, Observer observer)
    : m_store{store},
      m_pipeline{pipeline},
      m_pool{pool},
      m_config{std::move(config)},
      m_observer{std::move(observer)},
      m_head{store.head()} {
    if (m_config.snapshots && !m_config.lowest_retained_height) {
        // CometBFT keeps its blocks from the oldest snapshot on: a node restoring it block-syncs
        // from there.
        sync::Snapshots* snapshots = m_config.snapshots;
        m_config.lowest_retained_height = [snapshots] { return snapshots->oldest(); };
    }
    if (m_config.snapshots && m_config.snapshot_interval > 0)
        m_snapshot_writer =
            std::make_unique<sync::BackgroundWriter>(*m_config.snapshots, m_config.snapshot_hooks);
}

void ChainApp::wait_for_snapshots() {
    if (m_snapshot_writer) m_snapshot_writer->wait_idle();
}

// ---- query connection ------------------------------------------------------------------------

Answer<pb::ResponseInfo> ChainApp::info(const pb::RequestInfo& /*request*/) {
    pb::ResponseInfo response;
    response.set_data("barrel");
    response.set_version(m_config.version);
    response.set_app_version(kAppVersion);
    std::lock_guard lock{m_head_mutex};
    response.set_last_block_height(static_cast<int64_t>(m_head.number));
    response.set_last_block_app_hash(string_of(m_head.state_root));
    return response;
}

Answer<pb::ResponseQuery> ChainApp::query(const pb::RequestQuery& /*request*/) {
    pb::ResponseQuery response;
    response.set_code(1);
    response.set_log(
        "barrel answers queries over its Ethereum JSON-RPC (eth_getBalance, eth_call, …), not "
        "ABCI Query");
    return response;
}

// ---- mempool connection ----------------------------------------------------------------------

Answer<pb::ResponseCheckTx> ChainApp::check_tx(const pb::RequestCheckTx& request) {
    const pb::RequestCheckTx* one[] = {&request};
    return std::move(check_txs(one).front());
}

std::vector<Answer<pb::ResponseCheckTx>> ChainApp::check_txs(
    std::span<const pb::RequestCheckTx* const> requests) {
    std::vector<Answer<pb::ResponseCheckTx>> answers(requests.size());
    // The requests to admit together, in their order: their senders are recovered in parallel
    // (from kParallelCheckRun of them), and the pool's stateful checks run in batch order, as if
    // each were checked in turn.
    std::vector<BytesView> batch;
    std::vector<Hash> batch_hashes;
    std::vector<size_t> batch_at;  // their places in `requests`
    const auto admit_batch = [&] {
        if (batch.empty()) return;
        std::vector<pool::AdmitResult> admitted;
        if (batch.size() >= kParallelCheckRun) {
            admitted = m_pool.admit(batch, pool::Origin::peer, batch_hashes);
        } else {
            // A few at a time (a node keeping up with its gossip): on this thread, one after
            // the other, as a parallel loop would wake a worker for less than it saves.
            admitted.reserve(batch.size());
            for (size_t k = 0; k < batch.size(); ++k)
                admitted.push_back(m_pool.admit_one(batch[k], batch_hashes[k], pool::Origin::peer));
        }
        for (size_t k = 0; k < batch.size(); ++k) {
            pb::ResponseCheckTx& response = *answers[batch_at[k]];
            if (admitted[k]) {
                response.set_gas_wanted(static_cast<int64_t>(admitted[k]->gas_limit));
            } else if (admitted[k].error().code != pool::RejectCode::already_known) {
                response.set_code(check_tx_code(admitted[k].error().code));
                response.set_log(admitted[k].error().message);
            } else {
                // Known: pooled before its turn (by an earlier request of the run, or over
                // JSON-RPC meanwhile), and answered as a pooled one is.
                response.set_gas_wanted(known_gas(batch[k], batch_hashes[k]));
            }
        }
        batch.clear();
        batch_hashes.clear();
        batch_at.clear();
    };
    for (size_t i = 0; i < requests.size(); ++i) {
        const BytesView tx = view_of(requests[i]->tx());
        // Hashed once: the pool is searched by it, and admission takes it as it is.
        const Hash hash = tx::hash_of(tx);
        pb::ResponseCheckTx& response = *answers[i];
        if (requests[i]->type() == pb::RECHECK) {
            // After each commit: Commit has told the pool what the block made invalid, so
            // whether the pool still holds it is the whole answer, and nothing is recovered
            // again. Asked after the requests before it are admitted (CometBFT sends rechecks
            // on their own, under its mempool's lock, after the Flush before Commit it waited
            // for, so this splits no run in practice).
            admit_batch();
            if (const pool::TxPtr pooled = m_pool.find(hash, kLivePool)) {
                response.set_gas_wanted(static_cast<int64_t>(pooled->tx.gas_limit));
            } else {
                response.set_code(kNoLongerPooled);
                response.set_log("no longer valid: the pool no longer holds it");
            }
            continue;
        }
        // A first check of a transaction the pool holds is admitted too ("already known"):
        // a transaction this node took over JSON-RPC comes back through CometBFT's mempool,
        // which must still gossip it. With nothing of the run before it to admit, the pool's
        // answer is the whole answer; after a request to admit, which could replace or evict
        // it, it is admitted in turn with them, and the pool says "already known" or why not.
        if (batch.empty()) {
            if (const pool::TxPtr pooled = m_pool.find(hash, kLivePool)) {
                response.set_gas_wanted(static_cast<int64_t>(pooled->tx.gas_limit));
                continue;
            }
        }
        batch.push_back(tx);
        batch_hashes.push_back(hash);
        batch_at.push_back(i);
    }
    admit_batch();
    return answers;
}

int64_t ChainApp::known_gas(BytesView tx, const Hash& hash) const {
    if (const pool::TxPtr pooled = m_pool.find(hash, kLivePool))
        return static_cast<int64_t>(pooled->tx.gas_limit);
    // Known at its turn and gone since (evicted by a later request of the run): the same hash
    // is the same bytes, and so the same gas limit.
    const auto decoded = tx::decode(tx);
    return decoded ? static_cast<int64_t>(decoded->gas_limit) : 0;
}

// ---- consensus connection --------------------------------------------------------------------

Answer<pb::ResponseInitChain> ChainApp::init_chain(const pb::RequestInitChain& request) {
    std::lock_guard lock{m_consensus};
    if (request.initial_height() != 1)
        return unexpected("InitChain: initial_height " + std::to_string(request.initial_height()) +
                          ": barrel's block 1 follows its genesis block 0, so the CometBFT "
                          "genesis must have initial_height 1");
    auto genesis = chain::parse_genesis(request.app_state_bytes());
    if (!genesis)
        return unexpected("InitChain: app_state is not a barrel genesis: " + genesis.error());
    const block::Header h0 = chain::genesis_header(*genesis);
    const Hash hash0 = block::hash_of(h0);
    auto stored = m_store.header_record(0);
    if (!stored) return unexpected("InitChain: reading block 0: " + stored.error().message);
    if (!*stored) return unexpected(std::string{"InitChain: the datadir has no block 0"});
    const store::HeaderRecord& ours = **stored;
    if (ours.hash != hash0)
        return unexpected("InitChain: app_state is another chain's genesis (" +
                          genesis_identity(hash0, h0) + ") than the datadir's (" +
                          genesis_identity(ours.hash, ours.header) +
                          "): make the datadir with barrel-node init from the same genesis file");
    const store::Head& head = m_store.head();
    if (head.number != 0)
        return unexpected("InitChain: the datadir is at block " + std::to_string(head.number) +
                          ", not at its genesis (CometBFT asks for InitChain only at height 0)");
    pb::ResponseInitChain response;
    // The validators and consensus parameters stay CometBFT's own (nothing set here).
    response.set_app_hash(string_of(h0.state_root));
    return response;
}

Expected<pipeline::CheckedBlock, ChainApp::Refusal> ChainApp::check(
    std::string_view call, int64_t height, const google::protobuf::Timestamp& time,
    const std::string& proposer, std::span<const BytesView> txs,
    std::span<const pool::TxPtr> pooled) {
    const store::Head& head = m_store.head();
    auto refuse = [&](std::string reason) {
        return unexpected(
            Refusal{"block " + std::to_string(height) + ": " + std::move(reason), false, {}});
    };
    // Height 0 (or less) would read as a template that names no place, made the head's child.
    if (height <= 0)
        return refuse("link: " + pipeline::describe(
                                     pipeline::LinkError{pipeline::LinkErrorCode::not_child_of_head,
                                                         0, head.hash, head.number, head.hash}));
    for (size_t i = 0; i < txs.size(); ++i)
        if (txs[i].empty()) return refuse("transaction " + std::to_string(i) + ": empty");

    // The template: its place (this height on the head), the consensus time in seconds, the
    // chain's context; the execute stage fills in gas used and the roots.
    block::Header h;
    h.number = static_cast<uint64_t>(height);
    h.parent_hash = head.hash;
    h.timestamp = static_cast<uint64_t>(std::max<int64_t>(0, time.seconds()));
    // The proposer's fee address, which every node reads from the same genesis.
    h.coinbase =
        chain::validator_coinbase(m_store.genesis(), view_of(proposer)).value_or(m_config.coinbase);
    h.gas_limit = m_store.genesis().gas_limit;
    h.chain_id = m_store.genesis().config.chain_id;

    // This node's own proposal, checked by its PrepareProposal on the same head.
    if (m_prepared && is_sealed_from(*m_prepared, h, txs)) {
        pipeline::CheckedBlock prepared = std::move(*m_prepared);
        m_prepared.reset();
        return prepared;
    }

    // Only the verify stage looks senders up (admission only inserts), and the consensus calls
    // run one at a time: the difference of the hit counts is this block's.
    block::SenderCache* cache = m_pipeline.sender_cache();
    const uint64_t hits_before = cache ? cache->stats().hits : 0;
    auto checked = pooled.empty() ? m_pipeline.check_template(block::encode_block(h, txs))
                                  : m_pipeline.check_template(from_pool(h, pooled));
    // A pooled transaction's sender was known without a recovery, as a cache hit's is.
    const uint64_t hits =
        pooled.empty() ? (cache ? cache->stats().hits - hits_before : 0) : pooled.size();
    if (m_observer.on_checked)
        m_observer.on_checked(call, static_cast<uint64_t>(height), txs.size(),
                              static_cast<size_t>(hits));
    if (!checked)
        return unexpected(Refusal{pipeline::describe(checked.error()),
                                  is_node_failure(checked.error()), checked.error()});
    return std::move(checked).value();
}

Answer<pb::ResponsePrepareProposal> ChainApp::prepare_proposal(
    const pb::RequestPrepareProposal& request) {
    std::lock_guard lock{m_consensus};
    // CometBFT's own list (its mempool's reap) is ignored: the block is the pool's selection,
    // as the sealer takes it, cut to what fits max_tx_bytes. The selection orders each sender's
    // transactions by nonce, so any prefix of it is a valid block.
    const size_t max_bytes = static_cast<size_t>(std::max<int64_t>(0, request.max_tx_bytes()));
    const uint64_t gas_limit = m_store.genesis().gas_limit;
    m_prepared.reset();
    pb::ResponsePrepareProposal response;
    // Each failure a transaction is to blame for drops it, so this ends; bounded all the same,
    // like the sealer's rounds, by a block's worth of drops.
    const size_t max_rounds = std::min(m_config.max_proposal_txs, m_pool.status().pending);
    for (size_t round = 0; round <= max_rounds; ++round) {
        const pool::Selection selection = m_pool.take(m_config.max_proposal_txs, gas_limit);
        std::vector<BytesView> txs;
        size_t bytes = 0;
        for (const pool::TxPtr& t : selection.txs) {
            bytes += proto_size(t->encoding.size());
            if (bytes > max_bytes) break;
            txs.emplace_back(t->encoding);
        }
        const std::span<const pool::TxPtr> chosen{selection.txs.data(), txs.size()};
        auto checked = check("prepare_proposal", request.height(), request.time(),
                             request.proposer_address(), txs, chosen);
        // The proposal may never be decided: what was taken is released at once, and Commit
        // removes what a decided block included.
        m_pool.abandon_taken();
        if (checked) {
            for (const BytesView t : txs) response.add_txs(string_of(t));
            m_prepared = std::move(checked).value();
            return response;
        }
        const auto blamed = checked.error().error
                                ? pipeline::blamed_transaction(*checked.error().error)
                                : std::nullopt;
        if (!blamed || blamed->tx_index >= chosen.size())
            return unexpected("PrepareProposal: " + checked.error().reason);
        // A transaction the block failed on leaves the pool (the sealer's rule), and the block
        // is built again without it.
        const seal::Dropped dropped{chosen[blamed->tx_index]->hash, blamed->reason,
                                    *checked.error().error};
        m_pool.drop(dropped.transaction);
        if (m_observer.on_dropped) m_observer.on_dropped(dropped);
    }
    return response;  // an empty block: always valid
}

Answer<pb::ResponseProcessProposal> ChainApp::process_proposal(
    const pb::RequestProcessProposal& request) {
    std::lock_guard lock{m_consensus};
    const std::vector<BytesView> txs = views_of(request.txs());
    auto checked = check("process_proposal", request.height(), request.time(),
                         request.proposer_address(), txs);
    pb::ResponseProcessProposal response;
    if (!checked) {
        if (checked.error().node_failure)
            return unexpected("ProcessProposal: " + checked.error().reason);
        if (m_observer.on_rejected)
            m_observer.on_rejected(static_cast<uint64_t>(std::max<int64_t>(0, request.height())),
                                   checked.error().reason);
        response.set_status(pb::ResponseProcessProposal::REJECT);
        return response;
    }
    // A block proposed again in a later round replaces its earlier check.
    std::erase_if(m_kept, [&](const Kept& k) { return k.hash == request.hash(); });
    if (m_kept.size() == kKeptProposals) m_kept.erase(m_kept.begin());
    m_kept.push_back(Kept{request.hash(), std::move(checked).value()});
    response.set_status(pb::ResponseProcessProposal::ACCEPT);
    return response;
}

Answer<pb::ResponseVerifyVoteExtension> ChainApp::verify_vote_extension(
    const pb::RequestVerifyVoteExtension& request) {
    // barrel extends no vote: only an empty extension is one of its own.
    pb::ResponseVerifyVoteExtension response;
    response.set_status(request.vote_extension().empty() ? pb::ResponseVerifyVoteExtension::ACCEPT
                                                         : pb::ResponseVerifyVoteExtension::REJECT);
    return response;
}

Answer<pb::ResponseFinalizeBlock> ChainApp::finalize_block(
    const pb::RequestFinalizeBlock& request) {
    std::lock_guard lock{m_consensus};
    std::optional<pipeline::CheckedBlock> decided;
    const auto kept = std::find_if(m_kept.begin(), m_kept.end(),
                                   [&](const Kept& k) { return k.hash == request.hash(); });
    if (kept != m_kept.end()) {
        decided = std::move(kept->block);
        m_kept.erase(kept);
    } else {
        // Replay after a crash, block sync: FinalizeBlock without ProcessProposal. The block
        // is decided: if barrel cannot execute it, it cannot follow the chain, and says so.
        const std::vector<BytesView> txs = views_of(request.txs());
        auto checked = check("finalize_block", request.height(), request.time(),
                             request.proposer_address(), txs);
        if (!checked)
            return unexpected("FinalizeBlock: the decided block cannot be executed: " +
                              checked.error().reason);
        decided = std::move(checked).value();
    }
    const block::Block& block = decided->block();
    const exec::Outcome& outcome = decided->outcome();
    pb::ResponseFinalizeBlock response;
    for (size_t i = 0; i < block.size(); ++i) {
        pb::ExecTxResult* result = response.add_tx_results();
        result->set_gas_wanted(static_cast<int64_t>(block.txs[i].gas_limit));
        result->set_gas_used(static_cast<int64_t>(outcome.receipts[i].gas_used));
    }
    response.set_app_hash(string_of(outcome.state_root));
    m_finalized = Kept{request.hash(), std::move(*decided)};
    if (request.height() > 1 && m_observer.on_finalized)
        m_observer.on_finalized(static_cast<uint64_t>(request.height() - 1),
                                request.decided_last_commit().round());
    return response;
}

Answer<pb::ResponseCommit> ChainApp::commit(const pb::RequestCommit& /*request*/) {
    std::lock_guard lock{m_consensus};
    if (!m_finalized) return unexpected(std::string{"Commit: no block was finalized"});
    const pipeline::CheckedBlock& decided = m_finalized->block;
    // CometBFT's hash of the block is stored beside barrel's, in the same atomic commit.
    auto result = m_pipeline.commit_checked(decided, view_of(m_finalized->hash));
    if (!result) return unexpected("Commit: " + pipeline::describe(result.error()));
    const block::Block& block = decided.block();
    // The pool reads again every account the block changed (its senders, recipients and
    // coinbase): the block may hold transactions this pool never had.
    std::vector<Address> touched;
    touched.reserve(decided.outcome().writes.accounts.size());
    for (const auto& [address, account] : decided.outcome().writes.accounts)
        touched.push_back(address);
    m_pool.committed(result->number, block.tx_hashes, touched);
    {
        std::lock_guard head_lock{m_head_mutex};
        m_head = m_store.head();
    }
    seal::Sealed sealed;
    sealed.result = *result;
    sealed.pool = m_pool.status();
    sealed.transactions = block.tx_hashes;
    m_finalized.reset();
    m_kept.clear();
    m_prepared.reset();
    if (m_observer.on_committed) m_observer.on_committed(sealed);
    if (m_snapshot_writer && result->number % m_config.snapshot_interval == 0) {
        // A RocksDB snapshot of this height, taken before the next block can commit; the writer
        // reads it on its own thread, so Commit never waits for the chunks.
        if (auto at = m_store.snapshot(); at && m_snapshot_writer->request(std::move(at).value()))
            m_snapshot_requested = result->number;
    }
    pb::ResponseCommit response;
    auto lowest = m_config.lowest_retained_height ? m_config.lowest_retained_height()
                                                  : std::optional<uint64_t>{};
    // A snapshot still being written will be served too: its height bounds the retained blocks
    // from the moment it is asked for, not from when it is listed (then retain_height never has
    // to go down, which CometBFT refuses).
    if (m_snapshot_requested && m_config.snapshots) {
        const auto listed = m_config.snapshots->list();
        if (listed.empty() || listed.back().height < *m_snapshot_requested)
            lowest = std::min(lowest.value_or(UINT64_MAX), *m_snapshot_requested);
    }
    // Never lower than told before: a snapshot listed after an earlier Commit could pull the
    // bound below what CometBFT already pruned to (it refuses a retain height below its base).
    m_retain_height =
        std::max(m_retain_height, retain_height(result->number, m_config.retain_blocks, lowest));
    response.set_retain_height(m_retain_height);
    return response;
}

// ---- snapshot connection: state sync (docs/formats.md, "State sync snapshots") -------------

namespace {

pb::ResponseOfferSnapshot::Result offer_result(sync::OfferVerdict verdict) noexcept {
    switch (verdict) {
        case sync::OfferVerdict::accept: return pb::ResponseOfferSnapshot::ACCEPT;
        case sync::OfferVerdict::reject: return pb::ResponseOfferSnapshot::REJECT;
        case sync::OfferVerdict::reject_format: return pb::ResponseOfferSnapshot::REJECT_FORMAT;
        case sync::OfferVerdict::abort: return pb::ResponseOfferSnapshot::ABORT;
    }
    return pb::ResponseOfferSnapshot::ABORT;
}

pb::ResponseApplySnapshotChunk::Result chunk_result(sync::ChunkVerdict verdict) noexcept {
    switch (verdict) {
        case sync::ChunkVerdict::accept: return pb::ResponseApplySnapshotChunk::ACCEPT;
        case sync::ChunkVerdict::retry: return pb::ResponseApplySnapshotChunk::RETRY;
        case sync::ChunkVerdict::reject_snapshot:
            return pb::ResponseApplySnapshotChunk::REJECT_SNAPSHOT;
        case sync::ChunkVerdict::abort: return pb::ResponseApplySnapshotChunk::ABORT;
    }
    return pb::ResponseApplySnapshotChunk::ABORT;
}

}  // namespace

Answer<pb::ResponseListSnapshots> ChainApp::list_snapshots(
    const pb::RequestListSnapshots& /*request*/) {
    pb::ResponseListSnapshots response;
    if (!m_config.snapshots) return response;
    for (const sync::Descriptor& d : m_config.snapshots->list()) {
        pb::Snapshot* s = response.add_snapshots();
        s->set_height(d.height);
        s->set_format(d.format);
        s->set_chunks(d.chunks);
        s->set_hash(string_of(d.hash));
        s->set_metadata(string_of(d.metadata));
    }
    return response;
}

Answer<pb::ResponseOfferSnapshot> ChainApp::offer_snapshot(
    const pb::RequestOfferSnapshot& request) {
    // With the consensus calls' lock too: a restore moves the head that Commit moves.
    std::scoped_lock lock{m_consensus, m_restore_mutex};
    pb::ResponseOfferSnapshot response;
    const pb::Snapshot& offered = request.snapshot();
    // A hash or app hash of another size is no snapshot of barrel's.
    if (offered.hash().size() != Hash::size() || request.app_hash().size() != Hash::size()) {
        response.set_result(pb::ResponseOfferSnapshot::REJECT);
        return response;
    }
    const sync::Descriptor descriptor{offered.height(), offered.format(), offered.chunks(),
                                      Hash::from_view(view_of(offered.hash())),
                                      Bytes(offered.metadata().begin(), offered.metadata().end())};
    m_restorer.reset();
    auto offer =
        sync::Restorer::offer(m_store, descriptor, Hash::from_view(view_of(request.app_hash())));
    response.set_result(offer_result(offer.verdict));
    if (m_observer.on_state_sync)
        m_observer.on_state_sync("snapshot of height " + std::to_string(offered.height()) +
                                 (offer.verdict == sync::OfferVerdict::accept
                                      ? " accepted: " + std::to_string(offered.chunks()) + " chunks"
                                      : " refused: " + offer.reason));
    m_restorer = std::move(offer.restorer);
    return response;
}

Answer<pb::ResponseLoadSnapshotChunk> ChainApp::load_snapshot_chunk(
    const pb::RequestLoadSnapshotChunk& request) {
    pb::ResponseLoadSnapshotChunk response;
    if (!m_config.snapshots) return response;
    // An empty chunk tells the peer this node has none (a snapshot pruned meanwhile).
    if (auto chunk =
            m_config.snapshots->chunk(request.height(), request.format(), request.chunk())) {
        // The network test's seam for a peer that serves damaged snapshots: every chunk this
        // node sends has its last byte flipped. Never set outside that test.
        static const bool corrupt = std::getenv("BARREL_TEST_CORRUPT_SNAPSHOT_CHUNKS") != nullptr;
        if (corrupt && !chunk->empty()) chunk->back() ^= 0x01;
        response.set_chunk(string_of(*chunk));
    }
    return response;
}

std::optional<ChainApp::RestoreProgress> ChainApp::restore_progress() const {
    std::lock_guard lock{m_restore_mutex};
    if (!m_restorer) return std::nullopt;
    const uint32_t chunks = m_restorer->descriptor().chunks;
    const uint32_t next = m_restorer->applied();  // chunk 0, the index, comes first
    return RestoreProgress{m_restorer->height(), chunks > 0 ? chunks - 1u : 0u,
                           next > 0 ? next - 1u : 0u};
}

Answer<pb::ResponseApplySnapshotChunk> ChainApp::apply_snapshot_chunk(
    const pb::RequestApplySnapshotChunk& request) {
    std::scoped_lock lock{m_consensus, m_restore_mutex};
    pb::ResponseApplySnapshotChunk response;
    if (!m_restorer) {
        response.set_result(pb::ResponseApplySnapshotChunk::ABORT);
        return response;
    }
    const sync::ChunkResult result = m_restorer->apply(request.index(), view_of(request.chunk()));
    response.set_result(chunk_result(result.verdict));
    if (result.verdict == sync::ChunkVerdict::retry) {
        for (const uint32_t i : result.refetch) response.add_refetch_chunks(i);
        // Bytes that are not the committed ones came from this peer: CometBFT fetches the chunk
        // again from another and stops asking this one.
        if (result.sender_at_fault && !request.sender().empty())
            response.add_reject_senders(request.sender());
    }
    if (result.verdict != sync::ChunkVerdict::accept && m_observer.on_state_sync)
        m_observer.on_state_sync("snapshot chunk " + std::to_string(request.index()) +
                                 " from peer " +
                                 (request.sender().empty() ? "(unknown)" : request.sender()) +
                                 " refused: " + result.reason);
    if (result.verdict == sync::ChunkVerdict::reject_snapshot) m_restorer.reset();
    if (result.done) {
        if (m_observer.on_state_sync)
            m_observer.on_state_sync("state restored: head " +
                                     std::to_string(m_store.head().number) + ", state root " +
                                     to_hex(m_store.head().state_root));
        // Info now answers height H and its root: CometBFT goes on by block sync from H + 1,
        // whose FinalizeBlock executes on the restored head (the pipeline reads Store::head()).
        m_restorer.reset();
        std::lock_guard head_lock{m_head_mutex};
        m_head = m_store.head();
    }
    return response;
}

}  // namespace barrel::abci
