// to_json(Transaction): the keys of each transaction type and the value conventions of
// barrel/json/conventions.hpp (quantities, lower-case hex, null for absent values).

#include <barrel/core/hex.hpp>
#include <barrel/json/tx_json.hpp>
#include <barrel/tx/transaction.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

using namespace barrel;
using namespace barrel::literals;

namespace {

/// Decodes a vector and converts it with its real hash and recovered sender.
nlohmann::json decoded_json(const Bytes& encoding) {
    const auto tx = tx::decode(encoding);
    EXPECT_TRUE(tx) << (tx ? "" : tx::describe(tx.error()));
    if (!tx) return {};
    const auto sender = tx::recover_sender(*tx, tx::signing_hash(*tx));
    EXPECT_TRUE(sender);
    return to_json(*tx, tx::hash_of(encoding), sender ? std::optional{*sender} : std::nullopt);
}

std::vector<std::string> keys_of(const nlohmann::json& j) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items()) keys.push_back(k);
    return keys;  // nlohmann::json keeps keys sorted
}

}  // namespace

TEST(json_tx, legacy_eip155) {
    const Bytes encoding =
        "0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025"
        "a0"
        "28ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb70330"
        "4b3800ccf555c9f3dc64214b297fb1966a3b6d83"_hex;
    const nlohmann::json expected = {
        {"type", "0x0"},
        {"chain_id", "0x1"},
        {"nonce", "0x9"},
        {"gas_limit", "0x5208"},
        {"gas_price", "0x4a817c800"},
        {"to", "0x3535353535353535353535353535353535353535"},
        {"value", "0xde0b6b3a7640000"},
        {"input", "0x"},
        {"v", "0x25"},
        {"r", "0x28ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276"},
        {"s", "0x67cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83"},
        {"hash", "0x33469b22e9f636356c4160a87eb19df52b7412e8eac32a4a55ffe88ea8350788"},
        {"sender", "0x9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f"},
    };
    EXPECT_EQ(decoded_json(encoding), expected);
}

TEST(json_tx, legacy_without_chain_id) {
    // ttSignature/RightVRSTest (v = 28).
    const auto j = decoded_json(
        "0xf85f030182520894b94f5374fce5edbc8e2a8697c15331677e6ebf0b0a801ca098ff921201554726367d2be8"
        "c804a7ff89ccf285ebc57dff8ae4c44b9c19ac4aa01887321be575c8095f789dd4c743dfe42c1820f9231f98a9"
        "62b210e3ac2452a3"_hex);
    EXPECT_TRUE(j.at("chain_id").is_null());
    EXPECT_EQ(j.at("v"), "0x1c");
    EXPECT_EQ(j.at("value"), "0xa");
    EXPECT_EQ(j.at("sender"), "0x58d79230fc81a042315da7d243272798e27cb40c");
    EXPECT_EQ(j.at("hash"), "0x1cbb233404f49e96cb795d0ea74f485eca2c41a216e0ce80694cef4dd7a45b50");
    EXPECT_FALSE(j.contains("access_list"));
}

