// The workload generator: determinism (same options, any thread count → same bytes), that every
// generated block decodes, verifies to the generator's senders and executes to exactly its
// header's roots in sequence, value conservation, what each mix contains, contention from
// --hot-ratio, and the exact option errors.

#include <barrel/block/block.hpp>
#include <barrel/chain/genesis.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/exec/dag_transfer.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/gen/workload.hpp>
#include <barrel/tx/transaction.hpp>

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace barrel;

namespace {

gen::Options small(gen::Mix mix, uint64_t seed = 1) {
    gen::Options o;
    o.seed = seed;
    o.blocks = 3;
    o.txs = 200;
    o.accounts = 64;
    o.hot_accounts = 2;
    o.hot_ratio = 0.3;
    o.mix = mix;
    return o;
}

gen::Workload generate_ok(const gen::Options& o) {
    auto w = gen::generate(o);
    if (!w) ADD_FAILURE() << w.error();
    return w ? std::move(w).value() : gen::Workload{};
}

u256 total_account_balance(const state::MemoryState& s) {
    u256 sum = 0;
    for (const auto& [address, account] : s.accounts()) sum += account.balance;
    return sum;
}

/// What replaying a block gave: the decoded block and its outcome.
/// Every entry of `s` (the input of a full recomputation, state::lattice_of).
state::WriteSet entries_of(const state::MemoryState& s) {
    state::WriteSet all;
    for (const auto& [address, account] : s.accounts()) all.accounts.emplace_back(address, account);
    for (const auto& [name, balance] : s.users()) all.users.emplace_back(name, balance);
    return all;
}

using BlockCheck = std::function<void(size_t index, const block::Block&, const exec::Outcome&)>;

/// Imports the workload as a node would: genesis from its JSON text, then each block decoded,
/// its senders recovered, executed against the running state and checked against its header.
/// Returns the final state.
state::MemoryState replay(const gen::Workload& w, const BlockCheck& check = {}) {
    const auto genesis = chain::parse_genesis(chain::to_json_text(w.genesis));
    EXPECT_TRUE(genesis) << (genesis ? "" : genesis.error());
    if (!genesis) return {};
    EXPECT_EQ(*genesis, w.genesis);
    state::MemoryState state = chain::genesis_state(*genesis);
    const block::Header genesis_header = chain::genesis_header(*genesis);
    Hash parent_hash = block::hash_of(genesis_header);
    state::Lattice parent_lattice = chain::genesis_lattice(*genesis);
    EXPECT_EQ(parent_lattice.root(), genesis_header.state_root);
    EXPECT_EQ(w.senders.size(), w.blocks.size());
    for (size_t k = 0; k < w.blocks.size(); ++k) {
        SCOPED_TRACE("block " + std::to_string(k + 1));
        auto b = block::decode_block(w.blocks[k]);
        EXPECT_TRUE(b) << (b ? "" : block::describe(b.error()));
        if (!b) return state;
        const block::Header& h = *b->header;
        EXPECT_EQ(h.number, k + 1);
        EXPECT_EQ(h.parent_hash, parent_hash);
        EXPECT_EQ(h.chain_id, genesis->config.chain_id);
        EXPECT_EQ(h.coinbase, genesis->coinbase);
        EXPECT_EQ(h.gas_limit, genesis->gas_limit);
        EXPECT_EQ(h.timestamp, genesis->timestamp + 2 * (k + 1));
        const auto verified = block::recover_senders(*b, genesis->config.chain_id, nullptr);
        EXPECT_TRUE(verified) << (verified ? "" : block::describe(verified.error()));
        EXPECT_EQ(b->senders, w.senders[k]);
        const auto outcome = exec::execute(*b, state, parent_lattice, genesis->config);
        EXPECT_TRUE(outcome) << (outcome ? "" : exec::describe(outcome.error()));
        if (!outcome) return state;
        const auto sealed = exec::check_seal(h, *outcome);
        EXPECT_TRUE(sealed) << (sealed ? "" : std::string{exec::to_string(sealed.error())});
        if (check) check(k, *b, *outcome);
        state.apply(outcome->writes);
        // The block's incremental lattice is the whole new state's, recomputed from scratch.
        EXPECT_EQ(outcome->lattice, state::lattice_of(entries_of(state), true));
        parent_lattice = outcome->lattice;
        parent_hash = b->hash;
    }
    return state;
}

/// The DagTransfer code in a receipt's first return word, as a signed number.
int64_t dag_code(const exec::Receipt& r) {
    if (r.output.size() < 32) return 1;  // not a DagTransfer return
    const u256 word = load_be(BytesView{r.output.data(), 32});
    if (word < u256{1'000'000}) return static_cast<int64_t>(word);
    return -static_cast<int64_t>(~word + 1);
}

const std::vector<gen::Mix> kMixes = {gen::Mix::transfer, gen::Mix::dag, gen::Mix::mixed};

}  // namespace

