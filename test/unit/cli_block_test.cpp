// `barrel-node block inspect`: a single block of every transaction kind, a chain file, a bare
// transaction list in both forms, an empty block, and every way the file or its bytes can be
// wrong (exit 2, one exact stderr line).

#include <barrel/block/block.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/json/tx_json.hpp>
#include <barrel/rlp/encode.hpp>

#include "block_fixtures.hpp"
#include "cli_run.hpp"
#include "test_files.hpp"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

using barrel::Bytes;
using barrel::BytesView;
using barrel::test::BadInputCase;
using barrel::test::run_cli;
using barrel::test::ScratchDir;
using barrel::test::TxSet;
using nlohmann::json;

namespace block = barrel::block;
namespace tx = barrel::tx;

namespace {

std::string as_string(BytesView bytes) { return {bytes.begin(), bytes.end()}; }

Bytes concat(const std::vector<Bytes>& parts) {
    Bytes out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

/// `block inspect -` with `input` on stdin; must succeed.
json inspect(const Bytes& input, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"block", "inspect", "-"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_cli(args, as_string(input));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    if (r.status != 0) return nullptr;
    return json::parse(r.out);
}

/// Checks a block's or list's JSON against the transactions it was made from: count, then each
/// transaction exactly (tx decode's JSON with the fixture's hash and sender).
void expect_transactions(const json& doc, const TxSet& txs) {
    ASSERT_EQ(doc.at("transaction_count"), barrel::to_hex_quantity(uint64_t{txs.size()}));
    const json& list = doc.at("transactions");
    ASSERT_TRUE(list.is_array());
    ASSERT_EQ(list.size(), txs.size());
    for (size_t i = 0; i < txs.size(); ++i) {
        SCOPED_TRACE("transaction " + std::to_string(i));
        const Bytes& enc = txs.encodings[i];
        EXPECT_EQ(list[i].at("hash"), barrel::to_hex(barrel::keccak256(enc)));
        EXPECT_EQ(list[i].at("sender"), barrel::to_hex(txs.senders[i]));
        const auto decoded = tx::decode(enc);
        ASSERT_TRUE(decoded);
        EXPECT_EQ(list[i], barrel::to_json(*decoded, barrel::keccak256(enc), txs.senders[i]));
    }
}

json expected_header(const block::Header& h) {
    return {
        {"parent_hash", barrel::to_hex(h.parent_hash)},
        {"number", barrel::to_hex_quantity(h.number)},
        {"timestamp", barrel::to_hex_quantity(h.timestamp)},
        {"coinbase", barrel::to_hex(h.coinbase)},
        {"gas_limit", barrel::to_hex_quantity(h.gas_limit)},
        {"gas_used", barrel::to_hex_quantity(h.gas_used)},
        {"txs_root", barrel::to_hex(h.txs_root)},
        {"receipts_root", barrel::to_hex(h.receipts_root)},
        {"state_root", barrel::to_hex(h.state_root)},
        {"chain_id", barrel::to_hex_quantity(h.chain_id)},
    };
}

/// The position of the first byte of transaction `i`'s s value inside `wire` (s is the last
/// field of every kind of transaction; the fixture must have a 32-byte s).
size_t s_position(const Bytes& wire, const TxSet& txs, size_t i) {
    const Bytes& enc = txs.encodings[i];
    const auto at = std::search(wire.begin(), wire.end(), enc.begin(), enc.end());
    if (at == wire.end() || enc.size() < 33 || enc[enc.size() - 33] != 0xa0)
        throw std::runtime_error("fixture: no 32-byte s");
    return static_cast<size_t>(at - wire.begin()) + enc.size() - 32;
}

}  // namespace

TEST(cli_block, inspect_single_block_of_every_kind) {
    const TxSet txs = barrel::test::mixed_txs(6);  // legacy pre-155, 155, type 1, type 2, ...
    const block::Header header = barrel::test::sample_header();
    const Bytes wire = block::encode_block(header, txs.views());

    const json doc = inspect(wire);
    ASSERT_TRUE(doc.is_object()) << doc;
    EXPECT_EQ(doc.size(), 4u);
    EXPECT_EQ(doc.at("header"), expected_header(header));
    EXPECT_EQ(doc.at("header").at("number"), "0x7");
    EXPECT_EQ(doc.at("header").at("timestamp"), "0x6553f100");
    EXPECT_EQ(doc.at("header").at("parent_hash"),
              "0x101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f");
    EXPECT_EQ(doc.at("hash"), barrel::to_hex(block::hash_of(header)));
    EXPECT_EQ(doc.at("hash"), barrel::to_hex(barrel::keccak256(block::encode(header))));
    EXPECT_EQ(doc.at("transaction_count"), "0x6");
    expect_transactions(doc, txs);
    // Every kind is there, and the pre-EIP-155 one has no chain id.
    const json& list = doc.at("transactions");
    EXPECT_EQ(list[0].at("type"), "0x0");
    EXPECT_EQ(list[0].at("chain_id"), nullptr);
    EXPECT_EQ(list[1].at("type"), "0x0");
    EXPECT_EQ(list[1].at("chain_id"), "0x1");
    EXPECT_EQ(list[2].at("type"), "0x1");
    EXPECT_EQ(list[3].at("type"), "0x2");

    // The same from a file, with --chain-id matching the block's, and with --threads 1.
    ScratchDir dir;
    const std::string path = dir.write("block.bin", wire);
    const auto stdin_out = run_cli({"block", "inspect", "-"}, as_string(wire)).out;
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"block", "inspect", path},
             {"block", "inspect", "--chain-id", "1", path},
             {"--threads", "1", "block", "inspect", path},
         }) {
        SCOPED_TRACE(testing::PrintToString(args));
        const auto r = run_cli(args);
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, stdin_out);
    }
}

