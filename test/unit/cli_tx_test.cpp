// `barrel-node tx decode`: exact JSON for each transaction type, every way the arguments or the
// transaction can be wrong, and every official TransactionTests vector through the command.

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>

#include "block_fixtures.hpp"
#include "cli_run.hpp"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>
#include <fstream>

using barrel::test::BadInputCase;
using barrel::test::run_cli;
using namespace barrel::literals;

namespace {

/// The example of EIP-155: nonce 9, 20 gwei, 21,000 gas, 1 ether to 0x3535…, chain id 1.
constexpr const char* kEip155Tx =
    "0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028"
    "ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800"
    "ccf555c9f3dc64214b297fb1966a3b6d83";

/// The same with one field changed (lengths fixed up by hand).
/// nonce 9 written as 0x0009 (two bytes, leading zero): list payload 108 → 110 bytes.
constexpr const char* kLeadingZeroNonce =
    "0xf86e820009"
    "8504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028"
    "ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800"
    "ccf555c9f3dc64214b297fb1966a3b6d83";
/// r = 0: list payload 108 → 76 bytes.
constexpr const char* kZeroR =
    "0xf84c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a7640000802580a0"
    "67cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83";
/// r = 5, which is no x coordinate on secp256k1: nothing to recover.
constexpr const char* kUnrecoverable =
    "0xf84c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a7640000802505a0"
    "67cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83";
/// s replaced by n − s: the same signature in its high-s form (EIP-2).
constexpr const char* kHighS =
    "0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028"
    "ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a098341627668089e51348fccfb4c7ff"
    "31c55912f2d2e47ef09652acf665fad3be";
/// gas limit 20,999: below the intrinsic 21,000.
constexpr const char* kLowGas =
    "0xf86c098504a817c800825207943535353535353535353535353535353535353535880de0b6b3a76400008025a028"
    "ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800"
    "ccf555c9f3dc64214b297fb1966a3b6d83";
/// v = 29: neither 27/28 (pre-EIP-155) nor ≥ 35 (EIP-155).
constexpr const char* kBadV =
    "0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a7640000801da028"
    "ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800"
    "ccf555c9f3dc64214b297fb1966a3b6d83";
/// v = 36 = 0 × 2 + 35 + 1: signed (so it claims) for chain id 0.
constexpr const char* kChainZero =
    "0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008024a028"
    "ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800"
    "ccf555c9f3dc64214b297fb1966a3b6d83";

const std::string kEip155Json = R"({
  "chain_id": "0x1",
  "gas_limit": "0x5208",
  "gas_price": "0x4a817c800",
  "hash": "0x33469b22e9f636356c4160a87eb19df52b7412e8eac32a4a55ffe88ea8350788",
  "input": "0x",
  "nonce": "0x9",
  "r": "0x28ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276",
  "s": "0x67cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83",
  "sender": "0x9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f",
  "to": "0x3535353535353535353535353535353535353535",
  "type": "0x0",
  "v": "0x25",
  "value": "0xde0b6b3a7640000"
}
)";

}  // namespace

TEST(cli_tx, decode_eip155_example) {
    const auto r = run_cli({"tx", "decode", kEip155Tx});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, kEip155Json);
    // The hash is keccak256 of exactly the bytes given.
    EXPECT_EQ(nlohmann::json::parse(r.out)["hash"],
              barrel::to_hex(barrel::keccak256(barrel::from_hex(kEip155Tx).value())));
}

TEST(cli_tx, decode_same_output_from_every_source_and_option_spelling) {
    for (const auto& [args, input] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"tx", "decode", "-"}, std::string{kEip155Tx} + "\n"},
             {{"tx", "decode", "-"}, "\t" + std::string{kEip155Tx + 2} + " \n\n"},  // no 0x
             {{"tx", "decode", "--chain-id", "1", kEip155Tx}, ""},
             {{"tx", "decode", kEip155Tx, "--chain-id=0x1"}, ""},
             {{"--threads", "1", "tx", "decode", kEip155Tx}, ""},
         }) {
        SCOPED_TRACE(testing::PrintToString(args));
        const auto r = run_cli(args, input);
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, kEip155Json);
    }
}

