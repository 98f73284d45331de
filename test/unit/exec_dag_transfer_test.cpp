// The DagTransfer precompile: its Solidity ABI (selectors, canonical encoding, strict decoding)
// and every return code, one by one, through exec::execute.

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/exec/dag_transfer.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/tx/transaction.hpp>

#include "exec_oracle.hpp"
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

using namespace barrel;
using namespace barrel::literals;
using exec::DagCall;
using exec::DagCode;
using exec::DagFunction;

using test::kMax;

namespace {

Bytes word(const u256& v) {
    Bytes out(32);
    store_be32(v, out.data());
    return out;
}

Bytes concat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

Bytes selector_bytes(std::string_view signature) {
    const Hash h = keccak256(as_bytes(signature));
    return Bytes(h.data(), h.data() + 4);
}

/// A string tail: length word, bytes, zero padding to a word.
Bytes tail(std::string_view s) {
    Bytes out = word(s.size());
    out.insert(out.end(), s.begin(), s.end());
    out.resize(32 + (s.size() + 31) / 32 * 32, 0);
    return out;
}

Bytes call(DagFunction f, std::string_view user, const u256& amount = 0, std::string_view to = {}) {
    return exec::encode_call(DagCall{f, user, to, amount});
}

// ---- ABI
// -----------------------------------------------------------------------------------------

TEST(exec_dag_transfer, selectors_are_keccak_of_signatures) {
    const std::pair<DagFunction, std::string_view> table[] = {
        {DagFunction::user_add, "userAdd(string,uint256)"},
        {DagFunction::user_save, "userSave(string,uint256)"},
        {DagFunction::user_draw, "userDraw(string,uint256)"},
        {DagFunction::user_balance, "userBalance(string)"},
        {DagFunction::user_transfer, "userTransfer(string,string,uint256)"},
    };
    for (const auto& [f, sig] : table) {
        const Bytes s = selector_bytes(sig);
        const uint32_t want =
            (uint32_t{s[0]} << 24) | (uint32_t{s[1]} << 16) | (uint32_t{s[2]} << 8) | s[3];
        EXPECT_EQ(exec::selector_of(f), want) << sig;
    }
}

TEST(exec_dag_transfer, address_is_fisco_0x5002) {
    EXPECT_EQ(to_hex(exec::kDagTransferAddress), "0x0000000000000000000000000000000000005002");
}

TEST(exec_dag_transfer, encoding_is_the_solidity_abi) {
    // userSave("alice", 100): selector, offset 0x40, amount, then the string tail.
    EXPECT_EQ(
        call(DagFunction::user_save, "alice", 100),
        concat({selector_bytes("userSave(string,uint256)"), word(0x40), word(100), tail("alice")}));
    // userBalance("bob"): one head word.
    EXPECT_EQ(call(DagFunction::user_balance, "bob"),
              concat({selector_bytes("userBalance(string)"), word(0x20), tail("bob")}));
    // userTransfer(a 40-byte name, "z", 7): tails in order, the second after the first's padding.
    const std::string long_name(40, 'q');
    EXPECT_EQ(call(DagFunction::user_transfer, long_name, 7, "z"),
              concat({selector_bytes("userTransfer(string,string,uint256)"), word(0x60),
                      word(0x60 + 32 + 64), word(7), tail(long_name), tail("z")}));
}

TEST(exec_dag_transfer, encode_decode_round_trip) {
    const std::string names[] = {"",
                                 "a",
                                 std::string(31, 'b'),
                                 std::string(32, 'c'),
                                 std::string(33, 'd'),
                                 std::string(64, 'e'),
                                 std::string("\0\xff\x01", 3),
                                 std::string(100, 'f')};
    const u256 amounts[] = {0, 1, 51401, u256{1} << 128, kMax};
    for (uint8_t f = 0; f < 5; ++f) {
        const auto function = static_cast<DagFunction>(f);
        for (const std::string& user : names)
            for (const std::string& to : names)
                for (const u256& amount : amounts) {
                    if (function != DagFunction::user_transfer && !to.empty()) continue;
                    const u256 a = function == DagFunction::user_balance ? u256{0} : amount;
                    const Bytes data = call(function, user, a, to);
                    const auto back = exec::decode_call(data);
                    ASSERT_TRUE(back) << to_hex(data);
                    EXPECT_EQ(back->function, function);
                    EXPECT_EQ(back->user, user);
                    EXPECT_EQ(back->to,
                              function == DagFunction::user_transfer ? to : std::string{});
                    EXPECT_EQ(back->amount, a);
                    if (function == DagFunction::user_balance) break;
                }
    }
}

TEST(exec_dag_transfer, decode_rejects_short_calldata) {
    const Bytes good = call(DagFunction::user_transfer, "alice", 5, "bob");
    ASSERT_TRUE(exec::decode_call(good));
    for (size_t n = 0; n < good.size(); ++n)
        EXPECT_FALSE(exec::decode_call(BytesView{good.data(), n})) << "first " << n << " bytes";
    // A selector alone, and a head without its tails.
    EXPECT_FALSE(exec::decode_call(selector_bytes("userBalance(string)")));
    EXPECT_FALSE(exec::decode_call(concat({selector_bytes("userBalance(string)"), word(0x20)})));
}

TEST(exec_dag_transfer, decode_rejects_unknown_selector) {
    Bytes data = call(DagFunction::user_add, "alice", 1);
    data[3] ^= 0x01;
    EXPECT_FALSE(exec::decode_call(data));
    // Right arguments, a function DagTransfer does not have.
    EXPECT_FALSE(exec::decode_call(
        concat({selector_bytes("userAdd(string,uint128)"), word(0x40), word(1), tail("alice")})));
    EXPECT_FALSE(exec::decode_call(
        concat({selector_bytes("transfer(address,uint256)"), word(0x40), word(1), tail("alice")})));
}

TEST(exec_dag_transfer, decode_rejects_non_canonical_offset) {
    const Bytes sel = selector_bytes("userSave(string,uint256)");
    // The canonical form decodes.
    ASSERT_TRUE(exec::decode_call(concat({sel, word(0x40), word(1), tail("alice")})));
    // Tail one word further on, with a gap word: valid for solc, not canonical.
    EXPECT_FALSE(exec::decode_call(concat({sel, word(0x60), word(1), word(0), tail("alice")})));
    // Offset pointing into the head (the amount word read as a length).
    EXPECT_FALSE(exec::decode_call(concat({sel, word(0x20), word(5), tail("alice")})));
    // Offset with high bytes set.
    EXPECT_FALSE(
        exec::decode_call(concat({sel, word((u256{1} << 200) + 0x40), word(1), tail("alice")})));
    EXPECT_FALSE(
        exec::decode_call(concat({sel, word(u256{1} << 32 | 0x40), word(1), tail("alice")})));
    // userTransfer with the tails swapped (offsets still in range).
    const Bytes tsel = selector_bytes("userTransfer(string,string,uint256)");
    ASSERT_TRUE(
        exec::decode_call(concat({tsel, word(0x60), word(0xa0), word(3), tail("ab"), tail("cd")})));
    EXPECT_FALSE(
        exec::decode_call(concat({tsel, word(0xa0), word(0x60), word(3), tail("ab"), tail("cd")})));
    // Both offsets at the same tail.
    EXPECT_FALSE(exec::decode_call(concat({tsel, word(0x60), word(0x60), word(3), tail("ab")})));
}

TEST(exec_dag_transfer, decode_rejects_length_past_the_end) {
    const Bytes sel = selector_bytes("userAdd(string,uint256)");
    Bytes t = tail("alice");
    // A length the padded tail still covers takes in a zero padding byte: valid, another name.
    t[31] = 6;
    const Bytes six_data = concat({sel, word(0x40), word(1), t});  // the names view into it
    const auto six = exec::decode_call(six_data);
    ASSERT_TRUE(six);
    EXPECT_EQ(six->user, std::string_view("alice\0", 6));
    t[31] = 33;  // beyond the one padded word of the tail
    EXPECT_FALSE(exec::decode_call(concat({sel, word(0x40), word(1), t})));
    t = tail("alice");
    t[28] = 0x01;  // 2^24 + 5
    EXPECT_FALSE(exec::decode_call(concat({sel, word(0x40), word(1), t})));
    Bytes huge = word(kMax);
    EXPECT_FALSE(exec::decode_call(concat({sel, word(0x40), word(1), huge, Bytes(32, 'x')})));
}

TEST(exec_dag_transfer, decode_rejects_nonzero_padding) {
    const Bytes sel = selector_bytes("userDraw(string,uint256)");
    for (size_t pad = 5; pad < 32; ++pad) {
        Bytes t = tail("alice");
        t[32 + pad] = 0x80;
        EXPECT_FALSE(exec::decode_call(concat({sel, word(0x40), word(1), t})))
            << "padding byte " << pad;
    }
    // The second tail of userTransfer too.
    Bytes second = tail("bob");
    second[32 + 3] = 0x01;
    EXPECT_FALSE(exec::decode_call(concat({selector_bytes("userTransfer(string,string,uint256)"),
                                           word(0x60), word(0xa0), word(1), tail("ab"), second})));
}

TEST(exec_dag_transfer, decode_rejects_trailing_bytes) {
    for (const DagFunction f :
         {DagFunction::user_add, DagFunction::user_balance, DagFunction::user_transfer}) {
        Bytes data = call(f, "alice", 1, "bob");
        ASSERT_TRUE(exec::decode_call(data));
        data.push_back(0);
        EXPECT_FALSE(exec::decode_call(data)) << "one zero byte";
        data.resize(data.size() + 31, 0);
        EXPECT_FALSE(exec::decode_call(data)) << "one zero word";
    }
}

TEST(exec_dag_transfer, code_words_are_twos_complement) {
    EXPECT_EQ(exec::code_word(DagCode::ok), 0);
    EXPECT_EQ(exec::code_word(DagCode::invalid_amount), kMax - 51401 + 1);
    EXPECT_EQ(exec::code_word(DagCode::user_not_found), kMax - 51402 + 1);
    EXPECT_EQ(exec::code_word(DagCode::user_exists), kMax - 51403 + 1);
    EXPECT_EQ(exec::code_word(DagCode::insufficient_balance), kMax - 51404 + 1);
    EXPECT_EQ(exec::code_word(DagCode::overflow), kMax - 51405 + 1);
    // 2^16 - 51401 = 0x3737: the word is 0xff…ff3737, as Solidity's int256(-51401) reads as
    // uint256.
    EXPECT_EQ(exec::encode_return(DagCode::invalid_amount),
              "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff3737"_hex);
    EXPECT_EQ(exec::encode_return(DagCode::overflow),
              "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff3733"_hex);
    EXPECT_EQ(exec::encode_return(DagCode::user_not_found, 0),
              concat({"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff3736"_hex,
                      word(0)}));
    EXPECT_EQ(exec::encode_return(DagCode::ok, 42), concat({word(0), word(42)}));
}

// ---- the return codes through exec::execute ----------------------------------------------------

constexpr uint64_t kPrice = 3;
const Address kSender = test::derived_address(1, 0xda9);
const Address kCoinbase = test::derived_address(2, 0xda9);
const u256 kSenderBalance = u256{1} << 100;

/// One block of DagTransfer calls from kSender (consecutive nonces from 0), executed against
/// `users` with every schedule; the outcomes must agree, and the first is returned.
struct CallBlock {
    state::MemoryState parent;
    std::vector<Bytes> calls;
    std::vector<u256> values;
    exec::Outcome outcome;