TEST(cli_block, inspect_empty_block_exact_output) {
    const block::Header header = barrel::test::sample_header(1, 9);
    const Bytes wire = block::encode_block(header, {});
    const auto r = run_cli({"block", "inspect", "-"}, as_string(wire));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, R"({
  "hash": ")" + barrel::to_hex(block::hash_of(header)) +
                         R"(",
  "header": {
    "chain_id": "0x1",
    "coinbase": "0xd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3",
    "gas_limit": "0x1c9c380",
    "gas_used": "0x5208",
    "number": "0x9",
    "parent_hash": "0x101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f",
    "receipts_root": "0x707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f",
    "state_root": "0xa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf",
    "timestamp": "0x6553f100",
    "txs_root": "0x404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
  },
  "transaction_count": "0x0",
  "transactions": []
}
)");
}

TEST(cli_block, inspect_chain_file_of_three_blocks) {
    std::vector<TxSet> sets;
    std::vector<block::Header> headers;
    std::vector<Bytes> wires;
    for (uint64_t n = 1; n <= 3; ++n) {
        sets.push_back(barrel::test::mixed_txs(n + 2, 1, /*domain=*/10 + n));
        headers.push_back(barrel::test::sample_header(1, n));
        wires.push_back(block::encode_block(headers.back(), sets.back().views()));
    }
    const Bytes chain = concat(wires);

    ScratchDir dir;
    const auto r = run_cli({"block", "inspect", dir.write("chain.rlp", chain)});
    ASSERT_EQ(r.status, 0) << r.err;
    const json doc = json::parse(r.out);
    ASSERT_TRUE(doc.is_array());
    ASSERT_EQ(doc.size(), 3u);
    for (size_t k = 0; k < 3; ++k) {
        SCOPED_TRACE("block " + std::to_string(k));
        EXPECT_EQ(doc[k].at("header"), expected_header(headers[k]));
        EXPECT_EQ(doc[k].at("header").at("number"), barrel::to_hex_quantity(uint64_t{k + 1}));
        EXPECT_EQ(doc[k].at("hash"), barrel::to_hex(block::hash_of(headers[k])));
        expect_transactions(doc[k], sets[k]);
    }
    // Each block alone prints as the object the chain's array holds.
    for (size_t k = 0; k < 3; ++k) EXPECT_EQ(inspect(wires[k]), doc[k]);
}