TEST(cli_tx, decode_pre_eip155_typed_and_other_chains) {
    // ttSignature/RightVRSTest: legacy without a chain id (v = 28), valid on any chain.
    const auto pre155 =
        run_cli({"tx", "decode", "--chain-id", "5",
                 "0xf85f030182520894b94f5374fce5edbc8e2a8697c15331677e6ebf0b0a801c"
                 "a098ff921201554726367d2be8c804a7ff89ccf285ebc57dff8ae4c44b9c19ac4a"
                 "a01887321be575c8095f789dd4c743dfe42c1820f9231f98a962b210e3ac2452a3"});
    EXPECT_EQ(pre155.status, 0) << pre155.err;
    EXPECT_EQ(pre155.out, R"({
  "chain_id": null,
  "gas_limit": "0x5208",
  "gas_price": "0x1",
  "hash": "0x1cbb233404f49e96cb795d0ea74f485eca2c41a216e0ce80694cef4dd7a45b50",
  "input": "0x",
  "nonce": "0x3",
  "r": "0x98ff921201554726367d2be8c804a7ff89ccf285ebc57dff8ae4c44b9c19ac4a",
  "s": "0x1887321be575c8095f789dd4c743dfe42c1820f9231f98a962b210e3ac2452a3",
  "sender": "0x58d79230fc81a042315da7d243272798e27cb40c",
  "to": "0xb94f5374fce5edbc8e2a8697c15331677e6ebf0b",
  "type": "0x0",
  "v": "0x1c",
  "value": "0xa"
}
)");

    // ttEIP1559/GasLimitPriceProductOverflowtMinusOne: type 2, a 31-byte max fee.
    const auto dynamic_fee = run_cli({"tx", "decode",
                                      "0x02f885018084773594009f02ffffffffffffffffffffffffffffffffff"
                                      "ffffffffffffffffffffffffff825208"
                                      "94095e7baea6a6c7c4c2dfeb977efac326af552d878080c080a05cbd1722"
                                      "31fc0735e0fb994dd5b1a4939170a26"
                                      "0b36f0427a8a80866b063b948a07c230f7f578dd61785c93361b9871c070"
                                      "6ebfa6d06e3f4491dc9558c5202ed36"});
    EXPECT_EQ(dynamic_fee.status, 0) << dynamic_fee.err;
    EXPECT_EQ(dynamic_fee.out, R"({
  "access_list": [],
  "chain_id": "0x1",
  "gas_limit": "0x5208",
  "hash": "0xdad8bff3ecfcf95169b1d5625b47f3372be795802bc4fe570991cf332f609334",
  "input": "0x",
  "max_fee_per_gas": "0x2ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
  "max_priority_fee_per_gas": "0x77359400",
  "nonce": "0x0",
  "r": "0x5cbd172231fc0735e0fb994dd5b1a4939170a260b36f0427a8a80866b063b948",
  "s": "0x7c230f7f578dd61785c93361b9871c0706ebfa6d06e3f4491dc9558c5202ed36",
  "sender": "0xae2aec498d20869d441eaaf708fb1e375ae1787d",
  "to": "0x095e7baea6a6c7c4c2dfeb977efac326af552d87",
  "type": "0x2",
  "v": "0x0",
  "value": "0x0"
}
)");
}

// Like foundry's `cast`: a transaction signed for any chain decodes without --chain-id; the
// option, when given, is checked (issue 19: chain 5 needed --chain-id 5).
TEST(cli_tx, decode_any_chain_by_default_and_check_chain_id_when_given) {
    const auto set = barrel::test::mixed_txs(2, 5);  // transaction 1 is EIP-155, chain 5
    const std::string hex = barrel::to_hex(set.encodings[1]);
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"tx", "decode", hex}, {"tx", "decode", "--chain-id", "5", hex}}) {
        SCOPED_TRACE(testing::PrintToString(args));
        const auto r = run_cli(args);
        ASSERT_EQ(r.status, 0) << r.err;
        const auto out = nlohmann::json::parse(r.out);
        EXPECT_EQ(out.at("chain_id"), "0x5");
        EXPECT_EQ(out.at("sender"), barrel::to_hex(set.senders[1]));
    }
    const auto wrong = run_cli({"tx", "decode", "--chain-id", "1", hex});
    EXPECT_EQ(wrong.status, 2);
    EXPECT_EQ(wrong.err,
              "error: tx: chain_id: wrong_chain_id (signed for chain 5, --chain-id is 1)\n");
}