    explicit CallBlock(std::initializer_list<std::pair<std::string_view, u256>> users) {
        parent.set_account(kSender, {0, kSenderBalance});
        for (const auto& [name, bal] : users) parent.set_user(name, bal);
    }
    CallBlock& add(Bytes data, const u256& value = 0) {
        calls.push_back(std::move(data));
        values.push_back(value);
        return *this;
    }
    void run() {
        block::Header h;
        h.coinbase = kCoinbase;
        h.gas_limit = 30'000'000;
        test::BlockBuilder b{h, 7};
        for (size_t i = 0; i < calls.size(); ++i)
            b.add(test::make_tx(i, exec::kDagTransferAddress, values[i], b.keep(calls[i]), 200'000,
                                kPrice),
                  kSender);
        std::optional<exec::Outcome> first;
        for (const auto s : {exec::Schedule::serial, exec::Schedule::levels,
                             exec::Schedule::dynamic, exec::Schedule::automatic}) {
            auto r = exec::execute(b.block, parent, state::Lattice{}, exec::ChainConfig{}, {s});
            ASSERT_TRUE(r) << exec::describe(r.error());
            if (!first) {
                first = std::move(*r);
            } else {
                EXPECT_EQ(r->receipts, first->receipts);
                EXPECT_EQ(r->writes, first->writes);
                EXPECT_EQ(r->state_root, first->state_root);
            }
        }
        outcome = std::move(*first);
        // And the oracle agrees.
        const auto o =
            test::oracle::execute(b.block, parent, state::Lattice{}, exec::ChainConfig{});
        ASSERT_TRUE(o);
        EXPECT_EQ(o->receipts, outcome.receipts);
        EXPECT_EQ(o->writes, outcome.writes);
        EXPECT_EQ(o->state_root, outcome.state_root);
    }
    /// The user's balance after the block: written, else the parent's; nullopt if absent.
    std::optional<u256> user(std::string_view name) const {
        for (const auto& [n, bal] : outcome.writes.users)
            if (n == name) return bal;
        return parent.find_user(name);
    }
    bool user_written(std::string_view name) const {
        for (const auto& [n, bal] : outcome.writes.users)
            if (n == name) return true;
        return false;
    }
    const Bytes& output(size_t i) const { return outcome.receipts.at(i).output; }
};

Bytes ret(DagCode c) { return exec::encode_return(c); }

TEST(exec_dag_transfer, user_add) {
    CallBlock b{{"old", 5}};
    b.add(call(DagFunction::user_add, "alice", 100))
        .add(call(DagFunction::user_add, "old", 1))
        .add(call(DagFunction::user_add, "alice", 7))
        .add(call(DagFunction::user_add, "zero", 0));
    b.run();
    EXPECT_EQ(b.output(0), ret(DagCode::ok));
    EXPECT_EQ(b.output(1), ret(DagCode::user_exists));
    EXPECT_EQ(b.output(2), ret(DagCode::user_exists));
    EXPECT_EQ(b.output(3), ret(DagCode::ok));
    EXPECT_EQ(b.user("alice"), 100);
    EXPECT_EQ(b.user("old"), 5);
    EXPECT_FALSE(b.user_written("old"));
    EXPECT_EQ(b.user("zero"), 0);
    EXPECT_TRUE(b.user_written("zero"));  // created at 0: it exists now
}

TEST(exec_dag_transfer, user_save) {
    CallBlock b{{"old", 5}, {"full", kMax - 1}};
    b.add(call(DagFunction::user_save, "new", 10))    // creates
        .add(call(DagFunction::user_save, "old", 7))  // adds
        .add(call(DagFunction::user_save, "old", 0))  // amount 0
        .add(call(DagFunction::user_save, "none", 0))
        .add(call(DagFunction::user_save, "full", 2))   // overflow
        .add(call(DagFunction::user_save, "full", 1));  // exactly 2^256 - 1
    b.run();
    EXPECT_EQ(b.output(0), ret(DagCode::ok));
    EXPECT_EQ(b.output(1), ret(DagCode::ok));
    EXPECT_EQ(b.output(2), ret(DagCode::invalid_amount));
    EXPECT_EQ(b.output(3), ret(DagCode::invalid_amount));
    EXPECT_EQ(b.output(4), ret(DagCode::overflow));
    EXPECT_EQ(b.output(5), ret(DagCode::ok));
    EXPECT_EQ(b.user("new"), 10);
    EXPECT_EQ(b.user("old"), 12);
    EXPECT_EQ(b.user("none"), std::nullopt);
    EXPECT_EQ(b.user("full"), kMax);
}

TEST(exec_dag_transfer, user_draw) {
    CallBlock b{{"alice", 100}};
    b.add(call(DagFunction::user_draw, "alice", 30))
        .add(call(DagFunction::user_draw, "bob", 1))      // no user
        .add(call(DagFunction::user_draw, "alice", 71))   // low balance: 70 left
        .add(call(DagFunction::user_draw, "alice", 70));  // exactly all
    b.run();
    EXPECT_EQ(b.output(0), ret(DagCode::ok));
    EXPECT_EQ(b.output(1), ret(DagCode::user_not_found));
    EXPECT_EQ(b.output(2), ret(DagCode::insufficient_balance));
    EXPECT_EQ(b.output(3), ret(DagCode::ok));
    EXPECT_EQ(b.user("alice"), 0);
    EXPECT_EQ(b.user("bob"), std::nullopt);
}

TEST(exec_dag_transfer, user_balance) {
    CallBlock b{{"alice", 100}};
    b.add(call(DagFunction::user_balance, "alice"))
        .add(call(DagFunction::user_balance, "bob"))
        .add(call(DagFunction::user_save, "alice", 5))
        .add(call(DagFunction::user_balance, "alice"));
    b.run();
    EXPECT_EQ(b.output(0), exec::encode_return(DagCode::ok, 100));
    EXPECT_EQ(b.output(1), exec::encode_return(DagCode::user_not_found, 0));
    EXPECT_EQ(b.output(1).size(), 64u);
    EXPECT_EQ(b.output(3), concat({word(0), word(105)}));
    EXPECT_EQ(b.user("bob"), std::nullopt);  // reading does not create
}

TEST(exec_dag_transfer, user_transfer) {
    CallBlock b{{"alice", 100}, {"bob", 1}, {"full", kMax}};
    b.add(call(DagFunction::user_transfer, "alice", 30, "bob"))      // ok
        .add(call(DagFunction::user_transfer, "alice", 0, "bob"))    // amount 0
        .add(call(DagFunction::user_transfer, "alice", 5, "alice"))  // from == to
        .add(call(DagFunction::user_transfer, "ghost", 5,
                  "ghost"))  // from == to, absent: still a no-op
        .add(
            call(DagFunction::user_transfer, "ghost", 0, "ghost"))  // amount 0 wins over from == to
        .add(call(DagFunction::user_transfer, "nobody", 1, "bob"))  // no user
        .add(call(DagFunction::user_transfer, "alice", 71, "bob"))  // low balance: 70 left
        .add(call(DagFunction::user_transfer, "alice", 20, "carol"))  // creates carol at 0 + 20
        .add(call(DagFunction::user_transfer, "alice", 1, "full"));   // overflow
    b.run();
    EXPECT_EQ(b.output(0), ret(DagCode::ok));
    EXPECT_EQ(b.output(1), ret(DagCode::invalid_amount));
    EXPECT_EQ(b.output(2), ret(DagCode::ok));
    EXPECT_EQ(b.output(3), ret(DagCode::ok));
    EXPECT_EQ(b.output(4), ret(DagCode::invalid_amount));
    EXPECT_EQ(b.output(5), ret(DagCode::user_not_found));
    EXPECT_EQ(b.output(6), ret(DagCode::insufficient_balance));
    EXPECT_EQ(b.output(7), ret(DagCode::ok));
    EXPECT_EQ(b.output(8), ret(DagCode::overflow));
    EXPECT_EQ(b.user("alice"), 50);
    EXPECT_EQ(b.user("bob"), 31);
    EXPECT_EQ(b.user("carol"), 20);
    EXPECT_EQ(b.user("full"), kMax);
    EXPECT_FALSE(b.user_written("full"));
    EXPECT_EQ(b.user("ghost"), std::nullopt);
    EXPECT_EQ(b.user("nobody"), std::nullopt);
}

// ---- one table per function: every code it returns, each as a block of one call -----------------
//
// The contract is FISCO BCOS 2.x's DagTransferPrecompiled (docs/formats.md, "DagTransfer
// precompile"): the names are checked first (an empty one is -51400 in every function), then the
// amount, then the table. Every row runs against the same parent users, with every schedule and
// the oracle.

using Users = std::vector<std::pair<std::string, u256>>;

struct CodeCase {
    const char* what;
    Bytes data;
    Bytes output;       ///< the return data
    Users user_writes;  ///< the user entries of the write set, in key order
};

const std::initializer_list<std::pair<std::string_view, u256>> kTableUsers = {
    {"alice", 100}, {"bob", 1}, {"full", kMax}};

void run_table(const std::vector<CodeCase>& table) {
    for (const CodeCase& c : table) {
        SCOPED_TRACE(c.what);
        CallBlock b{kTableUsers};
        b.add(c.data);
        b.run();
        ASSERT_EQ(b.outcome.receipts.size(), 1u);
        const exec::Receipt& r = b.outcome.receipts[0];
        // A code is a successful call: status 1, intrinsic gas, nonce spent.
        EXPECT_TRUE(r.status);
        const tx::Transaction t = test::make_tx(0, exec::kDagTransferAddress, 0, c.data);
        EXPECT_EQ(r.gas_used, tx::intrinsic_gas(t));
        EXPECT_EQ(to_hex(r.output), to_hex(c.output));
        EXPECT_EQ(b.outcome.writes.users, c.user_writes);
        // The only accounts written: the sender (nonce, fee) and the coinbase.
        EXPECT_EQ(b.outcome.writes.accounts.size(), 2u);
    }
}

// The tables keep one case a line where they can: clang-format would spread each over four.
// clang-format off

TEST(exec_dag_transfer_codes, user_add) {
    run_table({
        {"new user: 0", call(DagFunction::user_add, "carol", 7), ret(DagCode::ok), {{"carol", 7}}},
        {"new user at 0: 0 (userAdd takes any amount)", call(DagFunction::user_add, "zero", 0), ret(DagCode::ok),
         {{"zero", 0}}},
        {"user exists: -51403", call(DagFunction::user_add, "alice", 1), ret(DagCode::user_exists), {}},
        {"empty name: -51400", call(DagFunction::user_add, "", 5), ret(DagCode::invalid_user_name), {}},
        {"empty name, amount 0: -51400", call(DagFunction::user_add, "", 0), ret(DagCode::invalid_user_name), {}},
    });
}

TEST(exec_dag_transfer_codes, user_save) {
    run_table({
        {"creates: 0", call(DagFunction::user_save, "carol", 10), ret(DagCode::ok), {{"carol", 10}}},
        {"adds: 0", call(DagFunction::user_save, "alice", 7), ret(DagCode::ok), {{"alice", 107}}},
        {"up to 2^256 - 1: 0", call(DagFunction::user_save, "bob", kMax - 1), ret(DagCode::ok), {{"bob", kMax}}},
        {"amount 0: -51401", call(DagFunction::user_save, "alice", 0), ret(DagCode::invalid_amount), {}},
        {"amount 0, no user: -51401", call(DagFunction::user_save, "nobody", 0), ret(DagCode::invalid_amount), {}},
        {"overflow: -51405", call(DagFunction::user_save, "full", 1), ret(DagCode::overflow), {}},
        {"empty name: -51400", call(DagFunction::user_save, "", 5), ret(DagCode::invalid_user_name), {}},
        {"empty name before amount 0: -51400", call(DagFunction::user_save, "", 0),
         ret(DagCode::invalid_user_name), {}},
    });
}

TEST(exec_dag_transfer_codes, user_draw) {
    run_table({
        {"draws: 0", call(DagFunction::user_draw, "alice", 30), ret(DagCode::ok), {{"alice", 70}}},
        {"draws all: 0", call(DagFunction::user_draw, "alice", 100), ret(DagCode::ok), {{"alice", 0}}},
        {"amount 0: -51401", call(DagFunction::user_draw, "alice", 0), ret(DagCode::invalid_amount), {}},
        {"amount 0 before the user is looked up: -51401", call(DagFunction::user_draw, "nobody", 0),
         ret(DagCode::invalid_amount), {}},
        {"no user: -51402", call(DagFunction::user_draw, "nobody", 1), ret(DagCode::user_not_found), {}},
        {"low balance: -51404", call(DagFunction::user_draw, "alice", 101), ret(DagCode::insufficient_balance), {}},
        {"empty name: -51400", call(DagFunction::user_draw, "", 5), ret(DagCode::invalid_user_name), {}},
        {"empty name before amount 0: -51400", call(DagFunction::user_draw, "", 0),
         ret(DagCode::invalid_user_name), {}},
    });
}

TEST(exec_dag_transfer_codes, user_balance) {
    run_table({
        {"balance: (0, balance)", call(DagFunction::user_balance, "alice"),
         exec::encode_return(DagCode::ok, 100), {}},
        {"no user: (-51402, 0)", call(DagFunction::user_balance, "nobody"),
         exec::encode_return(DagCode::user_not_found, 0), {}},
        {"empty name: (-51400, 0)", call(DagFunction::user_balance, ""),
         exec::encode_return(DagCode::invalid_user_name, 0), {}},
    });
}

TEST(exec_dag_transfer_codes, user_transfer) {
    using F = DagFunction;
    run_table({
        {"moves: 0", call(F::user_transfer, "alice", 30, "bob"), ret(DagCode::ok), {{"alice", 70}, {"bob", 31}}},
        {"creates the receiver: 0", call(F::user_transfer, "alice", 20, "carol"), ret(DagCode::ok),
         {{"alice", 80}, {"carol", 20}}},
        {"to itself: 0, nothing moves", call(F::user_transfer, "alice", 5, "alice"), ret(DagCode::ok), {}},
        {"to itself, no user: 0", call(F::user_transfer, "ghost", 5, "ghost"), ret(DagCode::ok), {}},
        {"amount 0: -51401", call(F::user_transfer, "alice", 0, "bob"), ret(DagCode::invalid_amount), {}},
        {"amount 0 before to itself: -51401", call(F::user_transfer, "ghost", 0, "ghost"),
         ret(DagCode::invalid_amount), {}},
        {"no sender: -51402", call(F::user_transfer, "nobody", 1, "bob"), ret(DagCode::user_not_found), {}},
        {"no sender, no receiver: -51402, nobody created", call(F::user_transfer, "nobody", 1, "carol"),
         ret(DagCode::user_not_found), {}},
        {"low balance: -51404", call(F::user_transfer, "alice", 101, "carol"), ret(DagCode::insufficient_balance),
         {}},
        {"receiver overflows: -51405", call(F::user_transfer, "alice", 1, "full"), ret(DagCode::overflow), {}},
        {"empty sender: -51400", call(F::user_transfer, "", 5, "bob"), ret(DagCode::invalid_user_name), {}},
        {"empty receiver: -51400", call(F::user_transfer, "alice", 5, ""), ret(DagCode::invalid_user_name), {}},
        {"both empty, not a no-op: -51400", call(F::user_transfer, "", 5, ""), ret(DagCode::invalid_user_name), {}},
        {"empty name before amount 0: -51400", call(F::user_transfer, "alice", 0, ""),
         ret(DagCode::invalid_user_name), {}},
    });
}

// clang-format on

TEST(exec_dag_transfer_codes, empty_names_take_no_user_keys) {
    // FISCO BCOS gives a call with an empty name no parallel tags: it touches no user, so it
    // conflicts with nothing but its sender's other transactions.
    const Address other = test::derived_address(3, 0xda9);
    const std::pair<Bytes, Bytes> pairs[] = {
        {call(DagFunction::user_add, "", 5), call(DagFunction::user_draw, "", 5)},
        {call(DagFunction::user_balance, ""), call(DagFunction::user_save, "", 1)},
        {call(DagFunction::user_transfer, "alice", 5, ""),
         call(DagFunction::user_draw, "alice", 1)},
        {call(DagFunction::user_transfer, "", 5, "bob"), call(DagFunction::user_save, "bob", 1)},
    };
    for (const auto& [first, second] : pairs) {
        state::MemoryState parent;
        parent.set_account(kSender, {0, kSenderBalance});
        parent.set_account(other, {0, kSenderBalance});
        parent.set_user("alice", 100);
        parent.set_user("bob", 1);
        block::Header h;
        h.coinbase = kCoinbase;
        h.gas_limit = 30'000'000;
        test::BlockBuilder b{h, 9};
        b.add(test::make_tx(0, exec::kDagTransferAddress, 0, b.keep(first), 200'000, kPrice),
              kSender);
        b.add(test::make_tx(0, exec::kDagTransferAddress, 0, b.keep(second), 200'000, kPrice),
              other);
        const auto r = exec::execute(b.block, parent, state::Lattice{}, exec::ChainConfig{});
        ASSERT_TRUE(r) << exec::describe(r.error());
        EXPECT_EQ(r->dag.edges, 0u) << to_hex(first);
        EXPECT_EQ(r->dag.levels, 1u) << to_hex(first);
    }
}

TEST(exec_dag_transfer, failing_calls_consume_gas_and_nonce) {
    CallBlock b{{"alice", 1}};
    b.add(call(DagFunction::user_draw, "nobody", 1))    // code -51402, status 1
        .add(call(DagFunction::user_save, "alice", 0))  // code -51401, status 1
        .add(call(DagFunction::user_add, "alice", 1))   // code -51403, status 1
        .add(call(DagFunction::user_add, "x", 1), 1)    // payable: status 0, all gas
        .add(Bytes{0x01, 0x02});                        // malformed: status 0, all gas
    b.run();
    uint64_t gas = 0;
    for (size_t i = 0; i < 3; ++i) {
        const auto& r = b.outcome.receipts[i];
        EXPECT_TRUE(r.status) << i;
        tx::Transaction t = test::make_tx(0, exec::kDagTransferAddress, 0, b.calls[i]);
        EXPECT_EQ(r.gas_used, tx::intrinsic_gas(t)) << i;
        gas += r.gas_used;
        EXPECT_EQ(r.cumulative_gas_used, gas);
    }
    for (size_t i = 3; i < 5; ++i) {
        const auto& r = b.outcome.receipts[i];
        EXPECT_FALSE(r.status) << i;
        EXPECT_EQ(r.gas_used, 200'000u) << i;
        EXPECT_TRUE(r.output.empty());
        gas += r.gas_used;
        EXPECT_EQ(r.cumulative_gas_used, gas);
    }
    EXPECT_EQ(b.outcome.gas_used, gas);
    EXPECT_EQ(b.outcome.fees, u256{gas} * kPrice);
    // Sender: five nonces, the fees and nothing else (the payable call's value did not move).
    ASSERT_EQ(b.outcome.writes.accounts.size(), 2u);  // sender and coinbase
    for (const auto& [a, acc] : b.outcome.writes.accounts) {
        if (a == kSender) {
            EXPECT_EQ(acc.nonce, 5u);
            EXPECT_EQ(acc.balance, kSenderBalance - u256{gas} * kPrice);
        } else {
            EXPECT_EQ(a, kCoinbase);
            EXPECT_EQ(acc, (state::Account{0, u256{gas} * kPrice}));
        }
    }
    EXPECT_EQ(b.user("x"), std::nullopt);
    EXPECT_EQ(b.user("alice"), 1);
    EXPECT_TRUE(b.outcome.writes.users.empty());
}

}  // namespace