TEST(cli_block, inspect_plain_and_indexed_transaction_lists) {
    const TxSet txs = barrel::test::mixed_txs(5);
    const Bytes plain = block::encode_plain_tx_list(txs.views());
    const json doc = inspect(plain);
    EXPECT_EQ(doc.at("header"), nullptr);
    EXPECT_EQ(doc.at("hash"), nullptr);
    EXPECT_EQ(doc.at("transaction_count"), "0x5");
    expect_transactions(doc, txs);

    // The offset-indexed form inside an RLP string (a block's txs item) prints the same.
    Bytes index;
    block::encode_indexed_txs(index, txs.views());
    Bytes indexed;
    barrel::rlp::encode(indexed, BytesView{index});
    EXPECT_EQ(inspect(indexed), doc);

    // Empty lists.
    for (const Bytes& empty : {Bytes{0xc0}, Bytes{0x88, 0, 0, 0, 0, 0, 0, 0, 0}}) {
        const json e = inspect(empty);
        EXPECT_EQ(e, (json{{"header", nullptr},
                           {"hash", nullptr},
                           {"transaction_count", "0x0"},
                           {"transactions", json::array()}}));
    }

    // Chain id: the first transaction's (tx 0 is pre-EIP-155, so tx 1's: 5), or --chain-id.
    const TxSet chain5 = barrel::test::mixed_txs(4, 5);
    const Bytes list5 = block::encode_plain_tx_list(chain5.views());
    expect_transactions(inspect(list5), chain5);
    expect_transactions(inspect(list5, {"--chain-id", "5"}), chain5);
    const auto wrong = run_cli({"block", "inspect", "-", "--chain-id", "1"}, as_string(list5));
    EXPECT_EQ(wrong.status, 2);
    EXPECT_EQ(wrong.out, "");
    EXPECT_EQ(wrong.err,
              "error: transaction 1: invalid_tx: chain_id: wrong_chain_id (signed for chain 5, "
              "--chain-id is 1)\n");
    // A pre-EIP-155 transaction alone is valid on any chain; the default is then 1.
    const TxSet pre155{{txs.encodings[0]}, {txs.senders[0]}, {txs.keys[0]}};
    expect_transactions(inspect(block::encode_plain_tx_list(pre155.views())), pre155);
    expect_transactions(inspect(block::encode_plain_tx_list(pre155.views()), {"--chain-id", "77"}),
                        pre155);
}

TEST(cli_block, inspect_help_lists_the_command) {
    const auto main_help = run_cli({"--help"});
    EXPECT_EQ(main_help.status, 0);
    EXPECT_NE(main_help.out.find("  block inspect FILE "), std::string::npos) << main_help.out;
    const auto group_help = run_cli({"block", "--help"});
    EXPECT_EQ(group_help.status, 0);
    EXPECT_NE(group_help.out.find("  block inspect FILE "), std::string::npos) << group_help.out;
    const auto help = run_cli({"block", "inspect", "--help"});
    EXPECT_EQ(help.status, 0);
    EXPECT_TRUE(help.out.starts_with("Usage: barrel-node block inspect [OPTIONS] FILE\n"))
        << help.out;
    EXPECT_NE(help.out.find("  --chain-id N "), std::string::npos) << help.out;
}

