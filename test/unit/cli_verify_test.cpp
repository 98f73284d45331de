// The state commitment through the command line: `verify` sums the stored entries afresh and
// compares with the head's state root (exit 0 / 1 / 2), `run --verify-state` refuses to start on
// a mismatch, and a datadir whose state lattice or format is not this barrel's is refused with a
// line naming it, nothing changed.

#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/state/lattice.hpp>
#include <barrel/store/documents.hpp>
#include <barrel/store/store.hpp>

#include "cli_run.hpp"
#include "store_dump.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

#include <regex>

using namespace barrel;
using barrel::test::dump_datadir;
using barrel::test::dump_diff;
using barrel::test::generate_or_throw;
using barrel::test::run_cli;
using barrel::test::ScratchDir;
using barrel::test::write_file;
using barrel::test::write_text;

namespace {

const gen::Workload& verify_workload() {
    static const gen::Workload w =
        generate_or_throw({.blocks = 4, .txs = 30, .accounts = 12, .mix = gen::Mix::mixed});
    return w;
}

/// A datadir holding the workload's 4 blocks.
std::string imported_datadir(const ScratchDir& tmp) {
    const auto& w = verify_workload();
    const std::string genesis = tmp / "genesis.json";
    const std::string chain = tmp / "chain.rlp";
    const std::string dir = tmp / "data";
    write_text(genesis, chain::to_json_text(w.genesis));
    Bytes bytes;
    for (const Bytes& b : w.blocks) bytes.insert(bytes.end(), b.begin(), b.end());
    write_file(chain, bytes);
    EXPECT_EQ(run_cli({"init", "--datadir", dir, "--genesis", genesis}).status, 0);
    EXPECT_EQ(run_cli({"import", "--datadir", dir, chain}).status, 0);
    return dir;
}

std::string head_root(const std::string& dir) {
    store::Options o;
    o.read_only = true;
    auto s = store::Store::open(dir, o);
    EXPECT_TRUE(s) << s.error().message;
    return s ? to_hex((*s)->head().state_root) : "";
}

}  // namespace

TEST(cli_verify, a_whole_datadir_verifies) {
    ScratchDir tmp;
    const std::string dir = imported_datadir(tmp);
    const auto before = dump_datadir(dir);
    const auto r = run_cli({"verify", "--datadir", dir});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(std::regex_match(r.out, std::regex{"verified " + dir +
                                                   ": [0-9]+ entries sum to the state root of its "
                                                   "head, block 4, " +
                                                   head_root(dir) + " \\([0-9.]+ s\\)\n"}))
        << r.out;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(dump_diff(dump_datadir(dir), before), "");  // read-only
}

TEST(cli_verify, a_changed_entry_is_exit_1_naming_both_roots_and_run_refuses_to_start) {
    ScratchDir tmp;
    const std::string dir = imported_datadir(tmp);
    const std::string root = head_root(dir);
    // One account's balance changed behind the store's back, as a damaged or tampered copy has it.
    const auto& [address, account] = verify_workload().genesis.alloc.accounts.front();
    state::Account changed = account;
    changed.balance += 1;
    test::write_raw(dir, "accounts", std::string{as_chars(address.view())},
                    store::account_document(changed));
    const auto before = dump_datadir(dir);

    const auto r = run_cli({"verify", "--datadir", dir});
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(std::regex_match(
        r.err, std::regex{"error: state mismatch in " + dir +
                          ": its [0-9]+ entries sum to state root 0x[0-9a-f]{64}, but its head, "
                          "block 4, commits to " +
                          root + "\n"}))
        << r.err;
    EXPECT_EQ(r.err.find("sum to state root " + root), std::string::npos);

    const auto run = run_cli({"run", "--datadir", dir, "--http", "127.0.0.1:0", "--verify-state"});
    EXPECT_EQ(run.status, 2);
    EXPECT_TRUE(run.err.starts_with("error: state mismatch in " + dir + ": ")) << run.err;
    EXPECT_EQ(dump_diff(dump_datadir(dir), before), "");
}

TEST(cli_verify, what_is_not_a_datadir_or_not_this_format_is_exit_2_and_unchanged) {
    ScratchDir tmp;
    const std::string missing = tmp / "nothing";
    const auto none = run_cli({"verify", "--datadir", missing});
    EXPECT_EQ(none.status, 2);
    EXPECT_EQ(none.err, "error: " + missing + " is not a barrel datadir (run init first)\n");

    // A datadir of the chained-root format: refused by name, by every command, never misread.
    const std::string dir = imported_datadir(tmp);
    test::write_raw(dir, "meta", "format", "barrel/1");
    const auto before = dump_datadir(dir);
    const std::string refusal =
        "error: " + dir +
        " is a datadir of format barrel/1 (its state root chains hashes of history); this barrel "
        "reads format barrel/2 (a state root that commits to the state): init a new datadir and "
        "import or sync the chain again\n";
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"verify", "--datadir", dir},
          std::vector<std::string>{"get", "block", "0", "--datadir", dir},
          std::vector<std::string>{"run", "--datadir", dir, "--http", "127.0.0.1:0"}}) {
        const auto r = run_cli(args);
        EXPECT_EQ(r.status, 2) << args[0];
        EXPECT_EQ(r.err, refusal) << args[0];
    }
    EXPECT_EQ(dump_diff(dump_datadir(dir), before), "");
}

TEST(cli_verify, a_stored_lattice_that_is_not_the_heads_is_damage) {
    ScratchDir tmp;
    const std::string dir = imported_datadir(tmp);
    const std::string root = head_root(dir);
    const auto dump = dump_datadir(dir);
    std::string lattice = dump.at("meta").at("lattice");
    ASSERT_EQ(lattice.size(), state::Lattice::kBytes);
    lattice[100] = static_cast<char>(lattice[100] ^ 1);
    test::write_raw(dir, "meta", "lattice", lattice);
    const auto before = dump_datadir(dir);
    const auto r = run_cli({"verify", "--datadir", dir});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "error: datadir " + dir +
                         " is damaged: its state lattice does not hash to the head's state root " +
                         root + "; nothing was changed\n");
    // Missing, or of another length.
    test::write_raw(dir, "meta", "lattice", lattice.substr(1));
    EXPECT_EQ(run_cli({"verify", "--datadir", dir}).err,
              "error: datadir " + dir +
                  " is damaged: its state lattice (meta/lattice) is missing or not 2048 bytes; "
                  "nothing was changed\n");
    test::write_raw(dir, "meta", "lattice", std::nullopt);
    EXPECT_EQ(run_cli({"verify", "--datadir", dir}).status, 2);
    EXPECT_NE(before.size(), 0u);
}
