// barrel as CometBFT's application (abci::ChainApp) against real datadirs: every ABCI call, the
// REJECT of each kind of proposal barrel would refuse (with its reason), CheckTx's codes,
// PrepareProposal's bounds, two nodes fed the same requests agreeing on every hash, empty blocks,
// InitChain's genesis check, and the crash rules (replay after a crash between FinalizeBlock and
// Commit, and after Commit).

#include <barrel/block/sender_cache.hpp>
#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/store/store.hpp>

#include "abci/chain_app.hpp"
#include "node_parts.hpp"
#include "pool_fixtures.hpp"
#include "store/testing.hpp"
#include "test_files.hpp"
#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

namespace barrel::abci {
namespace {

using pool::testing::address_of_key;
using pool::testing::key_of;
using pool::testing::signed_tx;
using pool::testing::Spec;
using test::ScratchDir;

constexpr int64_t kTime = 1'700'000'000;

chain::Genesis genesis_from(const std::string& text) {
    auto g = chain::parse_genesis(text);
    if (!g) throw std::runtime_error(g.error());
    return std::move(g).value();
}

/// Keys 1 to 8 funded on chain 1, block gas limit 30M.
const std::string& genesis_text() {
    static const std::string text = pool::testing::funded_genesis(8);
    return text;
}

Address coinbase() {
    Address a;
    a[0] = 0xc0;
    return a;
}

/// What the node hears from the application.
struct Heard {
    struct Checked {
        std::string call;
        uint64_t height;
        size_t transactions;
        size_t senders_cached;
    };
    std::mutex mutex;
    std::vector<seal::Sealed> committed;
    std::vector<std::pair<uint64_t, std::string>> rejected;
    std::vector<Checked> checked;
    std::vector<seal::Dropped> dropped;
    std::vector<std::pair<uint64_t, int32_t>> finalized;

    Observer observer() {
        Observer o;
        o.on_committed = [this](const seal::Sealed& s) {
            std::lock_guard lock{mutex};
            committed.push_back(s);
        };
        o.on_rejected = [this](uint64_t height, std::string_view reason) {
            std::lock_guard lock{mutex};
            rejected.emplace_back(height, std::string{reason});
        };
        o.on_finalized = [this](uint64_t height, int32_t round) {
            std::lock_guard lock{mutex};
            finalized.emplace_back(height, round);
        };
        o.on_checked = [this](std::string_view call, uint64_t height, size_t txs, size_t cached) {
            std::lock_guard lock{mutex};
            checked.push_back(Checked{std::string{call}, height, txs, cached});
        };
        o.on_dropped = [this](const seal::Dropped& d) {
            std::lock_guard lock{mutex};
            dropped.push_back(d);
        };
        return o;
    }
};

/// A node's parts behind the application. `create`: a new datadir from `genesis` (barrel-node
/// init), else the one at `path` reopened. `pool_state`: what the pool checks against, when not
/// the store (a test's lie).
struct AppNode : test::NodeParts {
    AppNode(const std::string& path, const chain::Genesis& genesis, bool create = true,
            ChainConfig config = {.max_proposal_txs = 2500, .coinbase = coinbase()},
            const state::StateReader* pool_state = nullptr)
        : NodeParts{create ? store::Store::init(path, genesis).value()
                           : store::Store::open(path).value(),
                    pool_state},
          app{*store, pipeline, pool, config, heard.observer()} {}