TEST(cli_block, inspect_bad_input) {
    ScratchDir dir;
    const block::Header header = barrel::test::sample_header();
    const TxSet txs = barrel::test::mixed_txs(4);
    const Bytes wire = block::encode_block(header, txs.views());

    // A chain of three good blocks.
    std::vector<Bytes> chain_blocks;
    std::vector<TxSet> chain_sets;
    for (uint64_t n = 1; n <= 3; ++n) {
        chain_sets.push_back(barrel::test::mixed_txs(4, 1, 20 + n));
        chain_blocks.push_back(
            block::encode_block(barrel::test::sample_header(1, n), chain_sets.back().views()));
    }
    const Bytes chain = concat(chain_blocks);

    // Truncated: the last 10 bytes cut off.
    const Bytes truncated(wire.begin(), wire.end() - 10);

    // Transaction 2's signature with the top bit of s flipped: s > n/2.
    Bytes flipped = wire;
    flipped[s_position(flipped, txs, 2)] ^= 0x80;
    // The same in the second block of a chain.
    std::vector<Bytes> flipped_chain_blocks = chain_blocks;
    flipped_chain_blocks[1][s_position(chain_blocks[1], chain_sets[1], 3)] ^= 0x80;

    // Transaction 1 signed for chain 5 in a block of chain 1.
    TxSet mixed = txs;
    mixed.encodings[1] = barrel::test::mixed_txs(2, 5).encodings[1];
    const Bytes wrong_chain = block::encode_block(header, mixed.views());

    // Transaction 1 is `c0`, which is no transaction; in a block and in a plain list.
    std::vector<BytesView> with_bad = txs.views();
    const Bytes c0{0xc0};
    with_bad[1] = c0;
    const Bytes malformed = block::encode_block(header, with_bad);
    std::vector<BytesView> list_with_bad = txs.views();
    list_with_bad[2] = c0;
    const Bytes malformed_list = block::encode_plain_tx_list(list_with_bad);

    const std::string missing = dir / "missing.bin";
    const std::string directory = dir / "";

    const std::vector<BadInputCase> cases{
        {{"block", "inspect"}, "", "error: block inspect: missing argument FILE"},
        {{"block", "inspect", "a", "b"}, "", "error: block inspect: unexpected argument 'b'"},
        {{"block", "inspect", "-", "--chain-id", "x"},
         "",
         "error: --chain-id: expected an unsigned 64-bit integer, got 'x'"},
        {{"block", "inspect", missing},
         "",
         "error: cannot read " + missing + ": No such file or directory"},
        {{"block", "inspect", directory},
         "",
         "error: cannot read " + directory + ": Is a directory"},
        {{"block", "inspect", dir.write("empty.bin", {})}, "", "error: empty input"},
        {{"block", "inspect", "-"}, "", "error: empty input"},
        {{"block", "inspect", "-"},
         as_string(truncated),
         "error: not a block, chain file or transaction list; as a block: malformed_block: "
         "input_too_short"},
        {{"block", "inspect", "-"},
         as_string(flipped),
         "error: transaction 2: invalid_tx: s: high_s"},
        {{"block", "inspect", "-"},
         as_string(concat(flipped_chain_blocks)),
         "error: block 1: transaction 3: invalid_tx: s: high_s"},
        {{"block", "inspect", "-"},
         as_string(wrong_chain),
         "error: transaction 1: invalid_tx: chain_id: wrong_chain_id (signed for chain 5, block "
         "chain id 1)"},
        {{"block", "inspect", "--chain-id", "5", "-"},
         as_string(wire),
         "error: wrong_chain_id (block chain id 1, --chain-id is 5)"},
        {{"block", "inspect", "-"},
         as_string(malformed),
         "error: transaction 1: malformed_tx: nonce: too_few_fields"},
        {{"block", "inspect", "-"},
         as_string(malformed_list),
         "error: transaction 2: malformed_tx: nonce: too_few_fields"},
        {{"block", "inspect", "-"},
         "not a block\n",
         "error: not a block, chain file or transaction list; as a block: malformed_block: "
         "unexpected_string"},
        {{"block", "inspect", "-"},
         std::string{"\xde\xad\xbe\xef"},
         "error: not a block, chain file or transaction list; as a block: malformed_block: "
         "input_too_short"},
        // Garbage in an RLP string is read as an offset-indexed list (issue 19: a bare
        // "error: truncated_index" did not say what the file was taken for).
        {{"block", "inspect", "-"},
         std::string{"\x83\x00\x00\x00", 4},
         "error: not a block, chain file or transaction list; as a transaction list: "
         "truncated_index"},
        {{"block", "inspect", "-"},
         as_string(concat({chain, Bytes{0x01, 0x02}})),
         "error: block 3: malformed_block: unexpected_string"},
        {{"block", "inspect", "-"},
         as_string(concat({chain, truncated})),
         "error: block 3: malformed_block: input_too_short"},
        {{"block", "inspect", "-"},
         as_string(concat({chain, Bytes{0xc0}})),
         "error: block 3: malformed_header: header: input_too_short"},
        // A block cut short in the middle of a chain.
        {{"block", "inspect", "-"},
         as_string(concat({chain_blocks[0], truncated})),
         "error: block 1: malformed_block: input_too_short"},
        // A plain list followed by more bytes.
        {{"block", "inspect", "-"},
         as_string(concat({block::encode_plain_tx_list(txs.views()), Bytes{0x00}})),
         "error: not a block, chain file or transaction list; as a transaction list: "
         "malformed_block: trailing_bytes"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(testing::PrintToString(c.args) + " " + c.error);
        const auto r = run_cli(c.args, c.input);
        EXPECT_EQ(r.status, 2);
        EXPECT_EQ(r.err, c.error + "\n");
        EXPECT_EQ(r.out, "");
    }
}