TEST(gen_workload, same_options_same_bytes) {
    for (const auto mix : kMixes) {
        SCOPED_TRACE(std::string{gen::to_string(mix)});
        const auto a = generate_ok(small(mix));
        const auto b = generate_ok(small(mix));
        EXPECT_EQ(chain::to_json_text(a.genesis), chain::to_json_text(b.genesis));
        EXPECT_EQ(a.blocks, b.blocks);
        EXPECT_EQ(a.senders, b.senders);
    }
}

TEST(gen_workload, seed_changes_everything) {
    const auto a = generate_ok(small(gen::Mix::mixed, 1));
    const auto b = generate_ok(small(gen::Mix::mixed, 2));
    EXPECT_NE(a.genesis.alloc.accounts, b.genesis.alloc.accounts);
    ASSERT_EQ(a.blocks.size(), b.blocks.size());
    for (size_t k = 0; k < a.blocks.size(); ++k) EXPECT_NE(a.blocks[k], b.blocks[k]);
}

TEST(gen_workload, thread_count_does_not_change_the_output) {
    for (const auto mix : kMixes) {
        SCOPED_TRACE(std::string{gen::to_string(mix)});
        gen::Options o = small(mix);
        o.txs = 500;
        std::vector<gen::Workload> runs;
        for (size_t threads : {1, 2, 4}) {
            tbb::global_control limit{tbb::global_control::max_allowed_parallelism, threads};
            runs.push_back(generate_ok(o));
        }
        for (size_t r = 1; r < runs.size(); ++r) {
            EXPECT_EQ(runs[r].genesis, runs[0].genesis);
            EXPECT_EQ(runs[r].blocks, runs[0].blocks);
        }
    }
}

TEST(gen_workload, blocks_verify_and_execute_to_their_headers) {
    for (const auto mix : kMixes) {
        SCOPED_TRACE(std::string{gen::to_string(mix)});
        const gen::Options o = small(mix);
        const auto w = generate_ok(o);
        ASSERT_EQ(w.blocks.size(), o.blocks);
        size_t txs = 0;
        const auto final_state =
            replay(w, [&](size_t, const block::Block& b, const exec::Outcome& out) {
                EXPECT_EQ(b.size(), o.txs);
                EXPECT_GT(out.gas_used, 0u);
                txs += b.size();
            });
        EXPECT_EQ(txs, o.blocks * o.txs);

        // Every transaction consumed its sender's nonce.
        uint64_t nonces = 0;
        for (const auto& [address, account] : final_state.accounts()) nonces += account.nonce;
        EXPECT_EQ(nonces, o.blocks * o.txs);
    }
}

TEST(gen_workload, the_incremental_lattice_is_the_full_recompute_after_every_block) {
    // replay() checks each block's lattice against state::lattice_of of the whole state after
    // it; here for each mix at 1 and 2 threads, which must also agree with each other.
    for (const auto mix : kMixes) {
        SCOPED_TRACE(std::string{gen::to_string(mix)});
        const auto w = generate_ok(small(mix));
        std::vector<std::vector<Hash>> roots;
        for (size_t threads : {1, 2}) {
            tbb::global_control limit{tbb::global_control::max_allowed_parallelism, threads};
            roots.emplace_back();
            replay(w, [&](size_t, const block::Block&, const exec::Outcome& out) {
                roots.back().push_back(out.state_root);
            });
        }
        EXPECT_EQ(roots[0], roots[1]);
        EXPECT_EQ(roots[0].size(), w.blocks.size());
    }
}

