// Known answers for the byte layouts docs/formats.md fixes for roots ("Receipts, write set and
// state root"): the bytes are written out by hand here, from the document, so that the encoders
// are checked against the specification rather than against themselves.

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/exec/execute.hpp>
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

TEST(state_root, write_set_encoding_is_the_documented_bytes) {
    state::WriteSet ws;
    ws.accounts = {{filled(0x11), {1, 0}}, {filled(0x22), {0, 1000}}};
    ws.users = {{"alice", 5}};
    // RLP([0x01 ‖ address, RLP([nonce, balance])]) per account, RLP([0x02 ‖ name, RLP(balance)])
    // per user, accounts first, each group in key order.
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
    EXPECT_EQ(state::hash_of(ws), keccak256(encoding));

    const Hash parent = keccak256(as_bytes("parent"));
    auto bytes_of = [](const Hash& h) { return Bytes(h.data(), h.data() + h.size()); };
    // state_root = keccak256(parent state_root ‖ keccak256(encoding))
    EXPECT_EQ(state::next_state_root(parent, ws),
              keccak256(concat({bytes_of(parent), bytes_of(keccak256(encoding))})));
    // An empty write set hashes the empty string, and chains to the parent's root unchanged (an
    // empty block keeps its parent's state root).
    EXPECT_EQ(state::hash_of({}), keccak256(BytesView{}));
    EXPECT_EQ(state::next_state_root(parent, {}), parent);
}

/// The encoder works in runs of entries (in parallel when asked); the hash must not see the seams,
/// nor where the accounts end and the users begin inside a run. Entries of a fixed shape, so the
/// expected bytes follow the layout above: account [1, 0] = d9 95 01 ‖ address ‖ c2 01 80, user
/// with a 5-byte name and balance 0 = c8 86 02 ‖ name ‖ 80.
TEST(state_root, hash_is_the_same_across_encoder_runs_and_threads) {
    for (size_t accounts : {0, 1, 255, 256, 257, 700}) {
        for (size_t users : {0, 1, 300}) {
            state::WriteSet ws;
            Bytes encoding;
            for (size_t i = 0; i < accounts; ++i) {
                Address a = filled(0x33);
                a[0] = static_cast<uint8_t>(i >> 8);
                a[1] = static_cast<uint8_t>(i);
                ws.accounts.emplace_back(a, state::Account{1, 0});
                encoding.insert(encoding.end(), {0xd9, 0x95, 0x01});
                encoding.insert(encoding.end(), a.data(), a.data() + a.size());
                encoding.insert(encoding.end(), {0xc2, 0x01, 0x80});
            }
            for (size_t i = 0; i < users; ++i) {
                const std::string name = "u" + std::to_string(1000 + i);
                ws.users.emplace_back(name, 0);
                encoding.insert(encoding.end(), {0xc8, 0x86, 0x02});
                encoding.insert(encoding.end(), name.begin(), name.end());
                encoding.push_back(0x80);
            }
            const Hash expected = keccak256(encoding);
            EXPECT_EQ(state::hash_of(ws, false), expected)
                << accounts << " accounts, " << users << " users";
            EXPECT_EQ(state::hash_of(ws, true), expected)
                << accounts << " accounts, " << users << " users";
        }
    }
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
    EXPECT_EQ(state::hash_of(ws), keccak256(encoding));
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
