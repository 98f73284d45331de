// init / import / export / get through barrel::cli::run, on a generated chain (10 blocks of 100
// mixed transactions): what `get` answers agrees with the generator and with replaying the chain
// in memory, value is conserved, export gives back the imported bytes, re-import skips
// everything, streamed and one-block-at-a-time imports give identical datadirs, and every kind of
// bad input is exit 2 with its exact error line and a datadir that is byte for byte what it was
// (every column family dumped before and after), with the blocks before a bad one committed.

#include <barrel/block/block.hpp>
#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/rlp/decode.hpp>
#include <barrel/store/documents.hpp>
#include <barrel/store/store.hpp>

#include "cli_run.hpp"
#include "store/testing.hpp"
#include "store_dump.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

using namespace barrel;
using barrel::test::CliResult;
using barrel::test::Dump;
using barrel::test::dump_datadir;
using barrel::test::dump_diff;
using barrel::test::generate_or_throw;
using barrel::test::read_file;
using barrel::test::run_cli;
using barrel::test::ScratchDir;
using barrel::test::write_file;
using barrel::test::write_text;
using nlohmann::json;

namespace {

Bytes concat(const std::vector<Bytes>& blocks, size_t count) {
    Bytes out;
    for (size_t i = 0; i < count && i < blocks.size(); ++i)
        out.insert(out.end(), blocks[i].begin(), blocks[i].end());
    return out;
}

/// The generated chain, its files, its decoded blocks and the state that replaying it in memory
/// gives: built once for all the tests here.
struct TestChain {
    static constexpr size_t kBlocks = 10;
    static constexpr size_t kTxs = 100;

    ScratchDir dir;
    gen::Workload w;
    std::vector<block::Block> blocks;  ///< decoded, senders recovered
    std::vector<exec::Outcome> outcomes;
    state::MemoryState final_state;
    std::string genesis_path;
    std::string chain_path;

    TestChain() {
        w = generate_or_throw({.seed = 7,
                               .blocks = kBlocks,
                               .txs = kTxs,
                               .accounts = 150,
                               .hot_accounts = 3,
                               .hot_ratio = 0.2,
                               .mix = gen::Mix::mixed});
        genesis_path = dir / "genesis.json";
        chain_path = dir / "chain.rlp";
        write_text(genesis_path, chain::to_json_text(w.genesis));
        write_file(chain_path, concat(w.blocks, w.blocks.size()));

        final_state = chain::genesis_state(w.genesis);
        state::Lattice lattice = chain::genesis_lattice(w.genesis);
        for (const Bytes& wire : w.blocks) {
            auto b = block::decode_block(wire);
            if (!b || !block::recover_senders(*b, w.genesis.config.chain_id, nullptr))
                throw std::runtime_error("generated block does not verify");
            auto out = exec::execute(*b, final_state, lattice, w.genesis.config);
            if (!out || !exec::check_seal(*b->header, *out))
                throw std::runtime_error("generated block does not seal");
            final_state.apply(out->writes);
            lattice = out->lattice;
            blocks.push_back(std::move(b).value());
            outcomes.push_back(std::move(out).value());
        }
    }
};

const TestChain& test_chain() {
    static const TestChain c;
    return c;
}

CliResult init(const std::string& datadir, const std::string& genesis = test_chain().genesis_path) {
    return run_cli({"init", "--datadir", datadir, "--genesis", genesis});
}

CliResult import(const std::string& datadir, const std::string& file,
                 std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"import", "--datadir", datadir};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(file);
    return run_cli(args);
}

#define EXPECT_OK(r) EXPECT_EQ((r).status, 0) << (r).err

/// A datadir holding the genesis and the first `blocks` blocks.
void make_datadir(const ScratchDir& tmp, const std::string& datadir, size_t blocks) {
    const auto r = init(datadir);
    ASSERT_EQ(r.status, 0) << r.err;
    if (blocks == 0) return;
    const std::string prefix = tmp / ("prefix" + std::to_string(blocks) + ".rlp");
    write_file(prefix, concat(test_chain().w.blocks, blocks));
    const auto i = import(datadir, prefix);
    ASSERT_EQ(i.status, 0) << i.err;
}

std::unique_ptr<store::Store> open_read_only(const std::string& datadir) {
    store::Options o;
    o.read_only = true;
    auto s = store::Store::open(datadir, o);
    if (!s) ADD_FAILURE() << s.error().message;
    return s ? std::move(s).value() : nullptr;
}

u256 total_account_balance(const Dump& dump) {
    u256 sum = 0;
    for (const auto& [key, value] : dump.at("accounts")) {
        const auto a = store::parse_account_document(value);
        EXPECT_TRUE(a) << value;
        if (a) sum += a->balance;
    }
    return sum;
}

/// Where a block's pieces lie in its wire bytes.
struct Layout {
    size_t header{0};       ///< the header list's first byte
    size_t txs_payload{0};  ///< the offset-indexed list's first byte (its count)
};