TEST(gen_workload, value_is_conserved) {
    // Transfers and fees move value between accounts (the coinbase included); nothing creates
    // or destroys any.
    for (const auto mix : kMixes) {
        SCOPED_TRACE(std::string{gen::to_string(mix)});
        const auto w = generate_ok(small(mix));
        const auto initial = total_account_balance(chain::genesis_state(w.genesis));
        EXPECT_EQ(initial,
                  u256{w.genesis.alloc.accounts.size()} * u256{"1000000000000000000000000"});
        const auto final_state = replay(w);
        EXPECT_EQ(total_account_balance(final_state), initial);
        const auto coinbase = final_state.find_account(w.genesis.coinbase);
        ASSERT_TRUE(coinbase);
        EXPECT_GT(coinbase->balance, 0u);  // the fees went somewhere
    }
}

TEST(gen_workload, genesis_layout) {
    const gen::Options o = small(gen::Mix::dag);
    const auto w = generate_ok(o);
    const auto& g = w.genesis;
    EXPECT_EQ(g.config.chain_id, o.chain_id);
    EXPECT_EQ(g.config.base_fee, 0u);
    EXPECT_GE(g.gas_limit, 30'000'000u);
    EXPECT_EQ(g.coinbase, gen::coinbase_address());
    ASSERT_EQ(g.alloc.accounts.size(), o.accounts);
    for (size_t i = 0; i < o.accounts; ++i) {
        const auto address = tx::address_of(gen::account_key(o.seed, i));
        ASSERT_TRUE(address);
        const auto s = chain::genesis_state(g).find_account(*address);
        ASSERT_TRUE(s) << i;
        EXPECT_EQ(s->nonce, 0u);
        EXPECT_NE(*address, g.coinbase);
    }
    ASSERT_EQ(g.alloc.users.size(), o.accounts);
    EXPECT_EQ(g.alloc.users.front().first, "user000000");
    EXPECT_EQ(g.alloc.users.back().first, gen::user_name(o.accounts - 1));
    EXPECT_TRUE(generate_ok(small(gen::Mix::transfer)).genesis.alloc.users.empty());
    EXPECT_GT(generate_ok(small(gen::Mix::mixed)).genesis.config.base_fee, 0u);

    gen::Options big = o;
    big.txs = 2500;
    big.blocks = 1;
    EXPECT_GE(generate_ok(big).genesis.gas_limit, 75'000'000u);
}

// The load generator's genesis (no blocks) is the one generate() writes beside its blocks, for
// every mix, and refuses what generate() refuses.
TEST(gen_workload, genesis_without_blocks) {
    for (const auto mix : {gen::Mix::transfer, gen::Mix::dag, gen::Mix::mixed}) {
        const gen::Options o = small(mix);
        const auto g = gen::generate_genesis(o);
        ASSERT_TRUE(g) << g.error();
        EXPECT_EQ(*g, generate_ok(o).genesis) << gen::to_string(mix);
    }
    gen::Options bad = small(gen::Mix::transfer);
    bad.accounts = 1;
    const auto g = gen::generate_genesis(bad);
    ASSERT_FALSE(g);
    EXPECT_EQ(g.error(), gen::validate(bad).error());
}

TEST(gen_workload, account_keys_and_names) {
    EXPECT_EQ(gen::account_key(1, 0), gen::account_key(1, 0));
    EXPECT_NE(gen::account_key(1, 0), gen::account_key(1, 1));
    EXPECT_NE(gen::account_key(1, 0), gen::account_key(2, 0));
    // keccak256("barrel-gen" ‖ seed ‖ index), both 8 bytes big-endian (valid as it is).
    Bytes preimage{'b', 'a', 'r', 'r', 'e', 'l', '-', 'g', 'e', 'n'};
    for (int i = 0; i < 7; ++i) preimage.push_back(0);
    preimage.push_back(7);
    for (int i = 0; i < 7; ++i) preimage.push_back(0);
    preimage.push_back(3);
    EXPECT_EQ(gen::account_key(7, 3), keccak256(preimage));

    EXPECT_EQ(gen::user_name(0), "user000000");
    EXPECT_EQ(gen::user_name(123), "user000123");
    EXPECT_EQ(gen::user_name(1234567), "user1234567");

    EXPECT_EQ(gen::parse_mix("transfer"), gen::Mix::transfer);
    EXPECT_EQ(gen::parse_mix("dag"), gen::Mix::dag);
    EXPECT_EQ(gen::parse_mix("mixed"), gen::Mix::mixed);
    EXPECT_FALSE(gen::parse_mix("Mixed"));
    EXPECT_FALSE(gen::parse_mix(""));
}

