// The genesis file (docs/formats.md, "Genesis") means one thing or is refused (issue 20,
// finding 7): a member named twice, at any depth, is an error naming it, where nlohmann's DOM
// would keep the last value; the members without a meaningful default are required; each
// error is one line naming the member. What barrel writes (gen's genesis, a datadir's
// meta/genesis and meta/chain, all chain::to_json_text) parses back.

#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/rlp/encode.hpp>

#include "workloads.hpp"
#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace barrel;

namespace {

constexpr const char* kA = "0x1111111111111111111111111111111111111111";

std::string error_of(std::string_view text) {
    const auto g = chain::parse_genesis(text);
    return g ? "accepted" : g.error();
}

}  // namespace

TEST(chain_genesis, a_member_named_twice_is_refused_naming_it) {
    struct Case {
        const char* name;
        std::string text;
        std::string error;
    };
    const std::string account = std::string{"\""} + kA + "\": {\"balance\": \"1\"}";
    const std::vector<Case> cases{
        {"chain_id", R"({"chain_id": 1, "gas_limit": 1, "accounts": {}, "chain_id": 2})",
         "duplicate member \"chain_id\""},
        {"accounts", R"({"chain_id": 1, "accounts": {}, "gas_limit": 1, "accounts": {}})",
         "duplicate member \"accounts\""},
        {"an address",
         R"({"chain_id": 1, "gas_limit": 1, "accounts": {)" + account + ", " + account + "}}",
         std::string{"accounts: duplicate member \""} + kA + "\""},
        {"an account's balance",
         R"({"chain_id": 1, "gas_limit": 1, "accounts": {")" + std::string{kA} +
             R"(": {"balance": "1", "nonce": 0, "balance": "2"}}})",
         std::string{"accounts."} + kA + ": duplicate member \"balance\""},
        {"a user",
         R"({"chain_id": 1, "gas_limit": 1, "accounts": {}, "users": {"al": 1, "bo": 2, "al": 3}})",
         "users: duplicate member \"al\""},
        // Even where the value is wrong anyway: the first thing said is that it is ambiguous.
        {"inside an array", R"({"chain_id": [{"a": 1}, {"b": 1, "b": 2}]})",
         "chain_id.1: duplicate member \"b\""},
        {"the empty name", R"({"users": {"": 1, "": 2}})", "users: duplicate member \"\""},
    };
    for (const Case& c : cases) EXPECT_EQ(error_of(c.text), c.error) << c.name;
}

TEST(chain_genesis, the_same_address_in_another_case_is_listed_twice) {
    const std::string text = R"({"chain_id": 1, "gas_limit": 1, "accounts": {
        "0xabcdefabcdefabcdefabcdefabcdefabcdefabcd": {"balance": "1"},
        "0xABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCD": {"balance": "2"}}})";
    EXPECT_EQ(error_of(text), "accounts.0xabcdefabcdefabcdefabcdefabcdefabcdefabcd: listed twice");
}

TEST(chain_genesis, a_required_member_missing_is_named) {
    struct Case {
        std::string text;
        std::string error;
    };
    const std::vector<Case> cases{
        // The issue's example: a chain id alone is not a genesis.
        {R"({"chain_id": "0x1"})", "gas_limit: missing"},
        {R"({"gas_limit": 1, "accounts": {}})", "chain_id: missing"},
        {R"({"chain_id": 1, "accounts": {}})", "gas_limit: missing"},
        {R"({"chain_id": 1, "gas_limit": 1})", "accounts: missing"},
        {R"({})", "chain_id: missing"},
        {R"({"chain_id": 1, "gas_limit": 1, "accounts": {")" + std::string{kA} +
             R"(": {"nonce": 1}}})",
         std::string{"accounts."} + kA + ": balance: missing"},
        // What the file says is checked before what it lacks.
        {R"({"chain_id": 0})", "chain_id: must be at least 1, got 0"},
        {R"({"gas_limit": "-1"})", "gas_limit: not an unsigned 64-bit integer"},
    };
    for (const Case& c : cases) EXPECT_EQ(error_of(c.text), c.error) << c.text;
}

