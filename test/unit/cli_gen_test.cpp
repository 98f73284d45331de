// `barrel-node gen`: every way its options can be wrong (exit 2, one line, nothing written), and
// a successful run whose files are exactly what barrel::gen::generate gives, whatever --threads.

#include <barrel/block/block.hpp>
#include <barrel/chain/genesis.hpp>

#include "cli_run.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

#include <string>
#include <vector>

using barrel::test::generate_or_throw;
using barrel::test::read_text;
using barrel::test::run_cli;
using barrel::test::ScratchDir;
using barrel::test::write_text;

TEST(cli_gen, bad_options_write_nothing) {
    ScratchDir dir;
    const std::string g = dir / "genesis.json";
    const std::string c = dir / "chain.bin";
    // A genesis from an earlier run must survive a failed one untouched.
    const std::string existing = dir / "existing.json";
    write_text(existing, "earlier");
    const std::string missing_dir = dir / "missing/chain.bin";

    struct Case {
        std::vector<std::string> args;
        std::string error;
    };
    const std::vector<Case> cases = {
        {{"gen", "--genesis", g, "--blocks", "1"}, "error: gen: missing option --out FILE"},
        {{"gen", "--out", c, "--blocks", "1"}, "error: gen: missing option --genesis FILE"},
        {{"gen", "--genesis", g, "--out", c}, "error: gen: missing option --blocks N"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "0"},
         "error: --blocks: must be at least 1, got 0"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "x"},
         "error: --blocks: expected an unsigned 64-bit integer, got 'x'"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "1", "--txs", "0"},
         "error: --txs: must be between 1 and 1000000, got 0"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "1", "--txs", "1000001"},
         "error: --txs: must be between 1 and 1000000, got 1000001"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "1", "--accounts", "1"},
         "error: --accounts: must be between 2 and 1000000, got 1"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "1", "--accounts", "10", "--hot-accounts",
          "11"},
         "error: --hot-accounts: must be between 1 and the number of accounts (10), got 11"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "1", "--mix", "foo"},
         "error: --mix: expected transfer, dag or mixed, got 'foo'"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "1", "--hot-ratio", "1.5"},
         "error: --hot-ratio: must be between 0 and 1, got 1.5"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "1", "--hot-ratio", "-0.5"},
         "error: --hot-ratio: must be between 0 and 1, got -0.5"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "1", "--hot-ratio", "half"},
         "error: --hot-ratio: expected a number between 0 and 1, got 'half'"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "1", "--hot-ratio", "0.5x"},
         "error: --hot-ratio: expected a number between 0 and 1, got '0.5x'"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "1", "--chain-id", "0"},
         "error: --chain-id: must be at least 1, got 0"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "1", "--seed", "-1"},
         "error: --seed: expected an unsigned 64-bit integer, got '-1'"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "1", "--frobnicate", "1"},
         "error: gen: unknown option '--frobnicate'"},
        {{"gen", "--genesis", g, "--out", c, "--blocks", "1", "extra"},
         "error: gen: unexpected argument 'extra'"},
        {{"gen", "--genesis", c, "--out", c, "--blocks", "1"},
         "error: --genesis and --out name the same file '" + c + "'"},
        {{"gen", "--genesis", dir / "sub/../chain.bin", "--out", dir / "./chain.bin", "--blocks",
          "1"},
         "error: --genesis and --out name the same file '" + dir / "./chain.bin" + "'"},
        {{"gen", "--genesis", existing, "--out", missing_dir, "--blocks", "1", "--txs", "5",
          "--accounts", "4"},
         "error: --out: cannot write '" + missing_dir + "': No such file or directory"},
        {{"gen", "--genesis", dir / "missing/g.json", "--out", c, "--blocks", "1", "--txs", "5"},
         "error: --genesis: cannot write '" + dir / "missing/g.json" +
             "': No such file or directory"},
        {{"gen", "--genesis", g, "--out", dir / "", "--blocks", "1", "--txs", "5"},
         "error: --out: '" + dir / "" + "' is a directory"},
    };
    for (const auto& tc : cases) {
        std::string joined;
        for (const auto& a : tc.args) joined += a + " ";
        SCOPED_TRACE(joined);
        const auto r = run_cli(tc.args);
        EXPECT_EQ(r.status, 2);
        EXPECT_EQ(r.err, tc.error + "\n");
        EXPECT_EQ(r.out, "");
        EXPECT_EQ(dir.entries(), std::vector<std::string>{"existing.json"});
        EXPECT_EQ(read_text(existing), "earlier");
    }
}