TEST(json_tx, access_list_type_1) {
    // ttEIP2930/accessListStorage32Bytes.
    const nlohmann::json expected = {
        {"type", "0x1"},
        {"chain_id", "0x1"},
        {"nonce", "0x0"},
        {"gas_limit", "0x6a40"},
        {"gas_price", "0x1"},
        {"to", "0x095e7baea6a6c7c4c2dfeb977efac326af552d87"},
        {"value", "0x0"},
        {"input", "0x"},
        {"access_list",
         {{{"address", "0xa95e7baea6a6c7c4c2dfeb977efac326af552d87"},
           {"storage_keys",
            {"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"}}}}},
        {"v", "0x0"},
        {"r", "0x5cbd172231fc0735e0fb994dd5b1a4939170a260b36f0427a8a80866b063b948"},
        {"s", "0x7c230f7f578dd61785c93361b9871c0706ebfa6d06e3f4491dc9558c5202ed36"},
        {"hash", "0xb4f8b14a7aaf85ec2f76be9fbe4155deae1f87b2da95af73be3c27ed8d4c8cb7"},
        {"sender", "0xebe76799923fd62804659fb00b4f0f1a94c0eb1e"},
    };
    EXPECT_EQ(
        decoded_json(
            "0x01f89a018001826a4094095e7baea6a6c7c4c2dfeb977efac326af552d878080f838f794a95e7b"
            "aea6a6c7c4c2dfeb977efac326af552d87e1a0ffffffffffffffffffffffffffffffffffffffffff"
            "ffffffffffffffffffffff80a05cbd172231fc0735e0fb994dd5b1a4939170a260b36f0427a8a808"
            "66b063b948a07c230f7f578dd61785c93361b9871c0706ebfa6d06e3f4491dc9558c5202ed36"_hex),
        expected);
}

TEST(json_tx, dynamic_fee_type_2) {
    // ttEIP1559/GasLimitPriceProductOverflowtMinusOne.
    const nlohmann::json expected = {
        {"type", "0x2"},
        {"chain_id", "0x1"},
        {"nonce", "0x0"},
        {"gas_limit", "0x5208"},
        {"max_fee_per_gas", "0x2ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"},
        {"max_priority_fee_per_gas", "0x77359400"},
        {"to", "0x095e7baea6a6c7c4c2dfeb977efac326af552d87"},
        {"value", "0x0"},
        {"input", "0x"},
        {"access_list", nlohmann::json::array()},
        {"v", "0x0"},
        {"r", "0x5cbd172231fc0735e0fb994dd5b1a4939170a260b36f0427a8a80866b063b948"},
        {"s", "0x7c230f7f578dd61785c93361b9871c0706ebfa6d06e3f4491dc9558c5202ed36"},
        {"hash", "0xdad8bff3ecfcf95169b1d5625b47f3372be795802bc4fe570991cf332f609334"},
        {"sender", "0xae2aec498d20869d441eaaf708fb1e375ae1787d"},
    };
    EXPECT_EQ(decoded_json(
                  "0x02f885018084773594009f02ffffffffffffffffffffffffffffffffffffffffffffffffffffff"
                  "ffffff82520894095e7baea6a6c7c4c2dfeb977efac326af552d878080c080a05cbd172231fc0735"
                  "e0fb994dd5b1a4939170a260b36f0427a8a80866b063b948a07c230f7f578dd61785c93361b9871c"
                  "0706ebfa6d06e3f4491dc9558c5202ed36"_hex),
              expected);
}

TEST(json_tx, keys_per_type) {
    tx::Transaction t;
    const std::vector<std::string> common{"chain_id", "gas_limit", "hash", "input",
                                          "nonce",    "r",         "s",    "sender",
                                          "to",       "type",      "v",    "value"};
    auto with = [&](std::vector<std::string> extra) {
        extra.insert(extra.end(), common.begin(), common.end());
        std::sort(extra.begin(), extra.end());
        return extra;
    };
    t.type = tx::TxType::legacy;
    EXPECT_EQ(keys_of(to_json(t, {}, std::nullopt)), with({"gas_price"}));
    t.type = tx::TxType::access_list;
    EXPECT_EQ(keys_of(to_json(t, {}, std::nullopt)), with({"gas_price", "access_list"}));
    t.type = tx::TxType::dynamic_fee;
    EXPECT_EQ(keys_of(to_json(t, {}, std::nullopt)),
              with({"max_fee_per_gas", "max_priority_fee_per_gas", "access_list"}));
}

