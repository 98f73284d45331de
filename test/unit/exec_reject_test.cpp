// Rejected blocks: one table row per ExecErrorCode, each a block whose bad transaction comes after
// valid ones that change state, under every schedule: the error names the transaction and the
// parent MemoryState is exactly as it was. Then check_seal, one row per SealErrorCode.

#include <barrel/exec/dag_transfer.hpp>
#include <barrel/exec/execute.hpp>

#include "exec_oracle.hpp"
#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

using namespace barrel;
using exec::ExecError;
using exec::ExecErrorCode;
using exec::Schedule;

using test::kMax;

namespace {

const Address kRejectCoinbase = test::derived_address(100, 0x7e);

Address account(uint64_t i) { return test::derived_address(i, 0x7e); }

/// The parent of every row: ten rich accounts (nonce i) and three users.
state::MemoryState parent_state() {
    state::MemoryState s;
    for (uint64_t i = 0; i < 10; ++i) s.set_account(account(i), {i, u256{1} << 80});
    s.set_user("alice", 1'000);
    s.set_user("bob", 0);
    s.set_user("carol", kMax);
    return s;
}

struct Contents {
    std::unordered_map<Address, state::Account, FixedBytesHasher> accounts;
    std::unordered_map<std::string, u256, state::StringHash, std::equal_to<>> users;
    friend bool operator==(const Contents&, const Contents&) = default;
};
Contents contents(const state::MemoryState& s) { return {s.accounts(), s.users()}; }

/// A block of valid, state-changing transactions (transfers, DagTransfer calls, a creation)
/// around the bad one at `bad_index`, which `spoil` makes invalid.
struct Row {
    const char* name;
    ExecErrorCode code;
    std::function<void(test::BlockBuilder&, state::MemoryState&, exec::ChainConfig&)> spoil;
    size_t index;  ///< the index the error must name
};

test::BlockBuilder good_block(size_t n) {
    block::Header h;
    h.coinbase = kRejectCoinbase;
    h.gas_limit = 30'000'000;
    test::BlockBuilder b{h, 0x7e};
    std::vector<uint64_t> nonce(10);
    for (uint64_t i = 0; i < 10; ++i) nonce[i] = i;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t from = i % 5;
        tx::Transaction t;
        switch (i % 4) {
            case 0: t = test::make_tx(nonce[from], account(5 + i % 5), 1'000 + i, {}, 0, 2); break;
            case 1:
                t = test::make_tx(nonce[from], exec::kDagTransferAddress, 0,
                                  b.keep(exec::encode_call(
                                      {exec::DagFunction::user_transfer, "alice", "bob", 1})),
                                  0, 2);
                break;
            case 2:
                t = test::make_tx(
                    nonce[from], exec::kDagTransferAddress, 0,
                    b.keep(exec::encode_call(
                        {exec::DagFunction::user_add, "new" + std::to_string(i), {}, 5})),
                    0, 2);
                break;
            default: t = test::make_tx(nonce[from], std::nullopt, 0, {}, 60'000, 2); break;
        }
        ++nonce[from];
        b.add(std::move(t), account(from));
    }
    return b;
}

std::vector<Row> rows() {
    return {
        {"nonce_mismatch", ExecErrorCode::nonce_mismatch,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig&) {
             b.block.txs[9].nonce += 1;
         },
         9},
        {"nonce_mismatch_replay", ExecErrorCode::nonce_mismatch,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig&) {
             b.block.txs[9].nonce -= 1;
         },
         9},
        {"insufficient_balance", ExecErrorCode::insufficient_balance,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig&) {
             b.block.txs[12].value = u256{1} << 80;
         },
         12},
        {"insufficient_balance_by_one_wei", ExecErrorCode::insufficient_balance,
         [](test::BlockBuilder& b, state::MemoryState& s, exec::ChainConfig&) {
             // A fresh sender funded with one wei less than gas_limit × price + value.
             const Address poor = account(50);
             auto& t = b.block.txs[0];
             s.set_account(poor, {0, u256{t.gas_limit} * t.max_fee_per_gas + t.value - 1});
             t.nonce = 0;
             b.block.senders[0] = poor;
         },
         0},
        // A block that skipped stage 2 (whose tx::validate refuses the product as
        // fee_cap_overflow): gas limit × price past 2^256 once wrapped to a small cost.
        {"insufficient_balance_for_a_cost_past_2_to_the_256", ExecErrorCode::insufficient_balance,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig&) {
             auto& t = b.block.txs[4];
             t.gas_limit = 2 * tx::intrinsic_gas(t);
             // 2^255 + 1: times an even gas limit, it wraps to the gas limit.
             t.max_fee_per_gas = t.max_priority_fee_per_gas = (kMax >> 1) + 2;
         },
         4},
        {"fee_cap_below_base_fee", ExecErrorCode::fee_cap_below_base_fee,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig& c) {
             c.base_fee = 2;  // the legacy transactions at price 2 stay valid
             auto& t = b.block.txs[14];
             t.type = tx::TxType::dynamic_fee;
             t.max_fee_per_gas = 1;
             t.max_priority_fee_per_gas = 1;
         },
         14},
        // Finding 4 of issue 29: a legacy or EIP-2930 transaction priced below the base fee was
        // mined (a gas price 0 from an empty account with status 1).
        {"gas_price_below_base_fee", ExecErrorCode::gas_price_below_base_fee,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig& c) {
             c.base_fee = 2;  // the transactions at price 2 stay valid
             auto& t = b.block.txs[13];
             t.max_fee_per_gas = t.max_priority_fee_per_gas = 1;
         },
         13},
        {"gas_price_below_base_fee_access_list", ExecErrorCode::gas_price_below_base_fee,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig& c) {
             c.base_fee = 7;
             for (auto& t : b.block.txs) t.max_fee_per_gas = t.max_priority_fee_per_gas = 7;
             auto& t = b.block.txs[11];
             t.type = tx::TxType::access_list;
             t.max_fee_per_gas = t.max_priority_fee_per_gas = 6;
         },
         11},
        {"gas_price_zero_from_an_empty_account", ExecErrorCode::gas_price_below_base_fee,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig& c) {
             c.base_fee = 1;
             for (auto& t : b.block.txs) t.max_fee_per_gas = t.max_priority_fee_per_gas = 2;
             auto& t = b.block.txs[10];
             t.max_fee_per_gas = t.max_priority_fee_per_gas = 0;
             t.value = 0;
             t.nonce = 0;
             b.block.senders[10] = account(60);  // absent from the parent: pays nothing
         },
         10},
        {"block_gas_exceeded", ExecErrorCode::block_gas_exceeded,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig&) {
             uint64_t used = 0;  // gas used before tx 10: intrinsic, or the limit for creations
             for (size_t i = 0; i < 10; ++i)
                 used += i % 4 == 3 ? b.block.txs[i].gas_limit : tx::intrinsic_gas(b.block.txs[i]);
             b.block.header->gas_limit = used + b.block.txs[10].gas_limit - 1;
         },
         10},
        // Two faults in one transaction: the first in the decided order (fee cap, block gas,
        // nonce, balance) is the one reported. execute() once reported the nonce or balance error.
        {"block_gas_exceeded_before_nonce", ExecErrorCode::block_gas_exceeded,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig&) {
             uint64_t used = 0;
             for (size_t i = 0; i < 10; ++i)
                 used += i % 4 == 3 ? b.block.txs[i].gas_limit : tx::intrinsic_gas(b.block.txs[i]);
             b.block.header->gas_limit = used + b.block.txs[10].gas_limit - 1;
             b.block.txs[10].nonce += 1;
         },
         10},
        {"fee_cap_before_insufficient_balance", ExecErrorCode::fee_cap_below_base_fee,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig& c) {
             c.base_fee = 2;
             auto& t = b.block.txs[14];
             t.type = tx::TxType::dynamic_fee;
             t.max_fee_per_gas = 1;
             t.max_priority_fee_per_gas = 1;
             t.value = u256{1} << 100;
         },
         14},
        {"balance_overflow", ExecErrorCode::balance_overflow,
         [](test::BlockBuilder&, state::MemoryState& s, exec::ChainConfig&) {
             // tx 8 sends 1,008 to account(8), which already holds 2^256 − 1,000.
             s.set_account(account(8), {8, kMax - 999});
         },
         8},
        {"coinbase_overflow", ExecErrorCode::balance_overflow,
         [](test::BlockBuilder&, state::MemoryState& s, exec::ChainConfig&) {
             s.set_account(kRejectCoinbase, {0, kMax});
         },
         15},
        {"fee_sum_overflow", ExecErrorCode::balance_overflow,
         [](test::BlockBuilder& b, state::MemoryState& s, exec::ChainConfig&) {
             // Two fees above 2^255 each: either sender can pay its own, the coinbase (empty)
             // cannot take their sum. Nothing else in the block overflows.
             const u256 price = (u256{1} << 255) / 21'000 + 1;
             for (uint64_t i : {0, 1}) {
                 auto& t = b.block.txs[i];
                 t.max_fee_per_gas = t.max_priority_fee_per_gas = price;
                 t.gas_limit = tx::intrinsic_gas(t);
                 s.set_account(account(i), {i, kMax});
             }
         },
         15},
        {"missing_senders", ExecErrorCode::missing_senders,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig&) {
             b.block.senders.pop_back();
         },
         0},
        {"missing_tx_hashes", ExecErrorCode::missing_senders,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig&) {
             b.block.tx_hashes.pop_back();
         },
         0},
        {"missing_header", ExecErrorCode::missing_header,
         [](test::BlockBuilder& b, state::MemoryState&, exec::ChainConfig&) {
             b.block.header.reset();
         },
         0},
    };
}