TEST(cli_gen, writes_what_generate_gives) {
    ScratchDir dir;
    const auto expected = generate_or_throw({.seed = 7,
                                             .blocks = 2,
                                             .txs = 50,
                                             .accounts = 20,
                                             .hot_accounts = 3,
                                             .hot_ratio = 0.25,
                                             .mix = barrel::gen::Mix::mixed,
                                             .chain_id = 5});
    std::string expected_chain;
    for (const auto& b : expected.blocks) expected_chain.append(b.begin(), b.end());

    const std::vector<std::string> options = {
        "--blocks",    "2",    "--txs", "50",    "--accounts", "20", "--hot-accounts", "3",
        "--hot-ratio", "0.25", "--mix", "mixed", "--seed",     "7",  "--chain-id",     "5"};
    for (const char* threads : {"1", "2", "4"}) {
        SCOPED_TRACE(std::string{"--threads "} + threads);
        const std::string g = dir / (std::string{"genesis-"} + threads + ".json");
        const std::string c = dir / (std::string{"chain-"} + threads + ".bin");
        std::vector<std::string> args = {"--threads", threads, "gen", "--genesis", g, "--out", c};
        args.insert(args.end(), options.begin(), options.end());
        const auto r = run_cli(args);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.err, "");
        EXPECT_EQ(r.out, "wrote 2 blocks of 50 transactions (mixed, seed 7) to " + c + " (" +
                             std::to_string(expected_chain.size()) +
                             " bytes) and the genesis of chain 5 to " + g + "\n");

        const std::string genesis_text = read_text(g);
        EXPECT_EQ(genesis_text, barrel::chain::to_json_text(expected.genesis));
        const auto genesis = barrel::chain::parse_genesis(genesis_text);
        ASSERT_TRUE(genesis) << genesis.error();
        EXPECT_EQ(*genesis, expected.genesis);

        const std::string chain = read_text(c);
        EXPECT_EQ(chain, expected_chain);
        // The chain file is the blocks back to back: walk it.
        barrel::BytesView rest = barrel::as_bytes(chain);
        size_t blocks = 0;
        while (!rest.empty()) {
            const auto one = barrel::block::split_block(rest);
            ASSERT_TRUE(one) << barrel::block::describe(one.error());
            ASSERT_LT(blocks, expected.blocks.size());
            EXPECT_TRUE(std::equal(one->begin(), one->end(), expected.blocks[blocks].begin(),
                                   expected.blocks[blocks].end()));
            const auto decoded =
                barrel::block::decode_block(barrel::Bytes(one->begin(), one->end()));
            ASSERT_TRUE(decoded) << barrel::block::describe(decoded.error());
            EXPECT_EQ(decoded->header->number, blocks + 1);
            EXPECT_EQ(decoded->size(), 50u);
            ++blocks;
        }
        EXPECT_EQ(blocks, 2u);
    }
    // No temporary files are left behind.
    EXPECT_EQ(dir.entries().size(), 6u);
}

TEST(cli_gen, overwrites_existing_files_and_defaults) {
    ScratchDir dir;
    const std::string g = dir / "g.json";
    const std::string c = dir / "c.bin";
    write_text(g, "old genesis");
    write_text(c, "old chain");
    // Defaults: transfer mix, seed 1, chain 1; a small --accounts shrinks the default hot set.
    const auto r = run_cli({"gen", "--genesis", g, "--out", c, "--blocks", "1", "--txs", "10",
                            "--accounts", "2", "--hot-ratio=1"});
    ASSERT_EQ(r.status, 0) << r.err;
    const auto expected = generate_or_throw(
        {.blocks = 1, .txs = 10, .accounts = 2, .hot_accounts = 2, .hot_ratio = 1});
    EXPECT_EQ(read_text(g), barrel::chain::to_json_text(expected.genesis));
    const std::string chain = read_text(c);
    EXPECT_EQ(chain, std::string(expected.blocks[0].begin(), expected.blocks[0].end()));
    EXPECT_EQ(dir.entries(), (std::vector<std::string>{"c.bin", "g.json"}));
}

TEST(cli_gen, help) {
    const auto r = run_cli({"gen", "--help"});
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("Usage: barrel-node gen --genesis FILE --out FILE --blocks N [OPTIONS]"),
              std::string::npos)
        << r.out;
    for (const char* option : {"--txs N", "--accounts N", "--mix KIND", "--hot-ratio R",
                               "--hot-accounts K", "--seed S", "--chain-id N", "--threads N"})
        EXPECT_NE(r.out.find(option), std::string::npos) << option;
    const auto main_help = run_cli({"--help"});
    EXPECT_NE(main_help.out.find("  gen "), std::string::npos) << main_help.out;
}