TEST(gen_workload, transfer_mix_is_legacy_value_transfers) {
    const auto w = generate_ok(small(gen::Mix::transfer));
    replay(w, [](size_t, const block::Block& b, const exec::Outcome& out) {
        for (size_t i = 0; i < b.size(); ++i) {
            const auto& t = b.txs[i];
            EXPECT_EQ(t.type, tx::TxType::legacy);
            EXPECT_EQ(t.chain_id, 1u);
            EXPECT_EQ(t.gas_limit, 21'000u);
            ASSERT_TRUE(t.to);
            EXPECT_NE(*t.to, b.senders[i]);
            EXPECT_GT(t.value, 0u);
            EXPECT_TRUE(out.receipts[i].status);
        }
    });
}

TEST(gen_workload, dag_mix_calls_and_codes) {
    gen::Options o = small(gen::Mix::dag);
    o.blocks = 2;
    o.txs = 1500;
    const auto w = generate_ok(o);
    std::map<int64_t, size_t> codes;
    std::set<exec::DagFunction> functions;
    replay(w, [&](size_t, const block::Block& b, const exec::Outcome& out) {
        for (size_t i = 0; i < b.size(); ++i) {
            const auto& t = b.txs[i];
            ASSERT_TRUE(t.to);
            EXPECT_EQ(*t.to, exec::kDagTransferAddress);
            EXPECT_EQ(t.value, 0u);
            EXPECT_GT(t.gas_limit, tx::intrinsic_gas(t));
            const auto call = exec::decode_call(t.data);
            ASSERT_TRUE(call);
            functions.insert(call->function);
            EXPECT_TRUE(out.receipts[i].status);
            EXPECT_EQ(out.receipts[i].gas_used, tx::intrinsic_gas(t));
            ++codes[dag_code(out.receipts[i])];
        }
    });
    EXPECT_EQ(functions.size(), 5u);
    EXPECT_GT(codes[0], o.blocks * o.txs * 9 / 10);
    for (auto code : {exec::DagCode::invalid_amount, exec::DagCode::user_not_found,
                      exec::DagCode::user_exists, exec::DagCode::insufficient_balance})
        EXPECT_GT(codes[static_cast<int64_t>(code)], 0u) << static_cast<int64_t>(code);
}

TEST(gen_workload, mixed_mix_has_everything) {
    gen::Options o = small(gen::Mix::mixed);
    o.blocks = 4;
    o.txs = 1000;
    const auto w = generate_ok(o);
    std::map<std::string, size_t> seen;
    replay(w, [&](size_t, const block::Block& b, const exec::Outcome& out) {
        size_t creations = 0;
        for (size_t i = 0; i < b.size(); ++i) {
            const auto& t = b.txs[i];
            const auto& r = out.receipts[i];
            if (t.type == tx::TxType::legacy) ++seen[t.chain_id ? "legacy_155" : "legacy_pre155"];
            if (t.type == tx::TxType::access_list) ++seen["access_list"];
            if (t.type == tx::TxType::dynamic_fee) {
                ++seen["dynamic_fee"];
                EXPECT_GE(t.max_fee_per_gas, w.genesis.config.base_fee);
                if (t.max_fee_per_gas < w.genesis.config.base_fee + t.max_priority_fee_per_gas)
                    ++seen["fee_capped"];
            }
            if (!t.access_list.empty()) ++seen["with_access_list"];
            if (t.is_creation()) {
                ++creations;
                EXPECT_FALSE(r.status);
                EXPECT_EQ(r.gas_used, t.gas_limit);
            } else if (*t.to == exec::kDagTransferAddress) {
                if (r.status) {
                    ++seen["dag_call"];
                    if (dag_code(r) != 0) ++seen["dag_error_code"];
                } else {
                    ++seen["malformed_call"];
                    EXPECT_EQ(r.gas_used, t.gas_limit);
                }
            } else {
                EXPECT_TRUE(r.status);
                ++seen[*t.to == b.senders[i] ? "self_transfer" : "transfer"];
                if (!t.data.empty()) ++seen["transfer_with_calldata"];
            }
        }
        EXPECT_LE(creations, 1u);
        EXPECT_EQ(out.dag.barriers, creations);
        seen["creation"] += creations;
    });
    for (const char* what :
         {"legacy_155", "legacy_pre155", "access_list", "dynamic_fee", "fee_capped",
          "with_access_list", "creation", "dag_call", "dag_error_code", "malformed_call",
          "transfer", "self_transfer", "transfer_with_calldata"})
        EXPECT_GT(seen[what], 0u) << what;
}

TEST(gen_workload, hot_ratio_controls_contention) {
    auto levels = [](gen::Mix mix, double ratio, size_t hot) {
        gen::Options o;
        o.blocks = 1;
        o.txs = 500;
        o.accounts = 2'000;
        o.hot_accounts = hot;
        o.hot_ratio = ratio;
        o.mix = mix;
        size_t result = 0;
        replay(generate_ok(o), [&](size_t, const block::Block&, const exec::Outcome& out) {
            result = out.dag.levels;
        });
        return result;
    };
    // Every transfer touches the one hot account: a chain.
    EXPECT_EQ(levels(gen::Mix::transfer, 1.0, 1), 500u);
    // Nearly every DagTransfer call touches the one hot user (user additions and calls on
    // non-existent users do not).
    EXPECT_GE(levels(gen::Mix::dag, 1.0, 1), 450u);
    // Without a hot set the DAG is wide.
    EXPECT_LE(levels(gen::Mix::transfer, 0.0, 4), 10u);
    EXPECT_LE(levels(gen::Mix::dag, 0.0, 4), 10u);
    // In between, in between.
    const size_t half = levels(gen::Mix::transfer, 0.5, 4);
    EXPECT_GT(half, 10u);
    EXPECT_LT(half, 500u);
}

TEST(gen_workload, option_errors) {
    struct Row {
        const char* name;
        std::function<void(gen::Options&)> change;
        std::string message;
    };
    const std::vector<Row> rows = {
        {"blocks_zero", [](auto& o) { o.blocks = 0; }, "--blocks: must be at least 1, got 0"},
        {"txs_zero", [](auto& o) { o.txs = 0; }, "--txs: must be between 1 and 1000000, got 0"},
        {"txs_too_many", [](auto& o) { o.txs = 1'000'001; },
         "--txs: must be between 1 and 1000000, got 1000001"},
        {"too_many_in_all", [](auto& o) { o.blocks = 4001; },
         "--blocks: 4001 blocks of 2500 transactions exceed the limit of 10000000 transactions"},
        {"accounts_one", [](auto& o) { o.accounts = 1; },
         "--accounts: must be between 2 and 1000000, got 1"},
        {"accounts_too_many", [](auto& o) { o.accounts = 1'000'001; },
         "--accounts: must be between 2 and 1000000, got 1000001"},
        {"hot_accounts_zero", [](auto& o) { o.hot_accounts = 0; },
         "--hot-accounts: must be between 1 and the number of accounts (10000), got 0"},
        {"hot_accounts_above_accounts",
         [](auto& o) {
             o.accounts = 3;
             o.hot_accounts = 4;
         },
         "--hot-accounts: must be between 1 and the number of accounts (3), got 4"},
        {"hot_ratio_above_one", [](auto& o) { o.hot_ratio = 1.5; },
         "--hot-ratio: must be between 0 and 1, got 1.5"},
        {"hot_ratio_negative", [](auto& o) { o.hot_ratio = -0.25; },
         "--hot-ratio: must be between 0 and 1, got -0.25"},
        {"hot_ratio_nan", [](auto& o) { o.hot_ratio = std::numeric_limits<double>::quiet_NaN(); },
         "--hot-ratio: must be between 0 and 1, got nan"},
        {"chain_id_zero", [](auto& o) { o.chain_id = 0; }, "--chain-id: must be at least 1, got 0"},
    };
    for (const auto& row : rows) {
        SCOPED_TRACE(row.name);
        gen::Options o;
        row.change(o);
        const auto v = gen::validate(o);
        ASSERT_FALSE(v);
        EXPECT_EQ(v.error(), row.message);
        const auto w = gen::generate(o);
        ASSERT_FALSE(w);
        EXPECT_EQ(w.error(), row.message);
    }
    // The limits themselves are accepted.
    gen::Options edge;
    edge.accounts = 2;
    edge.hot_accounts = 2;
    edge.hot_ratio = 1.0;
    edge.txs = 1;
    EXPECT_TRUE(gen::validate(edge));
    const auto w = gen::generate(edge);
    ASSERT_TRUE(w) << w.error();
    replay(*w);
}