TEST(exec_reject, every_error_code_leaves_the_parent_untouched) {
    // Every code a block can be rejected for (the last two are the parent state's fault).
    constexpr size_t kBlockCodes = static_cast<size_t>(ExecErrorCode::balance_overflow) + 1;
    std::vector<bool> seen(kBlockCodes, false);
    for (const Row& row : rows()) {
        SCOPED_TRACE(row.name);
        test::BlockBuilder b = good_block(16);
        state::MemoryState parent = parent_state();
        exec::ChainConfig config;
        // The unspoiled block is valid and changes state (so a write-through would show).
        {
            const auto ok = exec::execute(b.block, parent, state::Lattice{}, config);
            ASSERT_TRUE(ok) << exec::describe(ok.error());
            ASSERT_GT(ok->writes.size(), 10u);
        }
        row.spoil(b, parent, config);
        const Contents before = contents(parent);
        const auto want = test::oracle::execute(b.block, parent, state::Lattice{}, config);
        ASSERT_FALSE(want);
        EXPECT_EQ(want.error(), (ExecError{row.code, row.index})) << exec::describe(want.error());
        for (const int threads : {1, 2, 4}) {
            tbb::global_control limit{tbb::global_control::max_allowed_parallelism,
                                      static_cast<size_t>(threads)};
            tbb::task_arena arena{threads};
            arena.execute([&] {
                for (const Schedule s :
                     {Schedule::serial, Schedule::levels, Schedule::dynamic, Schedule::automatic}) {
                    const auto got = exec::execute(b.block, parent, state::Lattice{}, config, {s});
                    ASSERT_FALSE(got) << exec::to_string(s) << " accepted the block";
                    EXPECT_EQ(got.error(), (ExecError{row.code, row.index}))
                        << exec::to_string(s) << " at " << threads
                        << " threads: " << exec::describe(got.error());
                    EXPECT_TRUE(contents(parent) == before) << "the parent changed";
                }
            });
        }
        seen[static_cast<size_t>(row.code)] = true;
    }
    for (size_t c = 0; c < seen.size(); ++c)
        EXPECT_TRUE(seen[c]) << "no row for " << exec::to_string(static_cast<ExecErrorCode>(c));
}