TEST(chain_genesis, other_errors_name_the_member) {
    struct Case {
        std::string text;
        std::string error;
    };
    const std::vector<Case> cases{
        {"[]", "genesis: not a JSON object"},
        {R"({"chain_id": 1, "gas_limit": 1, "accounts": {}, "alloc": {}})",
         "unknown member \"alloc\""},
        {R"({"chain_id": 1, "gas_limit": 1, "accounts": {"0x11": {"balance": 1}}})",
         "accounts.0x11: not a 20-byte 0x address"},
        {R"({"chain_id": 1, "gas_limit": 1, "accounts": {")" + std::string{kA} +
             R"(": {"balance": 1, "code": "0x"}}})",
         std::string{"accounts."} + kA + ": unknown member \"code\""},
        {R"({"chain_id": 1, "gas_limit": 1, "accounts": [], "users": {}})",
         "accounts: not an object"},
        {R"({"chain_id": 1, "gas_limit": 1, "accounts": {}, "coinbase": "0x12"})",
         "coinbase: not a 20-byte 0x address"},
        {R"({"chain_id": 1, "gas_limit": 1, "accounts": {}, "users": {"": 1}})",
         "users: empty user name"},
        {R"({"chain_id": 1, "gas_limit": 1, "accounts": {}, "users": {"al": -1}})",
         "users.al: not an unsigned 256-bit integer"},
        {R"({"chain_id": 1,)",
         "invalid JSON: [json.exception.parse_error.101] parse error at line 1, column 16: "
         "syntax error while parsing object key - unexpected end of input; expected string "
         "literal"},
        {R"({"chain_id": 1} x)",
         "invalid JSON: [json.exception.parse_error.101] parse error at line 1, column 17: "
         "syntax error while parsing value - invalid literal; last read: '1} x'; expected end of "
         "input"},
    };
    for (const Case& c : cases) EXPECT_EQ(error_of(c.text), c.error) << c.text;
}

TEST(chain_genesis, the_optional_members_take_their_documented_defaults) {
    const auto g = chain::parse_genesis(R"({"chain_id": 5, "gas_limit": "0x1c9c380",
        "accounts": {")" + std::string{kA} +
                                        R"(": {"balance": "0x10"}}})");
    ASSERT_TRUE(g) << g.error();
    EXPECT_EQ(g->config.chain_id, 5u);
    EXPECT_EQ(g->gas_limit, 30'000'000u);
    EXPECT_EQ(g->config.base_fee, u256{0});
    EXPECT_EQ(g->timestamp, 0u);
    EXPECT_EQ(g->coinbase, Address{});
    ASSERT_EQ(g->alloc.accounts.size(), 1u);
    EXPECT_EQ(g->alloc.accounts[0].first, *address_from_hex(kA));
    EXPECT_EQ(g->alloc.accounts[0].second.nonce, 0u);
    EXPECT_EQ(g->alloc.accounts[0].second.balance, u256{16});
    EXPECT_TRUE(g->alloc.users.empty());

    const auto empty = chain::parse_genesis(R"({"chain_id": 1, "gas_limit": 1, "accounts": {}})");
    ASSERT_TRUE(empty) << empty.error();
    EXPECT_TRUE(empty->alloc.accounts.empty());
}

TEST(chain_genesis, what_barrel_writes_parses_back) {
    // gen's genesis, and what init stores as meta/genesis; meta/chain is the same document with
    // empty accounts and users.
    const gen::Workload w = test::generate_or_throw(
        {.seed = 3, .blocks = 1, .txs = 2, .accounts = 5, .mix = gen::Mix::mixed});
    const auto back = chain::parse_genesis(chain::to_json_text(w.genesis));
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(*back, w.genesis);
    chain::Genesis parameters = w.genesis;
    parameters.alloc = {};
    const auto chain_document = chain::parse_genesis(chain::to_json_text(parameters));
    ASSERT_TRUE(chain_document) << chain_document.error();
    EXPECT_EQ(*chain_document, parameters);
}