TEST(cli_tx, decode_bad_input) {
    const std::vector<BadInputCase> cases{
        // Arguments.
        {{"tx", "decode"}, "", "error: tx decode: missing argument HEX|-"},
        {{"tx", "decode", kEip155Tx, "extra"}, "", "error: tx decode: unexpected argument 'extra'"},
        {{"tx", "decode", "--sender", kEip155Tx},
         "",
         "error: tx decode: unknown option '--sender'"},
        {{"tx", "encode", kEip155Tx},
         "",
         "error: tx: unknown subcommand 'encode' (expected decode)"},
        {{"tx", "decode", kEip155Tx, "--chain-id"},
         "",
         "error: tx decode: option --chain-id needs a value N"},
        {{"tx", "decode", "--chain-id", "1", "--chain-id", "1", kEip155Tx},
         "",
         "error: tx decode: option --chain-id given twice"},
        {{"tx", "decode", "--chain-id", "abc", kEip155Tx},
         "",
         "error: --chain-id: expected an unsigned 64-bit integer, got 'abc'"},
        {{"tx", "decode", "--chain-id", "-1", kEip155Tx},
         "",
         "error: --chain-id: expected an unsigned 64-bit integer, got '-1'"},
        {{"tx", "decode", "--chain-id=18446744073709551616", kEip155Tx},
         "",
         "error: --chain-id: expected an unsigned 64-bit integer, got '18446744073709551616'"},
        {{"tx", "decode", "--threads", "0", kEip155Tx},
         "",
         "error: --threads: expected a positive integer up to 65536, got '0'"},
        {{"tx", "decode", "--threads", "abc", kEip155Tx},
         "",
         "error: --threads: expected a positive integer up to 65536, got 'abc'"},
        // Hex.
        {{"tx", "decode", "0xf86g"}, "", "error: invalid hex: invalid hex digit 'g' at position 6"},
        {{"tx", "decode", "0xf86"}, "", "error: invalid hex: odd number of hex digits"},
        {{"tx", "decode", "0x"}, "", "error: empty input"},
        {{"tx", "decode", "-"}, "", "error: empty input"},
        // Encoding.
        {{"tx", "decode", std::string{kEip155Tx} + "00"},
         "",
         "error: tx: envelope: trailing_bytes"},
        {{"tx", "decode", "0xf86c09"}, "", "error: tx: envelope: input_too_short"},
        {{"tx", "decode", "0x80"}, "", "error: tx: envelope: unexpected_string"},
        {{"tx", "decode", "0x03c0"}, "", "error: tx: envelope: unsupported_type"},
        {{"tx", "decode", "0xc0"}, "", "error: tx: nonce: too_few_fields"},
        {{"tx", "decode", kLeadingZeroNonce}, "", "error: tx: nonce: leading_zero"},
        {{"tx", "decode", kBadV}, "", "error: tx: v: invalid_v"},
        {{"tx", "decode", kChainZero},
         "",
         "error: tx: chain_id: wrong_chain_id (signed for chain 0, which no chain has)"},
        // Decodes, but is not a valid transaction.
        {{"tx", "decode", kZeroR}, "", "error: tx: r: invalid_signature"},
        {{"tx", "decode", kHighS}, "", "error: tx: s: high_s"},
        {{"tx", "decode", kLowGas}, "", "error: tx: gas_limit: intrinsic_gas_too_low"},
        {{"tx", "decode", kUnrecoverable}, "", "error: tx: recovery_failed"},
        {{"tx", "decode", "--chain-id", "5", kEip155Tx},
         "",
         "error: tx: chain_id: wrong_chain_id (signed for chain 1, --chain-id is 5)"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(testing::PrintToString(c.args));
        const auto r = run_cli(c.args, c.input);
        EXPECT_EQ(r.status, 2);
        EXPECT_EQ(r.err, c.error + "\n");
        EXPECT_EQ(r.out, "");
    }
}

// Every official transaction vector through the command: valid ones print the fixture's hash and
// sender, invalid ones are exit 2 with one error line. (tx_official_test checks the reasons.)
TEST(cli_tx, decode_every_official_vector) {
    constexpr std::array<const char*, 13> kForks{
        "Cancun",   "Shanghai",          "Paris",          "London",    "Berlin",
        "Istanbul", "ConstantinopleFix", "Constantinople", "Byzantium", "EIP158",
        "EIP150",   "Homestead",         "Frontier",
    };
    const auto root =
        std::filesystem::path{BARREL_TEST_DATA_DIR} / "ethereum-tests" / "TransactionTests";
    size_t valid = 0, invalid = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator{root}) {
        if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
        SCOPED_TRACE(entry.path().string());
        std::ifstream file{entry.path()};
        const auto doc = nlohmann::json::parse(file);
        const auto& test = doc.begin().value();
        const auto& result = test.at("result");
        const char* const* fork = std::find_if(kForks.begin(), kForks.end(),
                                               [&](const char* f) { return result.contains(f); });
        ASSERT_NE(fork, kForks.end());
        const auto& expected = result.at(*fork);

        // The fixtures' verdicts are mainnet's: chain 1 (without the option, any chain decodes).
        const auto r =
            run_cli({"tx", "decode", "--chain-id", "1", test.at("txbytes").get<std::string>()});
        if (expected.contains("hash")) {
            ++valid;
            ASSERT_EQ(r.status, 0) << r.err;
            const auto out = nlohmann::json::parse(r.out);
            EXPECT_EQ(out.at("hash"), expected.at("hash"));
            EXPECT_EQ(out.at("sender"), expected.at("sender"));
        } else {
            ++invalid;
            EXPECT_EQ(r.status, 2) << expected.at("exception");
            EXPECT_EQ(r.out, "");
            EXPECT_TRUE(r.err.starts_with("error: ")) << r.err;
            EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
        }
    }
    EXPECT_EQ(valid + invalid, 210u);
    EXPECT_GT(valid, 0u);
}