TEST(json_tx, absent_values_are_null_and_zero_is_0x0) {
    tx::Transaction t;  // legacy, no chain id, creation, everything zero
    const auto j = to_json(t, Hash{}, std::nullopt);
    EXPECT_TRUE(j.at("to").is_null());
    EXPECT_TRUE(j.at("chain_id").is_null());
    EXPECT_TRUE(j.at("sender").is_null());
    for (const char* key : {"nonce", "gas_limit", "gas_price", "value", "r", "s", "type"})
        EXPECT_EQ(j.at(key), "0x0") << key;
    EXPECT_EQ(j.at("v"), "0x1b");  // 27 + y parity 0
    EXPECT_EQ(j.at("input"), "0x");
    EXPECT_EQ(j.at("hash"), "0x" + std::string(64, '0'));  // fixed-size: leading zeros kept
}

TEST(json_tx, quantities_are_lossless_and_bytes_lower_case) {
    const Bytes calldata = "0x00ABcdEF"_hex;
    tx::Transaction t;
    t.type = tx::TxType::dynamic_fee;
    t.chain_id = std::numeric_limits<uint64_t>::max();
    t.nonce = std::numeric_limits<uint64_t>::max() - 1;
    t.max_fee_per_gas = ~u256{0};
    t.max_priority_fee_per_gas = u256{1} << 255;
    t.gas_limit = 0x5208;
    t.to = address_from_hex("0xABCDEF0000000000000000000000000000000001").value();
    t.value = (u256{1} << 64);  // just past 64 bits
    t.data = calldata;
    t.access_list = {{address_from_hex("0x00000000000000000000000000000000000000aa").value(),
                      {Hash{}, hash_from_hex("0x" + std::string(63, '0') + "B").value()}}};
    t.y_parity = true;
    t.r = 1;
    t.s = u256{"0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0"};
    const auto j = to_json(t, hash_from_hex("0x" + std::string(64, 'A')).value(),
                           address_from_hex("0x" + std::string(40, 'F')).value());
    EXPECT_EQ(j.at("chain_id"), "0xffffffffffffffff");
    EXPECT_EQ(j.at("nonce"), "0xfffffffffffffffe");
    EXPECT_EQ(j.at("max_fee_per_gas"), "0x" + std::string(64, 'f'));
    EXPECT_EQ(j.at("max_priority_fee_per_gas"), "0x8" + std::string(63, '0'));
    EXPECT_EQ(j.at("value"), "0x10000000000000000");
    EXPECT_EQ(j.at("to"), "0xabcdef0000000000000000000000000000000001");
    EXPECT_EQ(j.at("input"), "0x00abcdef");
    EXPECT_EQ(j.at("v"), "0x1");  // typed: the y parity
    EXPECT_EQ(j.at("r"), "0x1");
    EXPECT_EQ(j.at("s"), "0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0");
    EXPECT_EQ(j.at("hash"), "0x" + std::string(64, 'a'));
    EXPECT_EQ(j.at("sender"), "0x" + std::string(40, 'f'));
    const nlohmann::json access_list = {
        {{"address", "0x00000000000000000000000000000000000000aa"},
         {"storage_keys", {"0x" + std::string(64, '0'), "0x" + std::string(63, '0') + "b"}}}};
    EXPECT_EQ(j.at("access_list"), access_list);
}

TEST(json_tx, legacy_v_beyond_64_bits) {
    // v = chain_id × 2 + 35 + parity does not fit 64 bits for the largest chain ids.
    tx::Transaction t;
    t.chain_id = std::numeric_limits<uint64_t>::max();
    t.y_parity = true;
    // 2 × (2^64 − 1) + 36 = 2^65 + 34
    EXPECT_EQ(to_json(t, {}, std::nullopt).at("v"), "0x20000000000000022");
    t.chain_id = 1;
    t.y_parity = false;
    EXPECT_EQ(to_json(t, {}, std::nullopt).at("v"), "0x25");
    t.chain_id.reset();
    t.y_parity = true;
    EXPECT_EQ(to_json(t, {}, std::nullopt).at("v"), "0x1c");
}
