// Known answers for the byte layouts docs/formats.md fixes for roots ("Receipts, write set and
// state root"; the state commitment's own vectors are state_lattice_test.cpp's): the bytes are
// written out by hand here, from the document, so that the encoders are checked against the
// specification rather than against themselves.

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/state/lattice.hpp>
#include <barrel/state/state.hpp>

#include <gtest/gtest.h>

using namespace barrel;
using namespace barrel::literals;

namespace {

Address filled(uint8_t byte) {
    Address a;
    for (size_t i = 0; i < a.size(); ++i) a[i] = byte;
    return a;
}

Bytes concat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

}  // namespace

namespace {
/// The write-set entries of a write set, concatenated in its order (accounts, then users).
Bytes entries_of(const state::WriteSet& ws) {
    Bytes out;
    for (const auto& [address, account] : ws.accounts) state::encode_entry(out, address, account);
    for (const auto& [name, balance] : ws.users) state::encode_entry(out, name, balance);
    return out;
}
}  // namespace

TEST(state_root, entry_encoding_is_the_documented_bytes) {
    state::WriteSet ws;
    ws.accounts = {{filled(0x11), {1, 0}}, {filled(0x22), {0, 1000}}};
    ws.users = {{"alice", 5}};
    // RLP([0x01 ‖ address, RLP([nonce, balance])]) per account, RLP([0x02 ‖ name, RLP(balance)])
    // per user.
    const Bytes encoding = concat({
        "0xd9"
        "95"
        "01"
        "1111111111111111111111111111111111111111"
        "c2"
        "01"
        "80"_hex,
        "0xdb"
        "95"
        "01"
        "2222222222222222222222222222222222222222"
        "c4"
        "80"
        "8203e8"_hex,
        "0xc8"
        "86"
        "02"
        "616c696365"
        "05"_hex,
    });
    EXPECT_EQ(entries_of(ws), encoding);
}

TEST(state_root, long_values_and_names_use_the_long_rlp_forms) {
    state::WriteSet ws;
    ws.accounts = {{filled(0x33), {0xffffffffffffffffull, ~u256{0}}}};
    const std::string name(60, 'n');  // 61-byte key string: long form b8 3d
    ws.users = {{name, 0}};
    const Bytes encoding = concat({
        // value: c0+9+33 = 0xea list of [88 ff×8, a0 ff×32]; entry payload 22+43 = 65 → f8 41
        "0xf841"
        "95"
        "01"
        "3333333333333333333333333333333333333333"
        "ea"
        "88ffffffffffffffff"
        "a0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"_hex,
        // key 02 ‖ 60 × 'n' = 61 bytes (b8 3d), value 0 = 80; payload 2+61+1 = 64 → f8 40
        concat({"0xf840b83d02"_hex, Bytes(60, 'n'), "0x80"_hex}),
    });
    EXPECT_EQ(entries_of(ws), encoding);
}

TEST(state_root, receipt_hash_is_the_documented_bytes) {
    Hash tx_hash;
    for (size_t i = 0; i < tx_hash.size(); ++i) tx_hash[i] = 0xaa;
    const exec::Receipt ok{true, 21'000, 42'000, {}};
    // RLP([tx_hash, status, gas_used, cumulative_gas_used, output])
    EXPECT_EQ(exec::receipt_hash(tx_hash, ok),
              keccak256("0xe9"
                        "a0aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                        "01"
                        "825208"
                        "82a410"
                        "80"_hex));
    const exec::Receipt failed{false, 0, 0, Bytes(32, 0)};
    EXPECT_EQ(exec::receipt_hash(tx_hash, failed),
              keccak256(concat({"0xf845"
                                "a0aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                "80"
                                "80"
                                "80"
                                "a0"_hex,
                                Bytes(32, 0)})));
}