    Heard heard;
    ChainApp app;
};

google::protobuf::Timestamp at(int64_t seconds) {
    google::protobuf::Timestamp t;
    t.set_seconds(seconds);
    t.set_nanos(250'000'000);
    return t;
}

std::string bytes_string(BytesView b) { return std::string{as_chars(b)}; }
Bytes to_bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }
std::string hash_string(const Hash& h) { return bytes_string(h); }

/// CometBFT's block hash of a test's height (any bytes do: the app only keys by it).
std::string cometbft_hash(int64_t height, int round = 0) {
    return "block " + std::to_string(height) + " round " + std::to_string(round);
}

template <class Request>
Request with_txs(int64_t height, const std::vector<Bytes>& txs, const std::string& hash,
                 int64_t time = kTime) {
    Request r;
    r.set_height(height);
    *r.mutable_time() = at(time);
    r.set_hash(hash);
    for (const Bytes& t : txs) r.add_txs(bytes_string(t));
    return r;
}

pb::RequestProcessProposal proposal(int64_t height, const std::vector<Bytes>& txs,
                                    const std::string& hash, int64_t time = kTime) {
    return with_txs<pb::RequestProcessProposal>(height, txs, hash, time);
}

pb::RequestFinalizeBlock decided(int64_t height, const std::vector<Bytes>& txs,
                                 const std::string& hash, int64_t time = kTime) {
    auto r = with_txs<pb::RequestFinalizeBlock>(height, txs, hash, time);
    r.mutable_decided_last_commit()->set_round(2);
    return r;
}

pb::ResponseCheckTx check_tx(ChainApp& app, const Bytes& tx, bool recheck = false) {
    pb::RequestCheckTx r;
    r.set_tx(bytes_string(tx));
    r.set_type(recheck ? pb::RECHECK : pb::NEW);
    auto answer = app.check_tx(r);
    EXPECT_TRUE(answer) << answer.error();
    return answer ? *answer : pb::ResponseCheckTx{};
}

pb::ResponseInfo info(ChainApp& app) {
    auto answer = app.info(pb::RequestInfo{});
    EXPECT_TRUE(answer);
    return answer ? *answer : pb::ResponseInfo{};
}

/// A height as every validator goes through it: ProcessProposal (ACCEPT), FinalizeBlock,
/// Commit. The app hash FinalizeBlock returned.
std::string run_height(ChainApp& app, int64_t height, const std::vector<Bytes>& txs,
                       int64_t time = kTime) {
    const std::string hash = cometbft_hash(height);
    auto processed = app.process_proposal(proposal(height, txs, hash, time));
    EXPECT_TRUE(processed) << processed.error();
    EXPECT_EQ(processed->status(), pb::ResponseProcessProposal::ACCEPT);
    auto finalized = app.finalize_block(decided(height, txs, hash, time));
    EXPECT_TRUE(finalized) << finalized.error();
    auto committed = app.commit(pb::RequestCommit{});
    EXPECT_TRUE(committed) << committed.error();
    return finalized ? finalized->app_hash() : std::string{};
}

std::vector<Bytes> transfers(uint8_t key, uint64_t from_nonce, size_t count) {
    std::vector<Bytes> out;
    for (uint64_t n = from_nonce; n < from_nonce + count; ++n)
        out.push_back(signed_tx(Spec{.key = key, .nonce = n}));
    return out;
}

std::vector<Bytes> concat(std::vector<Bytes> a, const std::vector<Bytes>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/// `raw` with its signature's r set to zero: a signature no key made.
Bytes with_bad_signature(const Bytes& raw) {
    auto t = tx::decode(raw);
    EXPECT_TRUE(t);
    t->r = 0;
    return tx::encode(*t);
}

class AbciApp : public ::testing::Test {
protected:
    ScratchDir dir;
    chain::Genesis genesis = genesis_from(genesis_text());
};

TEST_F(AbciApp, info_reports_the_head_and_its_state_root) {
    AppNode node{dir / "a", genesis};
    const auto r = info(node.app);
    EXPECT_EQ(r.data(), "barrel");
    EXPECT_EQ(r.app_version(), kAppVersion);
    EXPECT_EQ(r.last_block_height(), 0);
    EXPECT_EQ(r.last_block_app_hash(), hash_string(chain::state_root(genesis)));

    AppNode versioned{dir / "b", genesis, true,
                      ChainConfig{.coinbase = coinbase(), .version = "barrel/v0.1.0"}};
    EXPECT_EQ(info(versioned.app).version(), "barrel/v0.1.0");
}

TEST_F(AbciApp, init_chain_accepts_the_datadirs_genesis_and_answers_its_state_root) {
    AppNode node{dir / "a", genesis};
    pb::RequestInitChain r;
    r.set_initial_height(1);
    r.set_chain_id("barrel-test");
    // The document as another writer spells it (init's file, not the store's own rewrite).
    r.set_app_state_bytes(genesis_text());
    auto answer = node.app.init_chain(r);
    ASSERT_TRUE(answer) << answer.error();
    EXPECT_EQ(answer->app_hash(), hash_string(chain::state_root(genesis)));
    EXPECT_EQ(answer->validators_size(), 0) << "CometBFT's validators are kept";
    EXPECT_FALSE(answer->has_consensus_params());
}

TEST_F(AbciApp, init_chain_refuses_another_genesis_naming_both) {
    AppNode node{dir / "a", genesis};
    chain::Genesis other = genesis;
    other.config.chain_id = 7;
    pb::RequestInitChain r;
    r.set_initial_height(1);
    r.set_app_state_bytes(chain::to_json_text(other));
    auto answer = node.app.init_chain(r);
    ASSERT_FALSE(answer);
    const Hash ours = block::hash_of(chain::genesis_header(genesis));
    const Hash theirs = block::hash_of(chain::genesis_header(other));
    const std::string root = to_hex(chain::state_root(genesis));
    EXPECT_EQ(answer.error(), "InitChain: app_state is another chain's genesis (block 0 " +
                                  to_hex(theirs) + ", state root " + root +
                                  ", chain id 7) than the datadir's (block 0 " + to_hex(ours) +
                                  ", state root " + root +
                                  ", chain id 1): make the datadir with barrel-node init from the "
                                  "same genesis file");

    // Another allocation: another state root.
    r.set_app_state_bytes(pool::testing::funded_genesis(3));
    answer = node.app.init_chain(r);
    ASSERT_FALSE(answer);
    EXPECT_NE(answer.error().find("state root " + to_hex(chain::state_root(genesis_from(
                                                      pool::testing::funded_genesis(3))))),
              std::string::npos)
        << answer.error();

    r.set_app_state_bytes("{\"chain_id\": 1}");
    answer = node.app.init_chain(r);
    ASSERT_FALSE(answer);
    EXPECT_EQ(answer.error(), "InitChain: app_state is not a barrel genesis: gas_limit: missing");

    r.set_app_state_bytes(genesis_text());
    r.set_initial_height(2);
    answer = node.app.init_chain(r);
    ASSERT_FALSE(answer);
    EXPECT_EQ(answer.error(),
              "InitChain: initial_height 2: barrel's block 1 follows its genesis block 0, so "
              "the CometBFT genesis must have initial_height 1");
    r.set_initial_height(0);
    EXPECT_FALSE(node.app.init_chain(r));
}

TEST_F(AbciApp, init_chain_on_a_datadir_past_its_genesis_is_refused) {
    AppNode node{dir / "a", genesis};
    run_height(node.app, 1, {});
    pb::RequestInitChain r;
    r.set_initial_height(1);
    r.set_app_state_bytes(genesis_text());
    auto answer = node.app.init_chain(r);
    ASSERT_FALSE(answer);
    EXPECT_EQ(answer.error(),
              "InitChain: the datadir is at block 1, not at its genesis (CometBFT asks for "
              "InitChain only at height 0)");
}

TEST_F(AbciApp, check_tx_admits_to_the_pool_and_says_why_it_refuses) {
    AppNode node{dir / "a", genesis};
    const Bytes tx = signed_tx(Spec{.key = 1, .nonce = 0, .gas = 30'000});
    auto r = check_tx(node.app, tx);
    EXPECT_EQ(r.code(), 0u) << r.log();
    EXPECT_EQ(r.gas_wanted(), 30'000);
    EXPECT_EQ(node.pool.status().pending, 1u);
    // The same again: already known, still 0.
    r = check_tx(node.app, tx);
    EXPECT_EQ(r.code(), 0u) << r.log();
    EXPECT_EQ(r.log(), "");
    EXPECT_EQ(r.gas_wanted(), 30'000);

    // A transaction admitted over JSON-RPC (straight into the pool) comes back through
    // CometBFT's mempool: already known, 0.
    const Bytes sent = signed_tx(Spec{.key = 3});
    ASSERT_TRUE(node.pool.admit_one(sent));
    EXPECT_EQ(check_tx(node.app, sent).code(), 0u);

    // Refused: the pool's code and go-ethereum's message, as a pool of its own gives it.
    pool::Pool reference{pool::Config{.chain_id = 1, .block_gas_limit = genesis.gas_limit},
                         *node.store, nullptr};
    const struct {
        Bytes tx;
        pool::RejectCode code;
        uint32_t number;
        std::string starts;
    } refused[] = {
        {Bytes{0x01}, pool::RejectCode::malformed, 1, ""},
        {with_bad_signature(signed_tx(Spec{.key = 2})), pool::RejectCode::invalid_sender, 4,
         "invalid sender"},
        {signed_tx(Spec{.key = 2, .gas = 30'000'001}), pool::RejectCode::exceeds_block_gas_limit, 5,
         "exceeds block gas limit"},
        {signed_tx(Spec{.key = 2, .value = u256{1} << 200}), pool::RejectCode::insufficient_funds,
         10, "insufficient funds for gas * price + value"},
    };
    for (const auto& c : refused) {
        SCOPED_TRACE(std::string{pool::to_string(c.code)});
        r = check_tx(node.app, c.tx);
        EXPECT_EQ(r.code(), check_tx_code(c.code));
        EXPECT_EQ(r.code(), c.number);
        const auto expected = reference.admit_one(c.tx);
        ASSERT_FALSE(expected);
        EXPECT_EQ(expected.error().code, c.code);
        EXPECT_EQ(r.log(), expected.error().message);
        EXPECT_TRUE(r.log().starts_with(c.starts)) << r.log();
        EXPECT_FALSE(r.log().empty());
        EXPECT_EQ(r.gas_wanted(), 0);
    }
    // The codes follow the enum.
    EXPECT_EQ(check_tx_code(pool::RejectCode::state_unreadable), 14u);
    EXPECT_EQ(node.pool.status().pending, 2u);
}

TEST_F(AbciApp, recheck_keeps_what_the_pool_holds_and_drops_the_rest_without_recovering) {
    AppNode node{dir / "a", genesis};
    const std::vector<Bytes> txs = transfers(1, 0, 3);
    for (const Bytes& t : txs) EXPECT_EQ(check_tx(node.app, t).code(), 0u);
    // Block 1 includes the first two.
    run_height(node.app, 1, {txs[0], txs[1]});
    const auto before = node.cache.stats();
    auto r = check_tx(node.app, txs[0], true);
    EXPECT_EQ(r.code(), kNoLongerPooled);
    EXPECT_EQ(r.log(), "no longer valid: the pool no longer holds it");
    r = check_tx(node.app, txs[2], true);
    EXPECT_EQ(r.code(), 0u) << r.log();
    EXPECT_EQ(r.gas_wanted(), 21'000);
    // A valid transaction the pool never had: a recheck does not admit it.
    r = check_tx(node.app, signed_tx(Spec{.key = 3}), true);
    EXPECT_EQ(r.code(), kNoLongerPooled);
    EXPECT_EQ(node.pool.status().pending, 1u);
    // Nothing was recovered, nothing cached.
    const auto after = node.cache.stats();
    EXPECT_EQ(after.insertions, before.insertions);
    EXPECT_EQ(after.misses, before.misses);
    // And as a new transaction, the committed one is refused by its nonce.
    r = check_tx(node.app, txs[0]);
    EXPECT_EQ(r.code(), check_tx_code(pool::RejectCode::nonce_too_low));
    EXPECT_TRUE(r.log().starts_with("nonce too low")) << r.log();
}

TEST_F(AbciApp, a_run_of_check_tx_is_answered_as_the_same_requests_one_at_a_time) {
    // Two nodes in the same state: one asked each request in turn, the other the whole run in
    // one check_txs (as the server hands over the CheckTx it has read and not yet answered).
    // Twice: as it is, a run admitted one by one; with 20 more transfers to admit at its start,
    // a run admitted as one parallel batch.
    for (const size_t padding : {size_t{0}, size_t{20}}) {
        SCOPED_TRACE("padding " + std::to_string(padding));
        const std::string at = std::to_string(padding);
        AppNode one{dir / ("one" + at), genesis};
        AppNode run{dir / ("run" + at), genesis};
        const std::vector<Bytes> committed = transfers(1, 0, 2);
        const std::vector<Bytes> pooled = transfers(2, 0, 2);
        // Pooled too, each with a replacement (same nonce, fees bumped past the pool's 10 %)
        // that the run carries before it (sender 6) or after it (sender 7).
        const Bytes replaced_before = signed_tx(Spec{.key = 6});
        const Bytes replaced_after = signed_tx(Spec{.key = 7});
        const Bytes replacing_6 = signed_tx(Spec{.key = 6, .fee_cap = 20, .tip = 4});
        const Bytes replacing_7 = signed_tx(Spec{.key = 7, .fee_cap = 20, .tip = 4});
        for (AppNode* node : {&one, &run}) {
            for (const Bytes& t : concat(committed, pooled))
                EXPECT_EQ(check_tx(node->app, t).code(), 0u);
            EXPECT_EQ(check_tx(node->app, replaced_before).code(), 0u);
            EXPECT_EQ(check_tx(node->app, replaced_after).code(), 0u);
            run_height(node->app, 1, committed);
        }
        const Bytes fresh = signed_tx(Spec{.key = 3, .nonce = 0});
        struct Request {
            Bytes tx;
            bool recheck{false};
            uint32_t code{0};  // the answer the oracle gives, spelled out
        };
        const uint32_t underpriced = check_tx_code(pool::RejectCode::replacement_underpriced);
        std::vector<Request> requests = {
            {pooled[0], true},                        // a recheck of what the pool holds: kept
            {committed[0], true, kNoLongerPooled},    // a recheck of what a block took: dropped
            {fresh},                                  // admitted
            {signed_tx(Spec{.key = 3, .nonce = 1})},  // its successor, checked after it
            {fresh},                                  // the same again in the run: known, 0
            {pooled[1]},                              // pooled before the run: known, 0
            {committed[1], false, check_tx_code(pool::RejectCode::nonce_too_low)},
            {Bytes{0x01}, false, check_tx_code(pool::RejectCode::malformed)},
            {with_bad_signature(signed_tx(Spec{.key = 4})), false,
             check_tx_code(pool::RejectCode::invalid_sender)},
            {signed_tx(Spec{.key = 4, .nonce = 5})},  // queued behind a nonce gap
            // A recheck of what the pool never had: not admitted.
            {signed_tx(Spec{.key = 5}), true, kNoLongerPooled},
            {replacing_6},                          // replaces a pooled one...
            {replaced_before, false, underpriced},  // ...which, asked after it, is underpriced
            {replaced_after},  // pooled, asked after a fresh one: already known, 0
            {replacing_7},     // replaces it
            {fresh, true},     // a recheck after the run's admissions: pooled, 0
        };
        for (const Bytes& t : transfers(8, 0, padding))
            requests.insert(requests.begin() + 2, Request{t});
        std::vector<pb::RequestCheckTx> messages(requests.size());
        std::vector<const pb::RequestCheckTx*> pointers;
        for (size_t i = 0; i < requests.size(); ++i) {
            messages[i].set_tx(bytes_string(requests[i].tx));
            messages[i].set_type(requests[i].recheck ? pb::RECHECK : pb::NEW);
            pointers.push_back(&messages[i]);
        }
        const auto answers = run.app.check_txs(pointers);
        ASSERT_EQ(answers.size(), requests.size());
        for (size_t i = 0; i < requests.size(); ++i) {
            SCOPED_TRACE("request " + std::to_string(i));
            const pb::ResponseCheckTx expected =
                check_tx(one.app, requests[i].tx, requests[i].recheck);
            ASSERT_TRUE(answers[i]) << answers[i].error();
            EXPECT_EQ(answers[i]->code(), expected.code());
            EXPECT_EQ(answers[i]->log(), expected.log());
            EXPECT_EQ(answers[i]->gas_wanted(), expected.gas_wanted());
            EXPECT_EQ(answers[i]->code(), requests[i].code);
        }
        EXPECT_EQ(run.pool.status().pending, one.pool.status().pending);
        EXPECT_EQ(run.pool.status().queued, one.pool.status().queued);
        // Both of `pooled`, fresh and its successor, the two replacements, and the padding.
        EXPECT_EQ(run.pool.status().pending, 6u + padding);
        EXPECT_EQ(run.pool.status().queued, 1u);
        EXPECT_TRUE(run.app.check_txs({}).empty());
    }
}

TEST_F(AbciApp, a_height_from_proposal_to_commit) {
    AppNode node{dir / "a", genesis};
    const std::vector<Bytes> txs = concat(transfers(1, 0, 3), transfers(2, 0, 2));
    for (const Bytes& t : txs) EXPECT_EQ(check_tx(node.app, t).code(), 0u);

    pb::RequestPrepareProposal prepare;
    prepare.set_height(1);
    *prepare.mutable_time() = at(kTime);
    prepare.set_max_tx_bytes(1 << 20);
    prepare.add_txs("CometBFT's own list is ignored");
    auto prepared = node.app.prepare_proposal(prepare);
    ASSERT_TRUE(prepared) << prepared.error();
    ASSERT_EQ(prepared->txs_size(), 5);
    // Nothing is left taken: the proposal may never be decided.
    EXPECT_EQ(node.pool.ready(), 5u);
    std::vector<Bytes> proposed;
    for (const std::string& t : prepared->txs()) proposed.emplace_back(t.begin(), t.end());
    // The pool's order: each sender's by nonce.
    std::map<Bytes, size_t> position;
    for (size_t i = 0; i < proposed.size(); ++i) position[proposed[i]] = i;
    EXPECT_LT(position.at(txs[0]), position.at(txs[1]));
    EXPECT_LT(position.at(txs[1]), position.at(txs[2]));
    EXPECT_LT(position.at(txs[3]), position.at(txs[4]));

    // Every sender was known: CheckTx had recovered each once.
    ASSERT_EQ(node.heard.checked.size(), 1u);
    EXPECT_EQ(node.heard.checked[0].call, "prepare_proposal");
    EXPECT_EQ(node.heard.checked[0].height, 1u);
    EXPECT_EQ(node.heard.checked[0].transactions, 5u);
    EXPECT_EQ(node.heard.checked[0].senders_cached, 5u);

    // Another block of the same transactions (another time: another round's) is checked.
    auto other = node.app.process_proposal(proposal(1, proposed, cometbft_hash(1, 1), kTime + 1));
    ASSERT_TRUE(other) << other.error();
    EXPECT_EQ(other->status(), pb::ResponseProcessProposal::ACCEPT);
    ASSERT_EQ(node.heard.checked.size(), 2u);
    EXPECT_EQ(node.heard.checked[1].call, "process_proposal");
    EXPECT_EQ(node.heard.checked[1].senders_cached, 5u);
    // Its own proposal comes back: PrepareProposal checked it, it is not executed again.
    const std::string hash = cometbft_hash(1);
    auto processed = node.app.process_proposal(proposal(1, proposed, hash));
    ASSERT_TRUE(processed) << processed.error();
    EXPECT_EQ(processed->status(), pb::ResponseProcessProposal::ACCEPT);
    EXPECT_TRUE(node.heard.rejected.empty());
    EXPECT_EQ(node.heard.checked.size(), 2u);

    auto finalized = node.app.finalize_block(decided(1, proposed, hash));
    ASSERT_TRUE(finalized) << finalized.error();
    ASSERT_EQ(finalized->tx_results_size(), 5);
    for (const auto& result : finalized->tx_results()) {
        EXPECT_EQ(result.code(), 0u);
        EXPECT_EQ(result.gas_used(), 21'000);
        EXPECT_EQ(result.gas_wanted(), 21'000);
    }
    EXPECT_EQ(finalized->app_hash().size(), 32u);
    EXPECT_NE(finalized->app_hash(), hash_string(chain::state_root(genesis)));
    // The kept outcome was used: no check at FinalizeBlock.
    EXPECT_EQ(node.heard.checked.size(), 2u);
    // Nothing persisted yet.
    EXPECT_EQ(node.store->head().number, 0u);
    EXPECT_EQ(node.store->consensus_hash(1).value(), std::nullopt);
    EXPECT_EQ(info(node.app).last_block_height(), 0);
    EXPECT_TRUE(node.heard.committed.empty());

    auto committed = node.app.commit(pb::RequestCommit{});
    ASSERT_TRUE(committed) << committed.error();
    EXPECT_EQ(committed->retain_height(), 0);
    EXPECT_EQ(node.store->head().number, 1u);
    EXPECT_EQ(hash_string(node.store->head().state_root), finalized->app_hash());
    const auto r = info(node.app);
    EXPECT_EQ(r.last_block_height(), 1);
    EXPECT_EQ(r.last_block_app_hash(), finalized->app_hash());
    // The header: the height, the consensus time in seconds, the chain's coinbase.
    const auto header = node.store->header_record(1).value().value();
    EXPECT_EQ(header.header.timestamp, static_cast<uint64_t>(kTime));
    EXPECT_EQ(header.header.coinbase, coinbase());
    EXPECT_EQ(header.header.gas_limit, genesis.gas_limit);
    EXPECT_EQ(header.transaction_count, 5u);
    // CometBFT's hash of the block beside barrel's, written by the same commit; block 0 has
    // none (no consensus engine decided it).
    EXPECT_EQ(node.store->consensus_hash(1).value(), to_bytes(hash));
    EXPECT_EQ(node.store->consensus_hash(0).value(), std::nullopt);
    EXPECT_EQ(node.store->snapshot().value()->consensus_hash(1).value(), to_bytes(hash));
    // The pool let them go; the node heard of the block as of a sealed one.
    EXPECT_EQ(node.pool.status().pending, 0u);
    ASSERT_EQ(node.heard.committed.size(), 1u);
    const seal::Sealed& s = node.heard.committed[0];
    EXPECT_EQ(s.result.number, 1u);
    EXPECT_EQ(s.result.hash, node.store->head().hash);
    EXPECT_EQ(s.result.transactions, 5u);
    EXPECT_EQ(s.pool.pending, 0u);
    ASSERT_EQ(s.transactions.size(), 5u);
    for (size_t i = 0; i < proposed.size(); ++i)
        EXPECT_EQ(s.transactions[i], tx::hash_of(proposed[i]));
    for (const Bytes& t : txs) EXPECT_TRUE(node.store->receipt(tx::hash_of(t)).value());
}

TEST_F(AbciApp, a_validator_that_heard_the_transactions_by_gossip_recovers_no_sender_again) {
    // The proposer took them over JSON-RPC (its pool); the other validator heard them through
    // CometBFT's mempool (CheckTx), each sender recovered there once.
    AppNode proposer{dir / "a", genesis};
    AppNode validator{dir / "b", genesis};
    const std::vector<Bytes> txs = concat(transfers(3, 0, 4), transfers(4, 0, 4));
    for (const Bytes& t : txs) ASSERT_TRUE(proposer.pool.admit_one(t));
    for (const Bytes& t : txs) EXPECT_EQ(check_tx(validator.app, t).code(), 0u);
    const auto recovered = validator.cache.stats();
    EXPECT_EQ(recovered.insertions, txs.size());

    pb::RequestPrepareProposal prepare;
    prepare.set_height(1);
    *prepare.mutable_time() = at(kTime);
    prepare.set_max_tx_bytes(1 << 20);
    auto prepared = proposer.app.prepare_proposal(prepare);
    ASSERT_TRUE(prepared);
    std::vector<Bytes> proposed;
    for (const std::string& t : prepared->txs()) proposed.emplace_back(t.begin(), t.end());
    ASSERT_EQ(proposed.size(), txs.size());
    EXPECT_EQ(run_height(validator.app, 1, proposed), run_height(proposer.app, 1, proposed));
    ASSERT_EQ(validator.heard.checked.size(), 1u);
    EXPECT_EQ(validator.heard.checked[0].transactions, txs.size());
    EXPECT_EQ(validator.heard.checked[0].senders_cached, txs.size());
    EXPECT_EQ(validator.cache.stats().insertions, recovered.insertions) << "nothing recovered";
}

TEST_F(AbciApp, prepare_proposal_stays_within_max_tx_bytes_and_the_block_gas_limit) {
    // A block gas limit of three transfers.
    std::string text = genesis_text();
    text.replace(text.find("30000000"), 8, "63000");
    const chain::Genesis small = genesis_from(text);
    AppNode node{dir / "a", small};
    const std::vector<Bytes> txs = concat(transfers(1, 0, 3), transfers(2, 0, 3));
    for (const Bytes& t : txs) EXPECT_EQ(check_tx(node.app, t).code(), 0u);

    pb::RequestPrepareProposal prepare;
    prepare.set_height(1);
    *prepare.mutable_time() = at(kTime);
    prepare.set_max_tx_bytes(1 << 20);
    auto prepared = node.app.prepare_proposal(prepare);
    ASSERT_TRUE(prepared) << prepared.error();
    EXPECT_EQ(prepared->txs_size(), 3) << "the gas limit";

    // CometBFT counts each transaction as its protobuf field: a key byte, a varint length, the
    // bytes (types.ComputeProtoSizeForTxs). Exactly two fit; one byte less, only one.
    const size_t each = 1 + 1 + txs[0].size();
    ASSERT_LT(txs[0].size(), 128u);
    for (const Bytes& t : txs) ASSERT_EQ(t.size(), txs[0].size());
    prepare.set_max_tx_bytes(static_cast<int64_t>(2 * each));
    prepared = node.app.prepare_proposal(prepare);
    ASSERT_TRUE(prepared);
    EXPECT_EQ(prepared->txs_size(), 2);
    prepare.set_max_tx_bytes(static_cast<int64_t>(2 * each - 1));
    prepared = node.app.prepare_proposal(prepare);
    ASSERT_TRUE(prepared);
    EXPECT_EQ(prepared->txs_size(), 1);
    prepare.set_max_tx_bytes(0);
    prepared = node.app.prepare_proposal(prepare);
    ASSERT_TRUE(prepared);
    EXPECT_EQ(prepared->txs_size(), 0);
    // Nothing left taken by any of them.
    EXPECT_EQ(node.pool.ready(), txs.size());
    EXPECT_EQ(node.pool.invariant_violation(), "");
    // The proposal is a valid block.
    std::vector<Bytes> proposed;
    prepare.set_max_tx_bytes(1 << 20);
    prepared = node.app.prepare_proposal(prepare);
    for (const std::string& t : prepared->txs()) proposed.emplace_back(t.begin(), t.end());
    run_height(node.app, 1, proposed);
    EXPECT_EQ(node.store->head().number, 1u);
    EXPECT_EQ(node.pool.status().pending, 3u);
}

TEST_F(AbciApp, prepare_proposal_respects_max_proposal_txs) {
    AppNode node{dir / "a", genesis, true,
                 ChainConfig{.max_proposal_txs = 4, .coinbase = coinbase()}};
    for (const Bytes& t : transfers(1, 0, 6)) EXPECT_EQ(check_tx(node.app, t).code(), 0u);
    pb::RequestPrepareProposal prepare;
    prepare.set_height(1);
    *prepare.mutable_time() = at(kTime);
    prepare.set_max_tx_bytes(1 << 20);
    auto prepared = node.app.prepare_proposal(prepare);
    ASSERT_TRUE(prepared);
    EXPECT_EQ(prepared->txs_size(), 4);
    EXPECT_EQ(node.pool.ready(), 6u);
}

TEST_F(AbciApp, process_proposal_accepts_more_transactions_than_this_node_would_propose) {
    // max_proposal_txs is a node's own choice for its proposals: a block of another proposer
    // that the chain's rules allow is accepted, or nodes with other settings would disagree.
    AppNode node{dir / "a", genesis, true,
                 ChainConfig{.max_proposal_txs = 4, .coinbase = coinbase()}};
    auto r = node.app.process_proposal(proposal(1, transfers(1, 0, 5), "five"));
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->status(), pb::ResponseProcessProposal::ACCEPT);
    EXPECT_TRUE(node.heard.rejected.empty());
}

TEST_F(AbciApp, prepare_proposal_drops_a_transaction_its_block_fails_on_and_builds_it_again) {
    // The pool checks against a state that says key 2 is rich; the chain's does not: its
    // transaction fails execution, which the pool could not foresee.
    state::MemoryState lying;
    for (uint8_t k = 1; k <= 8; ++k)
        lying.set_account(address_of_key(k), state::Account{0, u256{1'000'000'000'000}});
    lying.set_account(address_of_key(2), state::Account{0, u256{1} << 100});
    AppNode node{dir / "a", genesis, true,
                 ChainConfig{.max_proposal_txs = 2500, .coinbase = coinbase()}, &lying};
    const Bytes rich = signed_tx(Spec{.key = 2, .tip = 5, .value = u256{1} << 90});
    const std::vector<Bytes> fine = transfers(1, 0, 2);
    EXPECT_EQ(check_tx(node.app, rich).code(), 0u);
    for (const Bytes& t : fine) EXPECT_EQ(check_tx(node.app, t).code(), 0u);

    pb::RequestPrepareProposal prepare;
    prepare.set_height(1);
    *prepare.mutable_time() = at(kTime);
    prepare.set_max_tx_bytes(1 << 20);
    auto prepared = node.app.prepare_proposal(prepare);
    ASSERT_TRUE(prepared) << prepared.error();
    ASSERT_EQ(prepared->txs_size(), 2);
    EXPECT_EQ(prepared->txs(0), bytes_string(fine[0]));
    EXPECT_EQ(prepared->txs(1), bytes_string(fine[1]));
    ASSERT_EQ(node.heard.dropped.size(), 1u);
    EXPECT_EQ(node.heard.dropped[0].transaction, tx::hash_of(rich));
    EXPECT_EQ(node.heard.dropped[0].reason, "insufficient_balance");
    EXPECT_FALSE(node.pool.find(tx::hash_of(rich), pool::testing::kLatest));
    EXPECT_EQ(node.pool.ready(), 2u);
}

TEST_F(AbciApp, process_proposal_rejects_what_barrel_would_refuse_and_says_why) {
    AppNode node{dir / "a", genesis, true,
                 ChainConfig{.max_proposal_txs = 4, .coinbase = coinbase()}};
    const std::vector<Bytes> good = transfers(1, 0, 2);
    const Bytes over_gas = signed_tx(Spec{.key = 2, .gas = 30'000'001});
    const struct Case {
        std::string name;
        int64_t height;
        std::vector<Bytes> txs;
        std::string reason;
    } cases[] = {
        {"bad signature",
         1,
         {good[0], with_bad_signature(signed_tx(Spec{.key = 2}))},
         "block 1: verify: transaction 1: invalid_tx: r: invalid_signature"},
        {"wrong nonce",
         1,
         {good[0], signed_tx(Spec{.key = 2, .nonce = 1})},
         "block 1: execute: transaction 1: nonce_mismatch"},
        {"duplicate transaction",
         1,
         {good[0], good[1], good[1]},
         "block 1: execute: transaction 2: nonce_mismatch"},
        {"over the block gas limit",
         1,
         {good[0], over_gas},
         "block 1: execute: transaction 1: block_gas_exceeded"},
        {"over the block gas limit together", 1,
         concat(transfers(3, 0, 1), {signed_tx(Spec{.key = 4, .gas = 29'990'000})}),
         "block 1: execute: transaction 1: block_gas_exceeded"},
        {"malformed list entry",
         1,
         {good[0], Bytes{0x01}},
         "block 1: decode: transaction 1: malformed_tx: envelope: input_too_short"},
        {"empty list entry", 1, {good[0], Bytes{}}, "block 1: transaction 1: empty"},
        {"wrong height", 2, good, "block 2: link: not a child of the head (block 0)"},
        {"height 0", 0, good, "block 0: link: not a child of the head (block 0)"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        node.heard.rejected.clear();
        const std::string hash = "rejected " + c.name;
        auto r = node.app.process_proposal(proposal(c.height, c.txs, hash));
        ASSERT_TRUE(r) << r.error();
        EXPECT_EQ(r->status(), pb::ResponseProcessProposal::REJECT);
        ASSERT_EQ(node.heard.rejected.size(), 1u);
        EXPECT_EQ(node.heard.rejected[0].first, static_cast<uint64_t>(c.height));
        EXPECT_EQ(node.heard.rejected[0].second, c.reason);
        // Not kept: FinalizeBlock of it checks again, and a decided block barrel cannot
        // execute is an error (CometBFT halts).
        auto finalized = node.app.finalize_block(decided(c.height, c.txs, hash));
        ASSERT_FALSE(finalized);
        EXPECT_EQ(finalized.error(),
                  "FinalizeBlock: the decided block cannot be executed: " + c.reason);
        EXPECT_FALSE(node.app.commit(pb::RequestCommit{}));
    }
    EXPECT_EQ(node.store->head().number, 0u);
    // The good block is still accepted after all that.
    run_height(node.app, 1, good);
    EXPECT_EQ(node.store->head().number, 1u);
}

TEST_F(AbciApp, two_nodes_fed_the_same_requests_agree_on_every_hash) {
    AppNode a{dir / "a", genesis};
    AppNode b{dir / "b", genesis};
    const std::vector<std::vector<Bytes>> heights = {
        concat(transfers(1, 0, 3), transfers(2, 0, 2)),
        {},
        concat(transfers(1, 3, 2), transfers(5, 0, 1)),
    };
    for (size_t i = 0; i < heights.size(); ++i) {
        const auto height = static_cast<int64_t>(i + 1);
        // Only one of them heard the transactions before: the outcome cannot depend on it.
        for (const Bytes& t : heights[i]) check_tx(a.app, t);
        const std::string hash_a = run_height(a.app, height, heights[i], kTime + height);
        const std::string hash_b = run_height(b.app, height, heights[i], kTime + height);
        EXPECT_EQ(hash_a, hash_b);
        EXPECT_EQ(a.store->head().hash, b.store->head().hash);
        EXPECT_EQ(a.store->head().state_root, b.store->head().state_root);
    }
    EXPECT_EQ(a.store->head().number, 3u);
    for (uint64_t n = 1; n <= 3; ++n)
        EXPECT_EQ(a.store->raw_block(n).value().value(), b.store->raw_block(n).value().value());
}

TEST_F(AbciApp, an_empty_block_is_stored_and_keeps_the_parents_state_root) {
    AppNode node{dir / "a", genesis};
    const std::string first = run_height(node.app, 1, transfers(1, 0, 1));
    const Hash head1 = node.store->head().hash;
    const std::string empty = run_height(node.app, 2, {});
    EXPECT_EQ(empty, first);
    EXPECT_EQ(node.store->head().number, 2u);
    EXPECT_NE(node.store->head().hash, head1);
    EXPECT_EQ(hash_string(node.store->head().state_root), first);
    const auto header = node.store->header_record(2).value().value();
    EXPECT_EQ(header.transaction_count, 0u);
    EXPECT_EQ(header.header.parent_hash, head1);
    EXPECT_EQ(info(node.app).last_block_app_hash(), first);
    ASSERT_EQ(node.heard.committed.size(), 2u);
    EXPECT_EQ(node.heard.committed[1].result.transactions, 0u);
}

TEST_F(AbciApp, several_rounds_of_a_height_keep_their_outcomes_until_commit) {
    AppNode node{dir / "a", genesis};
    const std::vector<Bytes> round0 = transfers(1, 0, 1);
    const std::vector<Bytes> round1 = transfers(2, 0, 2);
    for (const auto& [txs, round] : {std::pair{round0, 0}, std::pair{round1, 1}}) {
        auto r = node.app.process_proposal(proposal(1, txs, cometbft_hash(1, round)));
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status(), pb::ResponseProcessProposal::ACCEPT);
    }
    // Round 1's block is decided; its kept outcome is used (no check again).
    const size_t checks = node.heard.checked.size();
    auto finalized = node.app.finalize_block(decided(1, round1, cometbft_hash(1, 1)));
    ASSERT_TRUE(finalized);
    EXPECT_EQ(node.heard.checked.size(), checks);
    EXPECT_EQ(finalized->tx_results_size(), 2);
    ASSERT_TRUE(node.app.commit(pb::RequestCommit{}));
    EXPECT_EQ(node.store->header_record(1).value().value().transaction_count, 2u);
    // Round 0's outcome left at Commit (it was executed on genesis): decided at height 2 under
    // the same hash, its block is checked afresh on block 1 (key 1's nonce 0 is still free).
    auto again = node.app.finalize_block(decided(2, round0, cometbft_hash(1, 0)));
    ASSERT_TRUE(again) << again.error();
    EXPECT_EQ(node.heard.checked.back().call, "finalize_block");
    EXPECT_EQ(node.heard.checked.back().height, 2u);
    ASSERT_TRUE(node.app.commit(pb::RequestCommit{}));
    EXPECT_EQ(node.store->head().number, 2u);
    // FinalizeBlock reports the round of the height before it.
    ASSERT_EQ(node.heard.finalized.size(), 1u);
    EXPECT_EQ(node.heard.finalized[0], (std::pair<uint64_t, int32_t>{1, 2}));
}

TEST_F(AbciApp, a_crash_between_finalize_block_and_commit_is_replayed_to_the_same_hash) {
    const std::vector<Bytes> block1 = transfers(1, 0, 2);
    const std::vector<Bytes> block2 = concat(transfers(1, 2, 1), transfers(2, 0, 2));
    std::string app_hash;
    {
        AppNode node{dir / "a", genesis};
        run_height(node.app, 1, block1);
        for (const Bytes& t : block2) check_tx(node.app, t);
        ASSERT_TRUE(node.app.process_proposal(proposal(2, block2, cometbft_hash(2))));
        auto finalized = node.app.finalize_block(decided(2, block2, cometbft_hash(2)));
        ASSERT_TRUE(finalized);
        app_hash = finalized->app_hash();
        // Nothing of height 2 is stored before Commit, not even CometBFT's hash of it.
        EXPECT_EQ(node.store->consensus_hash(2).value(), std::nullopt);
        // The process dies here: no Commit.
    }
    {
        AppNode node{dir / "a", genesis, false};
        EXPECT_EQ(node.store->consensus_hash(1).value(), to_bytes(cometbft_hash(1)));
        EXPECT_EQ(node.store->consensus_hash(2).value(), std::nullopt);
        const auto r = info(node.app);
        EXPECT_EQ(r.last_block_height(), 1);
        EXPECT_EQ(r.last_block_app_hash(),
                  hash_string(node.store->header_record(1).value().value().header.state_root));
        // CometBFT's handshake replays height 2: FinalizeBlock without ProcessProposal.
        auto finalized = node.app.finalize_block(decided(2, block2, cometbft_hash(2)));
        ASSERT_TRUE(finalized) << finalized.error();
        EXPECT_EQ(finalized->app_hash(), app_hash);
        ASSERT_TRUE(node.app.commit(pb::RequestCommit{}));
        EXPECT_EQ(info(node.app).last_block_height(), 2);
        EXPECT_EQ(info(node.app).last_block_app_hash(), app_hash);
        EXPECT_EQ(node.store->consensus_hash(2).value(), to_bytes(cometbft_hash(2)));
    }
    {
        // A crash after Commit: the block is there.
        AppNode node{dir / "a", genesis, false};
        EXPECT_EQ(info(node.app).last_block_height(), 2);
        EXPECT_EQ(info(node.app).last_block_app_hash(), app_hash);
        run_height(node.app, 3, transfers(3, 0, 1));
        EXPECT_EQ(node.store->head().number, 3u);
    }
}

TEST_F(AbciApp, commit_without_a_finalized_block_is_an_error) {
    AppNode node{dir / "a", genesis};
    auto r = node.app.commit(pb::RequestCommit{});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "Commit: no block was finalized");
    run_height(node.app, 1, {});
    r = node.app.commit(pb::RequestCommit{});
    ASSERT_FALSE(r) << "the finalized block was committed once";
    EXPECT_EQ(node.store->head().number, 1u);
}

// The store fails at Commit (a full disk): an error, which CometBFT stops on; nothing changed
// (head, pool, observers), and the finalized block is still there for a Commit once space
// returns.
TEST_F(AbciApp, a_commit_the_store_fails_is_an_error_and_changes_nothing) {
    store::testing::FullDisk disk{std::numeric_limits<uint64_t>::max()};
    AppNode node{dir / "a", genesis};
    const std::vector<Bytes> txs = transfers(1, 0, 2);
    for (const Bytes& t : txs) EXPECT_EQ(check_tx(node.app, t).code(), 0u);
    ASSERT_TRUE(node.app.process_proposal(proposal(1, txs, cometbft_hash(1))));
    auto finalized = node.app.finalize_block(decided(1, txs, cometbft_hash(1)));
    ASSERT_TRUE(finalized);
    disk.set_budget(disk.written());
    auto r = node.app.commit(pb::RequestCommit{});
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().starts_with("Commit: block 1: commit: ")) << r.error();
    EXPECT_EQ(node.store->head().number, 0u);
    EXPECT_EQ(info(node.app).last_block_height(), 0);
    EXPECT_EQ(node.pool.status().pending, 2u);
    EXPECT_TRUE(node.heard.committed.empty());

    disk.set_budget(std::numeric_limits<uint64_t>::max());
    r = node.app.commit(pb::RequestCommit{});
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(node.store->head().number, 1u);
    EXPECT_EQ(info(node.app).last_block_app_hash(), finalized->app_hash());
    EXPECT_EQ(node.pool.status().pending, 0u);
    EXPECT_EQ(node.heard.committed.size(), 1u);
}

TEST_F(AbciApp, votes_snapshots_and_queries) {
    AppNode node{dir / "a", genesis};
    auto extended = node.app.extend_vote(pb::RequestExtendVote{});
    ASSERT_TRUE(extended);
    EXPECT_TRUE(extended->vote_extension().empty());
    pb::RequestVerifyVoteExtension verify;
    auto verified = node.app.verify_vote_extension(verify);
    ASSERT_TRUE(verified);
    EXPECT_EQ(verified->status(), pb::ResponseVerifyVoteExtension::ACCEPT);
    verify.set_vote_extension("x");
    verified = node.app.verify_vote_extension(verify);
    ASSERT_TRUE(verified);
    EXPECT_EQ(verified->status(), pb::ResponseVerifyVoteExtension::REJECT);

    auto listed = node.app.list_snapshots(pb::RequestListSnapshots{});
    ASSERT_TRUE(listed);
    EXPECT_EQ(listed->snapshots_size(), 0);
    auto offered = node.app.offer_snapshot(pb::RequestOfferSnapshot{});
    ASSERT_TRUE(offered);
    EXPECT_EQ(offered->result(), pb::ResponseOfferSnapshot::REJECT);
    auto loaded = node.app.load_snapshot_chunk(pb::RequestLoadSnapshotChunk{});
    ASSERT_TRUE(loaded);
    EXPECT_TRUE(loaded->chunk().empty());
    auto applied = node.app.apply_snapshot_chunk(pb::RequestApplySnapshotChunk{});
    ASSERT_TRUE(applied);
    EXPECT_EQ(applied->result(), pb::ResponseApplySnapshotChunk::ABORT);

    auto queried = node.app.query(pb::RequestQuery{});
    ASSERT_TRUE(queried);
    EXPECT_NE(queried->code(), 0u);
    EXPECT_EQ(queried->log(),
              "barrel answers queries over its Ethereum JSON-RPC (eth_getBalance, eth_call, …), "
              "not ABCI Query");
}

// The server calls CheckTx and Info from their own connections' threads while the consensus
// calls go on (under TSan, this is the test of the app's locking).
TEST_F(AbciApp, check_tx_and_info_run_beside_the_consensus_calls) {
    AppNode node{dir / "a", genesis};
    const std::vector<Bytes> txs = concat(transfers(1, 0, 20), transfers(2, 0, 20));
    std::atomic<bool> done{false};
    std::atomic<bool> admitted{false};
    std::thread mempool{[&] {
        for (const Bytes& t : txs) EXPECT_EQ(check_tx(node.app, t).code(), 0u);
        admitted = true;
    }};
    std::thread query{[&] {
        int64_t last = 0;
        while (!done.load()) {
            const int64_t height = info(node.app).last_block_height();
            EXPECT_GE(height, last);
            last = height;
        }
    }};
    int64_t height = 0;
    size_t included = 0;
    pb::RequestPrepareProposal prepare;
    prepare.set_max_tx_bytes(1 << 20);
    // Until every transaction is in a block; an empty proposal once CheckTx has admitted all
    // and nothing is ready would mean one was lost.
    while (included < txs.size()) {
        const bool all_admitted = admitted.load();
        ++height;
        prepare.set_height(height);
        *prepare.mutable_time() = at(kTime + height);
        auto prepared = node.app.prepare_proposal(prepare);
        std::vector<Bytes> proposed;
        if (prepared)
            for (const std::string& t : prepared->txs()) proposed.emplace_back(t.begin(), t.end());
        run_height(node.app, height, proposed, kTime + height);
        included += proposed.size();
        // (No ASSERT here: the threads must be joined first.)
        if (!prepared || (all_admitted && proposed.empty())) {
            ADD_FAILURE() << included << " of " << txs.size() << " included";
            break;
        }
    }
    mempool.join();
    done = true;
    query.join();
    EXPECT_EQ(included, txs.size());
    EXPECT_EQ(node.pool.status().pending, 0u);
    EXPECT_EQ(info(node.app).last_block_height(), height);
}

// DESIGN.md, "Network", "Header": coinbase = the fee address the genesis maps the proposer's
// validator address to, else the genesis coinbase; every node derives it from the request's
// proposer_address, so the proposer's PrepareProposal, another validator's ProcessProposal and a
// replaying node's FinalizeBlock build the same block.
TEST_F(AbciApp, the_proposers_fees_go_to_the_fee_address_the_genesis_maps_it_to) {
    const Bytes mapped_validator(20, 0xa1);
    const Bytes unmapped_validator(20, 0xb2);
    Address fee_address;
    fee_address[0] = 0xfe;
    chain::Genesis mapped = genesis;
    mapped.validator_coinbases = {
        {chain::ValidatorAddress::from_view(mapped_validator), fee_address}};
    AppNode proposer{dir / "a", mapped};
    AppNode validator{dir / "b", mapped};
    // The map is the datadir's: it survives a reopen (meta/chain).
    ASSERT_TRUE(store::Store::init(dir / "c", mapped));
    AppNode replaying{dir / "c", mapped, false};
    EXPECT_EQ(replaying.store->genesis().validator_coinbases, mapped.validator_coinbases);
    auto balance = [](AppNode& node, const Address& a) {
        return node.store->account(a).value().value_or(state::Account{}).balance;
    };

    auto height = [&](int64_t h, const Bytes& proposer_address, const std::vector<Bytes>& txs) {
        const std::string hash = cometbft_hash(h);
        for (const Bytes& t : txs) EXPECT_EQ(check_tx(proposer.app, t).code(), 0u);
        pb::RequestPrepareProposal prepare;
        prepare.set_height(h);
        *prepare.mutable_time() = at(kTime + h);
        prepare.set_max_tx_bytes(1 << 20);
        prepare.set_proposer_address(bytes_string(proposer_address));
        auto prepared = proposer.app.prepare_proposal(prepare);
        ASSERT_TRUE(prepared) << prepared.error();
        ASSERT_EQ(prepared->txs_size(), static_cast<int>(txs.size()));
        auto process = proposal(h, txs, hash, kTime + h);
        process.set_proposer_address(bytes_string(proposer_address));
        auto finalize = decided(h, txs, hash, kTime + h);
        finalize.set_proposer_address(bytes_string(proposer_address));
        for (AppNode* node : {&proposer, &validator}) {
            auto processed = node->app.process_proposal(process);
            ASSERT_TRUE(processed) << processed.error();
            EXPECT_EQ(processed->status(), pb::ResponseProcessProposal::ACCEPT);
        }
        std::vector<std::string> app_hashes;
        for (AppNode* node : {&proposer, &validator, &replaying}) {
            auto finalized = node->app.finalize_block(finalize);
            ASSERT_TRUE(finalized) << finalized.error();
            app_hashes.push_back(finalized->app_hash());
            ASSERT_TRUE(node->app.commit(pb::RequestCommit{}));
        }
        EXPECT_EQ(app_hashes[1], app_hashes[0]);
        EXPECT_EQ(app_hashes[2], app_hashes[0]);
        // PrepareProposal checked the block the others executed: the proposer did not again.
        EXPECT_EQ(proposer.heard.checked.back().call, "prepare_proposal");
        EXPECT_EQ(validator.store->head().hash, proposer.store->head().hash);
        EXPECT_EQ(replaying.store->head().hash, proposer.store->head().hash);
    };

    // Block 1, by the mapped validator: its fees go to its fee address.
    const std::vector<Bytes> block1 = transfers(1, 0, 2);
    height(1, mapped_validator, block1);
    const auto header1 = proposer.store->header_record(1).value().value().header;
    EXPECT_EQ(header1.coinbase, fee_address);
    // Two transfers at a tip of 2 (the base fee is 0).
    const u256 fees = u256{2 * 21'000 * 2};
    for (AppNode* node : {&proposer, &validator, &replaying}) {
        EXPECT_EQ(balance(*node, fee_address), fees);
        EXPECT_EQ(balance(*node, coinbase()), u256{0});
    }

    // Block 2, by a validator the genesis does not map: the genesis coinbase.
    height(2, unmapped_validator, transfers(2, 0, 1));
    EXPECT_EQ(proposer.store->header_record(2).value().value().header.coinbase, coinbase());
    for (AppNode* node : {&proposer, &validator, &replaying}) {
        EXPECT_EQ(balance(*node, fee_address), fees);
        EXPECT_EQ(balance(*node, coinbase()), u256{21'000 * 2});
    }
}

// The proposer's address is part of the block: a proposal checked for one proposer is not the
// block of another, and a validator with another map computes another header.
TEST_F(AbciApp, a_proposal_checked_for_one_proposer_is_not_taken_for_another) {
    const Bytes mapped_validator(20, 0xa1);
    Address fee_address;
    fee_address[0] = 0xfe;
    chain::Genesis mapped = genesis;
    mapped.validator_coinbases = {
        {chain::ValidatorAddress::from_view(mapped_validator), fee_address}};
    AppNode node{dir / "a", mapped};
    const std::vector<Bytes> txs = transfers(1, 0, 1);
    for (const Bytes& t : txs) EXPECT_EQ(check_tx(node.app, t).code(), 0u);
    pb::RequestPrepareProposal prepare;
    prepare.set_height(1);
    *prepare.mutable_time() = at(kTime);
    prepare.set_max_tx_bytes(1 << 20);
    prepare.set_proposer_address(bytes_string(mapped_validator));
    ASSERT_TRUE(node.app.prepare_proposal(prepare));
    // The same transactions proposed by another validator: checked again, its own header.
    auto process = proposal(1, txs, cometbft_hash(1));
    process.set_proposer_address(std::string(20, '\x07'));
    ASSERT_TRUE(node.app.process_proposal(process));
    ASSERT_EQ(node.heard.checked.size(), 2u);
    EXPECT_EQ(node.heard.checked[1].call, "process_proposal");
    auto finalize = decided(1, txs, cometbft_hash(1));
    finalize.set_proposer_address(process.proposer_address());
    ASSERT_TRUE(node.app.finalize_block(finalize));
    ASSERT_TRUE(node.app.commit(pb::RequestCommit{}));
    EXPECT_EQ(node.store->header_record(1).value().value().header.coinbase, coinbase());
}

TEST(abci_retain_height, keeps_the_retained_blocks_and_never_passes_the_lowest_retained_height) {
    struct Case {
        uint64_t head, retain;
        std::optional<uint64_t> lowest;
        int64_t expected;
    };
    const Case cases[] = {
        {10, 0, {}, 0},                    // keep everything
        {10, 10, {}, 0},                   // no more blocks than retained
        {10, 20, {}, 0}, {10, 9, {}, 2},   // blocks 2 to 10
        {10, 4, {}, 7},  {10, 1, {}, 10},  // the head alone
        {10, 4, 5, 5},                     // a snapshot at 5 keeps the blocks from it
        {10, 4, 9, 7},                     // one above the retained blocks changes nothing
        {10, 4, 0, 0},                     // a snapshot of the genesis keeps every block
        {10, 4, 1, 0},                     // as does one at height 1
        {10, 0, 5, 0},                     // no pruning asked: never more than that
    };
    for (const Case& c : cases)
        EXPECT_EQ(retain_height(c.head, c.retain, c.lowest), c.expected)
            << "head " << c.head << ", retain " << c.retain << ", lowest "
            << (c.lowest ? std::to_string(*c.lowest) : "none");
}

TEST_F(AbciApp, commit_asks_cometbft_to_prune_its_blocks_as_the_store_prunes_its_own) {
    std::optional<uint64_t> lowest;
    const auto& g = genesis;
    AppNode node{dir / "a", g, true,
                 ChainConfig{.max_proposal_txs = 2500,
                             .coinbase = coinbase(),
                             .retain_blocks = 2,
                             .lowest_retained_height = [&lowest] { return lowest; }}};
    std::vector<int64_t> retained;
    for (int64_t height = 1; height <= 4; ++height) {
        const std::string hash = cometbft_hash(height);
        ASSERT_TRUE(node.app.process_proposal(proposal(height, {}, hash)));
        ASSERT_TRUE(node.app.finalize_block(decided(height, {}, hash)));
        if (height == 4) lowest = 2;  // a snapshot kept at height 2
        auto committed = node.app.commit(pb::RequestCommit{});
        ASSERT_TRUE(committed) << committed.error();
        retained.push_back(committed->retain_height());
    }
    EXPECT_EQ(retained, (std::vector<int64_t>{0, 0, 2, 2}));  // height 4: 3 without the snapshot
}

}  // namespace
}  // namespace barrel::abci