Layout layout_of(const Bytes& wire) {
    Layout l;
    BytesView in{wire};
    const auto body = rlp::decode_list(in);
    EXPECT_TRUE(body);
    BytesView rest = *body;
    l.header = static_cast<size_t>(rest.data() - wire.data());
    EXPECT_TRUE(block::decode_header(rest));
    const auto payload = rlp::decode_string(rest);
    EXPECT_TRUE(payload);
    l.txs_payload = static_cast<size_t>(payload->data() - wire.data());
    return l;
}

/// Block `index` of the chain re-encoded with its header changed by `edit`.
Bytes with_header(size_t index, const std::function<void(block::Header&)>& edit) {
    const block::Block& b = test_chain().blocks[index];
    block::Header h = *b.header;
    edit(h);
    return block::encode_block(h, b.tx_encodings);
}

/// The whole chain with block `index` replaced.
Bytes chain_with(size_t index, const Bytes& replacement) {
    std::vector<Bytes> blocks = test_chain().w.blocks;
    blocks[index] = replacement;
    return concat(blocks, blocks.size());
}

}  // namespace

TEST(cli_node, import_agrees_with_the_generator_and_the_replayed_state) {
    const TestChain& c = test_chain();
    ScratchDir tmp;
    const std::string datadir = tmp / "data";
    const auto initialized = init(datadir);
    ASSERT_EQ(initialized.status, 0) << initialized.err;
    EXPECT_EQ(initialized.err, "");
    EXPECT_EQ(initialized.out, "initialized " + datadir + " for chain 1: genesis block " +
                                   to_hex(block::hash_of(chain::genesis_header(c.w.genesis))) +
                                   ", state root " + to_hex(chain::state_root(c.w.genesis)) +
                                   ", 150 accounts, 150 users\n");

    const auto r = import(datadir, c.chain_path);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");  // progress only on a terminal
    EXPECT_NE(r.out.find("imported 10 blocks (1000 transactions) in "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("skipped 0 already stored"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("head: block 10 " + to_hex(c.blocks.back().hash)), std::string::npos)
        << r.out;
    for (const char* stage : {"\ndecode ", "\nverify ", "\nexecute ", "\ncommit "})
        EXPECT_NE(r.out.find(stage), std::string::npos) << r.out;

    // Blocks: by number and by hash, header and raw bytes.
    for (size_t k = 0; k < c.blocks.size(); ++k) {
        SCOPED_TRACE("block " + std::to_string(k + 1));
        const block::Block& b = c.blocks[k];
        const auto by_number =
            run_cli({"get", "block", std::to_string(k + 1), "--datadir", datadir});
        ASSERT_EQ(by_number.status, 0) << by_number.err;
        const json doc = json::parse(by_number.out);
        EXPECT_EQ(doc, json::parse(store::header_document(*b.header, b.hash, b.size())));
        EXPECT_EQ(doc["hash"], to_hex(b.hash));
        EXPECT_EQ(doc["state_root"], to_hex(c.outcomes[k].state_root));
        if (k % 4 != 0) continue;  // every RocksDB open costs a few ms
        const auto by_hash = run_cli({"get", "block", to_hex(b.hash), "--datadir", datadir});
        EXPECT_EQ(by_hash.out, by_number.out);
        const auto raw =
            run_cli({"get", "block", "--raw", std::to_string(k + 1), "--datadir", datadir});
        EXPECT_EQ(raw.out, to_hex(c.w.blocks[k]) + "\n");
    }
    const auto genesis_block = run_cli({"get", "block", "0", "--datadir", datadir});
    ASSERT_EQ(genesis_block.status, 0);
    EXPECT_EQ(json::parse(genesis_block.out)["hash"],
              to_hex(block::hash_of(chain::genesis_header(c.w.genesis))));

    // Every transaction and receipt (through the store, which is what `get` prints) and some
    // through the command line.
    auto s = open_read_only(datadir);
    ASSERT_TRUE(s);
    for (size_t k = 0; k < c.blocks.size(); ++k) {
        const block::Block& b = c.blocks[k];
        for (size_t i = 0; i < b.size(); ++i) {
            const json tx = **s->transaction(b.tx_hashes[i]);
            EXPECT_EQ(tx["hash"], to_hex(b.tx_hashes[i]));
            EXPECT_EQ(tx["sender"], to_hex(c.w.senders[k][i]));
            EXPECT_EQ(tx["block_number"], to_hex_quantity(uint64_t{k + 1}));
            EXPECT_EQ(tx["block_hash"], to_hex(b.hash));
            EXPECT_EQ(tx["index"], to_hex_quantity(uint64_t{i}));
            EXPECT_EQ(tx["nonce"], to_hex_quantity(b.txs[i].nonce));
            EXPECT_EQ(tx["value"], to_hex_quantity(b.txs[i].value));
            const json receipt = **s->receipt(b.tx_hashes[i]);
            EXPECT_EQ(receipt, json::parse(store::receipt_document(c.outcomes[k].receipts[i],
                                                                   b.tx_hashes[i], k + 1, i)));
            if ((k * b.size() + i) % 97 == 0) {
                const auto get_tx =
                    run_cli({"get", "tx", to_hex(b.tx_hashes[i]), "--datadir", datadir});
                ASSERT_EQ(get_tx.status, 0) << get_tx.err;
                EXPECT_EQ(get_tx.out, tx.dump(2) + "\n");
                const auto get_receipt =
                    run_cli({"get", "receipt", to_hex(b.tx_hashes[i]), "--datadir", datadir});
                ASSERT_EQ(get_receipt.status, 0) << get_receipt.err;
                EXPECT_EQ(get_receipt.out, receipt.dump(2) + "\n");
            }
        }
    }

    // Every account and user the datadir holds is the replayed state's, and vice versa.
    const Dump dump = dump_datadir(datadir);
    EXPECT_EQ(dump.at("accounts").size(), c.final_state.accounts().size());
    for (const auto& [address, account] : c.final_state.accounts()) {
        const auto doc = s->account_document(address);
        ASSERT_TRUE(doc && *doc) << to_hex(address);
        EXPECT_EQ(**doc, json::parse(store::account_document(account)));
    }
    EXPECT_EQ(dump.at("users").size(), c.final_state.users().size());
    for (const auto& [name, balance] : c.final_state.users()) {
        const auto doc = s->user_document(name);
        ASSERT_TRUE(doc && *doc) << name;
        EXPECT_EQ(**doc, json::parse(store::user_document(name, balance)));
    }
    // ... and through the command line: the coinbase, the first genesis account and user.
    const auto coinbase =
        run_cli({"get", "account", to_hex(c.w.genesis.coinbase), "--datadir", datadir});
    ASSERT_EQ(coinbase.status, 0) << coinbase.err;
    EXPECT_EQ(
        json::parse(coinbase.out),
        json::parse(store::account_document(*c.final_state.find_account(c.w.genesis.coinbase))));
    const Address first = c.w.genesis.alloc.accounts.front().first;
    const auto account = run_cli({"get", "account", to_hex(first), "--datadir", datadir});
    EXPECT_EQ(json::parse(account.out),
              json::parse(store::account_document(*c.final_state.find_account(first))));
    const std::string user = c.w.genesis.alloc.users.front().first;
    const auto get_user = run_cli({"get", "user", user, "--datadir", datadir});
    ASSERT_EQ(get_user.status, 0) << get_user.err;
    EXPECT_EQ(json::parse(get_user.out),
              json::parse(store::user_document(user, *c.final_state.find_user(user))));
    EXPECT_EQ(json::parse(get_user.out)["name"], to_hex(as_bytes(user)));

    // Value is conserved: the accounts of the genesis plus the coinbase plus any account a
    // transfer created hold exactly what the genesis gave out.
    u256 genesis_total = 0;
    for (const auto& [address, a] : c.w.genesis.alloc.accounts) genesis_total += a.balance;
    EXPECT_EQ(total_account_balance(dump), genesis_total);
    EXPECT_GT(c.final_state.find_account(c.w.genesis.coinbase)->balance, 0u);
    EXPECT_EQ(s->head().number, 10u);
    EXPECT_EQ(s->head().state_root, c.outcomes.back().state_root);
}

TEST(cli_node, export_gives_back_the_imported_bytes_and_reimport_skips_everything) {
    const TestChain& c = test_chain();
    ScratchDir tmp;
    const std::string datadir = tmp / "data";
    ASSERT_NO_FATAL_FAILURE(make_datadir(tmp, datadir, 0));
    ASSERT_EQ(import(datadir, c.chain_path).status, 0);

    const std::string exported = tmp / "exported.rlp";
    const auto e = run_cli({"export", "--datadir", datadir, "--out", exported});
    ASSERT_EQ(e.status, 0) << e.err;
    const Bytes original = read_file(c.chain_path);
    EXPECT_EQ(e.out, "exported 10 blocks (" + std::to_string(original.size()) + " bytes) to " +
                         exported + "\n");
    EXPECT_EQ(read_file(exported), original);
    // Nothing but the file is left in its directory (the temporary file was renamed).
    size_t entries = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator{tmp.path()})
        ++entries;
    EXPECT_EQ(entries, 2u);  // the datadir and exported.rlp: no temporary file is left

    // Exporting over an existing file replaces it.
    write_text(exported, "old contents");
    ASSERT_EQ(run_cli({"export", "--datadir", datadir, "--out", exported}).status, 0);
    EXPECT_EQ(read_file(exported), original);

    const Dump before = dump_datadir(datadir);
    for (const auto& file : {c.chain_path, exported}) {
        const auto again = import(datadir, file);
        ASSERT_EQ(again.status, 0) << again.err;
        EXPECT_NE(again.out.find("imported 0 blocks (0 transactions)"), std::string::npos)
            << again.out;
        EXPECT_NE(again.out.find("skipped 10 already stored"), std::string::npos) << again.out;
        EXPECT_EQ(dump_diff(before, dump_datadir(datadir)), "");
    }

    // An exported datadir imports into a fresh one identically.
    const std::string copy = tmp / "copy";
    ASSERT_EQ(init(copy).status, 0);
    ASSERT_EQ(import(copy, exported).status, 0);
    EXPECT_EQ(dump_diff(before, dump_datadir(copy)), "");

    // Export of a datadir at the genesis is an empty file.
    const std::string fresh = tmp / "fresh";
    ASSERT_EQ(init(fresh).status, 0);
    const std::string empty = tmp / "empty.rlp";
    const auto e0 = run_cli({"export", "--datadir", fresh, "--out", empty});
    ASSERT_EQ(e0.status, 0) << e0.err;
    EXPECT_EQ(e0.out, "exported 0 blocks (0 bytes) to " + empty + "\n");
    EXPECT_TRUE(read_file(empty).empty());
}

TEST(cli_node, streamed_and_one_block_at_a_time_imports_give_identical_datadirs) {
    const TestChain& c = test_chain();
    ScratchDir tmp;
    const std::vector<std::vector<std::string>> modes = {
        {}, {"--serial"}, {"--threads", "1"}, {"--serial", "--sync", "--threads", "1"}};
    std::optional<Dump> first;
    for (const auto& mode : modes) {
        std::string name = "data";
        for (const auto& m : mode) name += m;
        SCOPED_TRACE(name);
        const std::string datadir = tmp / name;
        ASSERT_EQ(init(datadir).status, 0);
        const auto r = import(datadir, c.chain_path, mode);
        ASSERT_EQ(r.status, 0) << r.err;
        const auto s = open_read_only(datadir);
        ASSERT_TRUE(s);
        EXPECT_EQ(s->head().number, 10u);
        EXPECT_EQ(s->head().hash, c.blocks.back().hash);
        EXPECT_EQ(s->head().state_root, c.outcomes.back().state_root);
        Dump dump = dump_datadir(datadir);
        if (!first)
            first = std::move(dump);
        else
            EXPECT_EQ(dump_diff(*first, dump), "");
    }
}

TEST(cli_node, blocks_before_a_bad_one_are_committed_and_nothing_of_it) {
    const TestChain& c = test_chain();
    ScratchDir tmp;
    // The reference: a clean import of blocks 1..5.
    const std::string reference = tmp / "reference";
    ASSERT_NO_FATAL_FAILURE(make_datadir(tmp, reference, 5));
    const Dump expected = dump_datadir(reference);

    const std::string bad = tmp / "bad.rlp";
    write_file(bad, chain_with(5, with_header(5, [](block::Header& h) { h.state_root[7] ^= 1; })));
    for (const std::vector<std::string>& mode : {std::vector<std::string>{}, {"--serial"}}) {
        SCOPED_TRACE(mode.empty() ? "streamed" : "serial");
        const std::string datadir = tmp / ("data" + std::to_string(mode.size()));
        ASSERT_EQ(init(datadir).status, 0);
        const auto r = import(datadir, bad, mode);
        EXPECT_EQ(r.status, 2);
        EXPECT_EQ(r.err, "error: block 6: seal: state_root_mismatch\n");
        EXPECT_NE(r.out.find("imported 5 blocks (500 transactions)"), std::string::npos) << r.out;
        EXPECT_EQ(dump_diff(expected, dump_datadir(datadir)), "");
        EXPECT_EQ(open_read_only(datadir)->head().hash, c.blocks[4].hash);
    }
}

TEST(cli_node, bad_input_is_exit_2_with_one_exact_line_and_leaves_the_datadir_as_it_was) {
    const TestChain& c = test_chain();
    ScratchDir tmp;
    const std::string datadir = tmp / "data";
    // Blocks 1..4 are in; every bad chain file below is the whole chain with block 5 damaged,
    // so blocks 1..4 are skipped and block 5 is the first one the import has to take.
    ASSERT_NO_FATAL_FAILURE(make_datadir(tmp, datadir, 4));
    const Dump before = dump_datadir(datadir);
    const block::Block& b5 = c.blocks[4];
    const Bytes& wire5 = c.w.blocks[4];
    const Layout l5 = layout_of(wire5);

    auto expect_bad = [&](const std::string& what, const std::vector<std::string>& args,
                          const std::string& error) {
        SCOPED_TRACE(what);
        const auto r = run_cli(args);
        EXPECT_EQ(r.status, 2) << r.err;
        EXPECT_EQ(r.err, "error: " + error + "\n");
        EXPECT_EQ(dump_diff(before, dump_datadir(datadir)), "");
    };
    auto bad_file = [&](const std::string& name, const Bytes& bytes) {
        const std::string path = tmp / name;
        write_file(path, bytes);
        return path;
    };
    auto import_args = [&](const std::string& file) {
        return std::vector<std::string>{"import", "--datadir", datadir, file};
    };

    // A flipped byte in a transaction's signature: s gets its top bit, so it is above n/2.
    {
        size_t index = b5.size();
        for (size_t i = 0; i < b5.size(); ++i) {
            const BytesView enc = b5.tx_encodings[i];
            if (enc.size() > 33 && enc[enc.size() - 33] == 0xa0) {  // s is the last item, 32 bytes
                index = i;
                break;
            }
        }
        ASSERT_LT(index, b5.size());
        Bytes damaged = wire5;
        const BytesView enc = b5.tx_encodings[index];
        damaged[static_cast<size_t>(enc.data() - b5.wire.data()) + enc.size() - 32] ^= 0x80;
        expect_bad(
            "signature", import_args(bad_file("sig.rlp", chain_with(4, damaged))),
            "block 5: verify: transaction " + std::to_string(index) + ": invalid_tx: s: high_s");
    }
    // A flipped byte in the header: in a root (the seal catches it) ...
    {
        Bytes damaged = wire5;
        const BytesView root = b5.header->txs_root.view();
        const auto at = std::search(damaged.begin(), damaged.end(), root.begin(), root.end());
        ASSERT_NE(at, damaged.end());
        at[5] ^= 0x01;
        expect_bad("txs root", import_args(bad_file("txs_root.rlp", chain_with(4, damaged))),
                   "block 5: seal: txs_root_mismatch");
    }
    // ... or in its list prefix, which makes the header unreadable: the block is named by its
    // position in the file (0-based).
    {
        Bytes damaged = wire5;
        ASSERT_EQ(damaged[l5.header], 0xf8);
        damaged[l5.header] = 0xf7;
        expect_bad("header prefix", import_args(bad_file("header.rlp", chain_with(4, damaged))),
                   "block at position 4: decode: malformed_header: parent_hash: unexpected_length");
    }
    // A damaged offset index: the header still names the block.
    {
        Bytes damaged = wire5;
        const size_t offset1 = l5.txs_payload + 4 + 4;  // offsets[1], after count and offsets[0]
        std::fill_n(damaged.begin() + static_cast<std::ptrdiff_t>(offset1), 4, uint8_t{0});
        expect_bad("offsets", import_args(bad_file("offsets.rlp", chain_with(4, damaged))),
                   "block 5: decode: transaction 0: offsets_not_increasing");
    }
    expect_bad(
        "state root",
        import_args(bad_file(
            "root.rlp",
            chain_with(4, with_header(4, [](block::Header& h) { h.state_root[0] ^= 0xff; })))),
        "block 5: seal: state_root_mismatch");
    {
        Hash wrong = b5.header->parent_hash;
        wrong[31] ^= 1;
        expect_bad(
            "parent hash",
            import_args(bad_file(
                "parent.rlp",
                chain_with(4, with_header(4, [&](block::Header& h) { h.parent_hash = wrong; })))),
            "block 5: link: parent hash " + to_hex(wrong) + " is not the head " +
                to_hex(c.blocks[3].hash));
    }
    expect_bad("header chain id",
               import_args(bad_file(
                   "chain_id.rlp",
                   chain_with(4, with_header(4, [](block::Header& h) { h.chain_id = 2; })))),
               "block 5: verify: wrong_chain_id");
    {
        const auto other = generate_or_throw(
            {.blocks = 1, .txs = 5, .accounts = 4, .hot_accounts = 1, .chain_id = 2});
        expect_bad("another chain", import_args(bad_file("other.rlp", other.blocks[0])),
                   "block 1: verify: wrong_chain_id");
    }
    // Truncated files: inside block 5's transactions, and inside its header.
    {
        const size_t start5 = concat(c.w.blocks, 4).size();
        Bytes file = concat(c.w.blocks, 5);
        file.resize(start5 + wire5.size() / 2);
        expect_bad("truncated", import_args(bad_file("truncated.rlp", file)),
                   "block 5: decode: malformed_block: input_too_short");
        file.resize(start5 + l5.header + 20);
        expect_bad("truncated header", import_args(bad_file("truncated2.rlp", file)),
                   "block at position 4: decode: malformed_block: input_too_short");
    }
    // Not a chain file at all.
    expect_bad("text",
               import_args(
                   bad_file("text.rlp", Bytes(as_bytes("hello").begin(), as_bytes("hello").end()))),
               "block at position 0: decode: malformed_block: unexpected_string");
    {
        const std::string missing = tmp / "missing.rlp";
        expect_bad("missing file", import_args(missing),
                   "cannot read chain file '" + missing + "': No such file or directory");
        expect_bad("directory", import_args(tmp.path().string()),
                   "chain file '" + tmp.path().string() + "' is a directory");
    }
    // Not a datadir.
    {
        const std::string empty = tmp / "empty";
        std::filesystem::create_directory(empty);
        expect_bad("empty dir", {"import", "--datadir", empty, c.chain_path},
                   empty + " is not a barrel datadir (run init first)");
        EXPECT_TRUE(std::filesystem::is_empty(empty));
        const std::string nowhere = tmp / "nowhere";
        expect_bad("missing dir", {"get", "block", "0", "--datadir", nowhere},
                   nowhere + " is not a barrel datadir (run init first)");
        expect_bad("missing dir export", {"export", "--datadir", nowhere, "--out", tmp / "x.rlp"},
                   nowhere + " is not a barrel datadir (run init first)");
        EXPECT_FALSE(std::filesystem::exists(nowhere));
        EXPECT_FALSE(std::filesystem::exists(tmp / "x.rlp"));
    }
    // Bad genesis files: nothing is created.
    {
        const std::string fresh = tmp / "fresh";
        auto init_bad = [&](const std::string& what, const std::string& text,
                            const std::string& error) {
            const std::string path = tmp / "genesis-bad.json";
            write_text(path, text);
            expect_bad(what, {"init", "--datadir", fresh, "--genesis", path},
                       "genesis '" + path + "': " + error);
            EXPECT_FALSE(std::filesystem::exists(fresh));
        };
        init_bad("bad JSON", "{\"chain_id\": 1,",
                 "invalid JSON: [json.exception.parse_error.101] parse error at line 1, column 16: "
                 "syntax error while parsing object key - unexpected end of input; expected string "
                 "literal");
        init_bad(
            "balance 2^256",
            R"({"chain_id": 1, "accounts": {"0x1111111111111111111111111111111111111111": {"balance": "0x10000000000000000000000000000000000000000000000000000000000000000"}}})",
            "accounts.0x1111111111111111111111111111111111111111: balance: not an unsigned 256-bit "
            "integer");
        init_bad("chain id 2^64", R"({"chain_id": "18446744073709551616"})",
                 "chain_id: not an unsigned 64-bit integer");
        // `gen --chain-id 0` is refused; so is a genesis of chain 0 (issue 19: init took it).
        init_bad("chain id 0", R"({"chain_id": 0})", "chain_id: must be at least 1, got 0");
        init_bad("chain id 0x0", R"({"chain_id": "0x0"})", "chain_id: must be at least 1, got 0");
        init_bad("bad address", R"({"chain_id": 1, "accounts": {"0x11": {"balance": "1"}}})",
                 "accounts.0x11: not a 20-byte 0x address");
        const std::string missing = tmp / "no-genesis.json";
        expect_bad("missing genesis", {"init", "--datadir", fresh, "--genesis", missing},
                   "cannot read genesis '" + missing + "': No such file or directory");
        EXPECT_FALSE(std::filesystem::exists(fresh));
    }
    // Init over the datadir.
    expect_bad("init twice", {"init", "--datadir", datadir, "--genesis", c.genesis_path},
               datadir + " is not empty");
    // Usage mistakes.
    expect_bad("unknown option", {"import", "--datadir", datadir, "--bogus", c.chain_path},
               "import: unknown option '--bogus'");
    expect_bad("missing --datadir", {"import", c.chain_path},
               "import: missing option --datadir DIR");
    expect_bad("missing chain", {"import", "--datadir", datadir}, "import: missing argument CHAIN");
    expect_bad("export without --out", {"export", "--datadir", datadir},
               "export: missing option --out FILE");
    expect_bad("get without --datadir",
               {"get", "account", "0x1111111111111111111111111111111111111111"},
               "get account: missing option --datadir DIR");
    // The datadir held by another writer.
    {
        auto holder = store::Store::open(datadir);
        ASSERT_TRUE(holder);
        expect_bad("locked", import_args(c.chain_path),
                   "datadir " + datadir + " is in use by another process");
        // Readers do not need the lock.
        const auto g = run_cli({"get", "block", "4", "--datadir", datadir});
        EXPECT_EQ(g.status, 0) << g.err;
        const std::string out = tmp / "locked-export.rlp";
        EXPECT_EQ(run_cli({"export", "--datadir", datadir, "--out", out}).status, 0);
        EXPECT_EQ(read_file(out), concat(c.w.blocks, 4));
    }
    // Export into a directory that does not exist.
    {
        const std::string out = tmp / "no/such/dir.rlp";
        expect_bad("export nowhere", {"export", "--datadir", datadir, "--out", out},
                   "--out: cannot write '" + out + "': No such file or directory");
    }
    // After all that, the datadir still takes the rest of the chain.
    const auto rest = import(datadir, c.chain_path);
    ASSERT_EQ(rest.status, 0) << rest.err;
    EXPECT_NE(rest.out.find("imported 6 blocks (600 transactions)"), std::string::npos) << rest.out;
    EXPECT_NE(rest.out.find("skipped 4 already stored"), std::string::npos) << rest.out;
}

TEST(cli_node, get_not_found_and_bad_arguments) {
    const TestChain& c = test_chain();
    ScratchDir tmp;
    const std::string datadir = tmp / "data";
    ASSERT_NO_FATAL_FAILURE(make_datadir(tmp, datadir, 2));
    const Dump before = dump_datadir(datadir);
    const std::string zero_hash = to_hex(Hash{});
    const std::string b5 = to_hex(c.blocks[4].hash);
    const std::string tx5 = to_hex(c.blocks[4].tx_hashes[0]);
    const std::vector<test::BadInputCase> cases = {
        {{"get", "block", "3"}, "", "block 3 not found"},
        {{"get", "block", "3", "--raw"}, "", "block 3 not found"},
        {{"get", "block", "0", "--raw"}, "", "block 0 (the genesis) has no wire form"},
        {{"get", "block", b5}, "", "block " + b5 + " not found"},
        {{"get", "block", "ten"},
         "",
         "invalid block 'ten': expected a number, a 32-byte 0x hash, or latest, earliest, "
         "pending, safe or finalized"},
        {{"get", "block", "Latest"},
         "",
         "invalid block 'Latest': expected a number, a 32-byte 0x hash, or latest, earliest, "
         "pending, safe or finalized"},
        {{"get", "block", "0x" + std::string(63, '0') + "g"},
         "",
         "invalid block hash '0x" + std::string(63, '0') + "g': invalid hex digit"},
        {{"get", "tx", tx5}, "", "transaction " + tx5 + " not found"},
        {{"get", "tx", "0x1234"}, "", "invalid transaction hash '0x1234': wrong length"},
        {{"get", "receipt", zero_hash}, "", "receipt of transaction " + zero_hash + " not found"},
        {{"get", "account", "0x0000000000000000000000000000000000000001"},
         "",
         "account 0x0000000000000000000000000000000000000001 not found"},
        {{"get", "account", "0x12"}, "", "invalid address '0x12': wrong length"},
        {{"get", "user", "nobody"}, "", "user 'nobody' not found"},
        {{"get", "colour"},
         "",
         "get: unknown subcommand 'colour' (expected account, user, block, tx, receipt)"},
    };
    for (const auto& bad : cases) {
        std::vector<std::string> args = bad.args;
        args.insert(args.end(), {"--datadir", datadir});
        std::string joined;
        for (const auto& a : args) joined += a + " ";
        SCOPED_TRACE(joined);
        const auto r = run_cli(args);
        EXPECT_EQ(r.status, 2);
        EXPECT_EQ(r.err, "error: " + bad.error + "\n");
        EXPECT_EQ(r.out, "");
    }
    EXPECT_EQ(dump_diff(before, dump_datadir(datadir)), "");

    // Block 2 by a 0x number, and its transactions are there.
    const auto r = run_cli({"get", "block", "0x2", "--datadir", datadir});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(json::parse(r.out)["hash"], to_hex(c.blocks[1].hash));
    EXPECT_EQ(
        run_cli({"get", "tx", to_hex(c.blocks[1].tx_hashes[99]), "--datadir", datadir}).status, 0);
}

// Issue 30, item 7: block tags as go-ethereum's and cast's users type them. `earliest` is the
// genesis; `latest`, and on a single sealer `pending`, `safe` and `finalized`, the head.
TEST(cli_node, get_block_takes_the_block_tags) {
    const TestChain& c = test_chain();
    ScratchDir tmp;
    const std::string datadir = tmp / "data";
    ASSERT_NO_FATAL_FAILURE(make_datadir(tmp, datadir, 2));
    const auto genesis = run_cli({"get", "block", "0", "--datadir", datadir});
    ASSERT_EQ(genesis.status, 0) << genesis.err;
    const std::vector<std::pair<std::string, std::string>> tags = {
        {"latest", to_hex(c.blocks[1].hash)},
        {"pending", to_hex(c.blocks[1].hash)},
        {"safe", to_hex(c.blocks[1].hash)},
        {"finalized", to_hex(c.blocks[1].hash)},
        {"earliest", json::parse(genesis.out)["hash"].get<std::string>()},
    };
    for (const auto& [tag, hash] : tags) {
        SCOPED_TRACE(tag);
        const auto r = run_cli({"get", "block", tag, "--datadir", datadir});
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(json::parse(r.out)["hash"], hash);
    }
    const auto raw = run_cli({"get", "block", "latest", "--raw", "--datadir", datadir});
    ASSERT_EQ(raw.status, 0) << raw.err;
    EXPECT_EQ(raw.out, run_cli({"get", "block", "2", "--raw", "--datadir", datadir}).out);
}

// Issue 31: a block a CometBFT network decided has CometBFT's hash stored beside barrel's;
// `get block` prints it as `cometbft_hash`, and a block without one prints as before.
TEST(cli_node, get_block_prints_cometbfts_hash_beside_barrels_when_stored) {
    const TestChain& c = test_chain();
    ScratchDir tmp;
    const std::string datadir = tmp / "data";
    const Bytes consensus(32, 0xcb);
    {
        auto s = store::Store::init(datadir, c.w.genesis);
        ASSERT_TRUE(s) << s.error().message;
        // Block 1 as the abci module commits it (Pipeline::commit_checked with the hash), block
        // 2 as an import does.
        for (size_t k = 0; k < 2; ++k) {
            ASSERT_TRUE((*s)->commit(c.blocks[k], c.outcomes[k], true,
                                     k == 0 ? BytesView{consensus} : BytesView{}));
        }
        EXPECT_EQ((*s)->consensus_hash(1).value(), consensus);
        EXPECT_EQ((*s)->consensus_hash(2).value(), std::nullopt);
    }
    const auto one = run_cli({"get", "block", "1", "--datadir", datadir});
    ASSERT_EQ(one.status, 0) << one.err;
    json expected = json::parse(
        store::header_document(*c.blocks[0].header, c.blocks[0].hash, c.blocks[0].size()));
    std::string cbs = "0x";
    for (int i = 0; i < 32; ++i) cbs += "cb";
    expected["cometbft_hash"] = cbs;
    EXPECT_EQ(json::parse(one.out), expected);
    EXPECT_EQ(json::parse(one.out)["hash"], to_hex(c.blocks[0].hash));
    const auto two = run_cli({"get", "block", "2", "--datadir", datadir});
    ASSERT_EQ(two.status, 0) << two.err;
    EXPECT_EQ(json::parse(two.out),
              json::parse(store::header_document(*c.blocks[1].header, c.blocks[1].hash,
                                                 c.blocks[1].size())));
    const auto zero = run_cli({"get", "block", "0", "--datadir", datadir});
    ASSERT_EQ(zero.status, 0) << zero.err;
    EXPECT_FALSE(json::parse(zero.out).contains("cometbft_hash"));
}

// Issue 38: a pruned datadir (run --retain-blocks) says which blocks it holds; `earliest` is the
// first of them.
TEST(cli_node, get_says_a_block_is_pruned_and_earliest_is_the_first_held) {
    const TestChain& c = test_chain();
    ScratchDir tmp;
    const std::string datadir = tmp / "data";
    {
        auto s = store::Store::init(datadir, c.w.genesis, {.retain_blocks = 3});
        ASSERT_TRUE(s) << s.error().message;
        for (size_t k = 0; k < 6; ++k) ASSERT_TRUE((*s)->commit(c.blocks[k], c.outcomes[k]));
        store::testing::wait_for_pruner(**s);
    }
    const std::string held = "this datadir holds blocks 4 to 6 and the genesis";
    const std::string b2 = to_hex(c.blocks[1].hash), tx2 = to_hex(c.blocks[1].tx_hashes[0]);
    const std::vector<test::BadInputCase> cases = {
        {{"get", "block", "2"}, "", "block 2 is pruned: " + held},
        {{"get", "block", "3", "--raw"}, "", "block 3 is pruned: " + held},
        {{"get", "block", b2},
         "",
         "block " + b2 + " not found (" + held + "; older ones are pruned)"},
        {{"get", "tx", tx2},
         "",
         "transaction " + tx2 + " not found (" + held + "; older ones are pruned)"},
        {{"get", "receipt", tx2},
         "",
         "receipt of transaction " + tx2 + " not found (" + held + "; older ones are pruned)"},
        {{"get", "block", "7"}, "", "block 7 not found"},
    };
    for (const auto& bad : cases) {
        std::vector<std::string> args = bad.args;
        args.insert(args.end(), {"--datadir", datadir});
        SCOPED_TRACE(testing::PrintToString(args));
        const auto r = run_cli(args);
        EXPECT_EQ(r.status, 2);
        EXPECT_EQ(r.err, "error: " + bad.error + "\n");
    }
    const auto earliest = run_cli({"get", "block", "earliest", "--datadir", datadir});
    ASSERT_EQ(earliest.status, 0) << earliest.err;
    EXPECT_EQ(json::parse(earliest.out)["hash"], to_hex(c.blocks[3].hash));
    EXPECT_EQ(run_cli({"get", "block", "0", "--datadir", datadir}).status, 0);
    EXPECT_EQ(run_cli({"get", "tx", to_hex(c.blocks[3].tx_hashes[0]), "--datadir", datadir}).status,
              0);
}

TEST(cli_node, help_lists_the_node_commands) {
    const auto r = run_cli({"--help"});
    ASSERT_EQ(r.status, 0);
    for (const char* line :
         {"  init ", "  import CHAIN ", "  export ", "  get account ADDRESS ", "  get user NAME ",
          "  get block NUMBER|HASH|TAG ", "  get tx HASH ", "  get receipt HASH "})
        EXPECT_NE(r.out.find(line), std::string::npos) << line;
    const auto h = run_cli({"import", "--help"});
    ASSERT_EQ(h.status, 0);
    EXPECT_NE(h.out.find("Usage: barrel-node import --datadir DIR [OPTIONS] CHAIN"),
              std::string::npos)
        << h.out;
}