TEST(exec_reject, error_codes_have_names) {
    for (uint8_t c = 0; c <= static_cast<uint8_t>(ExecErrorCode::state_corrupt); ++c)
        EXPECT_NE(exec::to_string(static_cast<ExecErrorCode>(c)), "unknown");
    EXPECT_EQ(exec::describe({ExecErrorCode::nonce_mismatch, 17}),
              "transaction 17: nonce_mismatch");
    EXPECT_EQ(exec::describe({ExecErrorCode::gas_price_below_base_fee, 3}),
              "transaction 3: gas_price_below_base_fee");
    for (uint8_t c = 0; c < 4; ++c)
        EXPECT_NE(exec::to_string(static_cast<exec::SealErrorCode>(c)), "unknown");
}

TEST(exec_reject, check_seal_reports_each_mismatch) {
    test::BlockBuilder b = good_block(12);
    const state::MemoryState parent = parent_state();
    // The parent's lattice: its state's, as a store would pass it.
    const state::Lattice parent_lattice =
        state::lattice_of(test::oracle::entries_of(test::oracle::copy_of(parent)));
    const auto out = exec::execute(b.block, parent, parent_lattice, exec::ChainConfig{});
    ASSERT_TRUE(out);

    block::Header sealed = *b.block.header;
    sealed.gas_used = out->gas_used;
    sealed.txs_root = out->txs_root;
    sealed.receipts_root = out->receipts_root;
    sealed.state_root = out->state_root;
    EXPECT_TRUE(exec::check_seal(sealed, *out));

    auto flip = [](Hash h) {
        h[31] ^= 1;
        return h;
    };
    struct SealCase {
        exec::SealErrorCode code;
        std::function<void(block::Header&)> spoil;
    };
    const SealCase cases[] = {
        {exec::SealErrorCode::gas_used_mismatch, [](block::Header& h) { h.gas_used += 1; }},
        {exec::SealErrorCode::txs_root_mismatch,
         [&](block::Header& h) { h.txs_root = flip(h.txs_root); }},
        {exec::SealErrorCode::receipts_root_mismatch,
         [&](block::Header& h) { h.receipts_root = flip(h.receipts_root); }},
        {exec::SealErrorCode::state_root_mismatch,
         [&](block::Header& h) { h.state_root = flip(h.state_root); }},
    };
    for (const SealCase& c : cases) {
        block::Header h = sealed;
        c.spoil(h);
        const auto r = exec::check_seal(h, *out);
        ASSERT_FALSE(r) << exec::to_string(c.code);
        EXPECT_EQ(r.error(), c.code);
    }
    // The state root commits to the whole state: the same block on a parent lattice with one
    // more entry seals differently.
    const auto other = exec::execute(
        b.block, parent, parent_lattice + state::Lattice::element(Address{}, state::Account{1, 1}),
        exec::ChainConfig{});
    ASSERT_TRUE(other);
    EXPECT_EQ(other->writes, out->writes);
    const auto r = exec::check_seal(sealed, *other);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), exec::SealErrorCode::state_root_mismatch);
    // An empty block: roots of nothing.
    test::BlockBuilder empty{*b.block.header, 1};
    const auto e = exec::execute(empty.block, parent, parent_lattice, exec::ChainConfig{});
    ASSERT_TRUE(e);
    EXPECT_EQ(e->txs_root, empty_keccak());
    EXPECT_EQ(e->receipts_root, empty_keccak());
    EXPECT_TRUE(e->writes.empty());
    // Nothing written: the parent's lattice and root, unchanged (docs/formats.md).
    EXPECT_EQ(e->lattice, parent_lattice);
    EXPECT_EQ(e->state_root, parent_lattice.root());
}

}  // namespace