// Issue 29, finding 6: a genesis balance near 2^256 overflowed the coinbase's credit and stopped
// sealing for good. The supply is bounded below 2^256 instead, so that no balance can overflow.
TEST(chain_genesis, a_supply_of_2_to_the_256_or_more_is_refused_naming_the_sum) {
    constexpr const char* kB = "0x2222222222222222222222222222222222222222";
    const std::string max = "0x" + std::string(64, 'f');
    auto two_accounts = [&](const std::string& a, const std::string& b) {
        // Appended piece by piece: gcc 12 at -O2 misreads a chain of temporaries' + as an
        // out-of-bounds copy (-Warray-bounds).
        std::string out = R"({"chain_id": 1, "gas_limit": 1, "accounts": {")";
        for (const std::string_view piece :
             {std::string_view{kA}, std::string_view{R"(": {"balance": ")"}, std::string_view{a},
              std::string_view{R"("}, ")"}, std::string_view{kB},
              std::string_view{R"(": {"balance": ")"}, std::string_view{b},
              std::string_view{R"("}}})"}})
            out += piece;
        return out;
    };
    // 2^256 − 1 in all is the most a chain may hold.
    EXPECT_EQ(error_of(two_accounts(max, "0x0")), "accepted");
    EXPECT_EQ(error_of(two_accounts("0x" + std::string(63, 'f') + "e", "0x1")), "accepted");
    EXPECT_EQ(error_of(two_accounts(max, "0x1")),
              "accounts: the balances sum to "
              "115792089237316195423570985008687907853269984665640564039457584007913129639936, "
              "not below 2^256 (no balance could overflow then)");
    EXPECT_EQ(error_of(two_accounts(max, max)),
              "accounts: the balances sum to "
              "231584178474632390847141970017375815706539969331281128078915168015826259279870, "
              "not below 2^256 (no balance could overflow then)");
    // DagTransfer users are another table, with its own overflow codes: not counted.
    EXPECT_EQ(error_of(std::string{R"({"chain_id": 1, "gas_limit": 1, "accounts": {")"} + kA +
                       R"(": {"balance": ")" + max + R"("}}, "users": {"u": ")" + max + R"("}})"),
              "accepted");
    // A genesis built in code meets the same rule.
    chain::Genesis g;
    Address other{};
    other[19] = 1;
    g.alloc.accounts = {{Address{}, {0, ~u256{0}}}, {other, {0, 1}}};
    const auto supply = chain::check_supply(g);
    ASSERT_FALSE(supply);
    EXPECT_NE(supply.error().find("not below 2^256"), std::string::npos);
}

// Issue 31: a CometBFT network pays each proposer's fees to the address the genesis maps its
// validator address to (`validator_coinbases`), else to the genesis coinbase.
namespace {

constexpr const char* kValidatorA = "AB12000000000000000000000000000000000001";
constexpr const char* kValidatorB = "0000000000000000000000000000000000000002";
constexpr const char* kFeeA = "0xfee000000000000000000000000000000000000a";

std::string with_coinbases(const std::string& members) {
    return R"({"chain_id": 1, "gas_limit": 1, "accounts": {}, "validator_coinbases": )" + members +
           "}";
}

}  // namespace

TEST(chain_genesis, validator_coinbases_map_validator_addresses_to_fee_addresses) {
    const auto g = chain::parse_genesis(
        with_coinbases(std::string{R"({")"} + kValidatorB + R"(": "0x)" + std::string(40, '2') +
                       R"(", ")" + kValidatorA + R"(": ")" + kFeeA + R"("})"));
    ASSERT_TRUE(g) << g.error();
    ASSERT_EQ(g->validator_coinbases.size(), 2u);
    const auto a = from_hex(kValidatorA).value();
    const auto b = from_hex(kValidatorB).value();
    // Sorted by validator.
    EXPECT_EQ(g->validator_coinbases[0].first, chain::ValidatorAddress::from_view(b));
    EXPECT_EQ(chain::validator_coinbase(*g, a), address_from_hex(kFeeA).value());
    EXPECT_EQ(chain::validator_coinbase(*g, b),
              address_from_hex("0x" + std::string(40, '2')).value());
    // CometBFT's lower-case spelling names the same validator.
    const auto lower = chain::parse_genesis(with_coinbases(
        R"({"ab12000000000000000000000000000000000001": ")" + std::string{kFeeA} + R"("})"));
    ASSERT_TRUE(lower) << lower.error();
    EXPECT_EQ(chain::validator_coinbase(*lower, a), address_from_hex(kFeeA).value());
    // Another validator, or a proposer address that is not 20 bytes: none.
    Bytes other = a;
    other[19] ^= 1;
    EXPECT_EQ(chain::validator_coinbase(*g, other), std::nullopt);
    EXPECT_EQ(chain::validator_coinbase(*g, BytesView{a}.first(19)), std::nullopt);
    EXPECT_EQ(chain::validator_coinbase(*g, BytesView{}), std::nullopt);

    // Written in CometBFT's spelling, and read back the same.
    const std::string text = chain::to_json_text(*g);
    EXPECT_NE(text.find(std::string{"\""} + kValidatorA + "\": \"" + kFeeA + "\""),
              std::string::npos)
        << text;
    const auto back = chain::parse_genesis(text);
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(*back, *g);
}

TEST(chain_genesis, malformed_validator_coinbases_are_refused_naming_the_entry) {
    const std::string fee = std::string{"\""} + kFeeA + "\"";
    const struct {
        std::string members;
        std::string error;
    } cases[] = {
        {"[]", "validator_coinbases: not an object"},
        {R"({"AB12": )" + fee + "}",
         "validator_coinbases.AB12: not a validator address (40 hex digits, as CometBFT prints "
         "it)"},
        {R"({"0xAB120000000000000000000000000000000001": )" + fee + "}",
         "validator_coinbases.0xAB120000000000000000000000000000000001: not a validator address "
         "(40 hex digits, as CometBFT prints it)"},
        {R"({"XB12000000000000000000000000000000000001": )" + fee + "}",
         "validator_coinbases.XB12000000000000000000000000000000000001: not a validator address "
         "(40 hex digits, as CometBFT prints it)"},
        {std::string{R"({")"} + kValidatorA + R"(": "0x12"})",
         std::string{"validator_coinbases."} + kValidatorA + ": not a 20-byte 0x address"},
        {std::string{R"({")"} + kValidatorA + R"(": 7})",
         std::string{"validator_coinbases."} + kValidatorA + ": not a 20-byte 0x address"},
        {std::string{R"({")"} + kValidatorA + R"(": )" + fee +
             R"(, "ab12000000000000000000000000000000000001": )" + fee + "}",
         std::string{"validator_coinbases."} + kValidatorA + ": listed twice"},
        {std::string{R"({")"} + kValidatorA + R"(": )" + fee + R"(, ")" + kValidatorA + R"(": )" +
             fee + "}",
         std::string{"validator_coinbases: duplicate member \""} + kValidatorA + "\""},
    };
    for (const auto& c : cases)
        EXPECT_EQ(error_of(with_coinbases(c.members)), c.error) << c.members;
}

TEST(chain_genesis, a_genesis_without_validator_coinbases_keeps_its_block_0_and_its_text) {
    const gen::Workload w = test::generate_or_throw(
        {.seed = 3, .blocks = 1, .txs = 2, .accounts = 5, .mix = gen::Mix::mixed});
    // Block 0's parent hash as it always was: keccak256(RLP([chain_id, base_fee])).
    Bytes config;
    rlp::encode(config, w.genesis.config.chain_id);
    rlp::encode(config, w.genesis.config.base_fee);
    Bytes list;
    rlp::encode_list(list, config);
    const block::Header h0 = chain::genesis_header(w.genesis);
    EXPECT_EQ(h0.parent_hash, keccak256(list));
    EXPECT_EQ(chain::to_json_text(w.genesis).find("validator_coinbases"), std::string::npos);

    // With fee addresses the genesis commits to them: another map, another block 0 (a datadir
    // of one refuses the other at InitChain), same state root.
    chain::Genesis mapped = w.genesis;
    mapped.validator_coinbases = {
        {chain::ValidatorAddress::from_view(from_hex(kValidatorA).value()),
         address_from_hex(kFeeA).value()}};
    chain::Genesis remapped = mapped;
    remapped.validator_coinbases[0].second[0] ^= 1;
    const block::Header m0 = chain::genesis_header(mapped);
    EXPECT_NE(m0.parent_hash, h0.parent_hash);
    EXPECT_NE(chain::genesis_header(remapped).parent_hash, m0.parent_hash);
    EXPECT_EQ(m0.state_root, h0.state_root);
}
