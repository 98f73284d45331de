// Store errors as values: every RocksDB status kind has its StoreErrorCode (corruption is not
// io), and a stored state document that does not decode is a corruption error of the read,
// which fails the block's execution (state_corrupt) and its import, with nothing written,
// instead of an exception out of a stage.

#include <barrel/core/hex.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/store/store.hpp>

#include "store/errors.hpp"
#include "store_dump.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

using namespace barrel;
using barrel::test::generate_or_throw;
using barrel::test::ScratchDir;

namespace {

std::string address_key(const Address& a) {
    return {reinterpret_cast<const char*>(a.data()), Address::size()};
}

/// A one-block DagTransfer-and-transfer workload and a datadir at its genesis.
struct Fixture {
    ScratchDir tmp;
    std::filesystem::path dir{tmp.path() / "data"};
    gen::Workload w;

    Fixture() {
        w = generate_or_throw({.blocks = 1, .txs = 12, .accounts = 8, .mix = gen::Mix::mixed});
        EXPECT_TRUE(store::Store::init(dir, w.genesis));
    }

    std::unique_ptr<store::Store> open() const {
        auto s = store::Store::open(dir);
        EXPECT_TRUE(s) << (s ? "" : s.error().message);
        return s ? std::move(s).value() : nullptr;
    }
};

}  // namespace

TEST(store_errors, each_rocksdb_status_kind_has_its_code) {
    using rocksdb::Status;
    using C = store::StoreErrorCode;
    const std::vector<std::pair<Status, C>> table = {
        {Status::Corruption("bad block"), C::corruption},
        {Status::NotFound("a table file the manifest lists"), C::corruption},
        {Status::IOError("read"), C::io},
        {Status::NoSpace("write"), C::io},
        {Status::PathNotFound("dir"), C::io},
        {Status::InvalidArgument("option"), C::invalid_argument},
        {Status::NotSupported("feature"), C::unsupported},
        {Status::MemoryLimit("arena"), C::out_of_memory},
        {Status::Busy(), C::internal},
        {Status::TimedOut(), C::internal},
        {Status::Aborted(), C::internal},
        {Status::TryAgain(), C::internal},
        {Status::Incomplete(), C::internal},
        {Status::ShutdownInProgress(), C::internal},
        {Status::MergeInProgress(), C::internal},
        {Status::Expired(), C::internal},
        {Status::CompactionTooLarge(), C::internal},
        {Status::ColumnFamilyDropped(), C::internal},
    };
    for (const auto& [status, code] : table) {
        EXPECT_EQ(store::to_string(store::code_of(status)), store::to_string(code))
            << status.ToString();
        const auto e = store::from_status(status, "read").error;
        EXPECT_EQ(e.code, code);
        EXPECT_EQ(e.message, "read: " + status.ToString());
    }
}

TEST(store_errors, a_corrupt_account_document_is_a_corruption_error_of_the_read) {
    Fixture f;
    const Address damaged = f.w.genesis.alloc.accounts.front().first;
    const std::string name = f.w.genesis.alloc.users.front().first;
    test::write_raw(f.dir, "accounts", address_key(damaged), "{\"balance\":");
    test::write_raw(f.dir, "users", name, "[]");
    const auto s = f.open();
    ASSERT_TRUE(s);
    const auto account = s->account(damaged);
    ASSERT_FALSE(account);
    EXPECT_EQ(account.error().code, state::ReadErrorCode::corruption);
    EXPECT_EQ(account.error().message,
              "the stored account document of " + to_hex(damaged) + " does not parse");
    const auto user = s->user(name);
    ASSERT_FALSE(user);
    EXPECT_EQ(user.error().code, state::ReadErrorCode::corruption);
    // The other keys still read.
    const auto other = s->account(f.w.genesis.alloc.accounts.back().first);
    ASSERT_TRUE(other);
    EXPECT_EQ(*other, f.w.genesis.alloc.accounts.back().second);
}

TEST(store_errors, a_block_over_a_corrupt_account_fails_to_import_and_writes_nothing) {
    Fixture f;
    auto b = block::decode_block(f.w.blocks[0]);
    ASSERT_TRUE(b);
    b->senders = f.w.senders[0];
    const Address sender = b->senders.front();
    test::write_raw(f.dir, "accounts", address_key(sender), "not json");
    const test::Dump before = test::dump_datadir(f.dir);
    {
        const auto s = f.open();
        ASSERT_TRUE(s);
        // The stage's own error: the parent state is corrupt, not the block.
        const auto outcome = exec::execute(*b, *s, s->lattice(), s->genesis().config);
        ASSERT_FALSE(outcome);
        EXPECT_EQ(exec::to_string(outcome.error().code),
                  exec::to_string(exec::ExecErrorCode::state_corrupt));
        EXPECT_EQ(exec::describe(outcome.error()), "parent state: state_corrupt");

        pipeline::Pipeline p{*s, pipeline::Config{}};
        const auto imported = p.import_block(f.w.blocks[0]);
        ASSERT_FALSE(imported);
        EXPECT_EQ(imported.error().stage, pipeline::Stage::execute);
        const auto* exec_error = std::get_if<exec::ExecError>(&imported.error().error);
        ASSERT_NE(exec_error, nullptr) << pipeline::describe(imported.error());
        EXPECT_EQ(exec_error->code, exec::ExecErrorCode::state_corrupt);
        EXPECT_EQ(pipeline::describe(imported.error()),
                  "block 1: execute: parent state: state_corrupt");
        EXPECT_EQ(s->head().number, 0u);
    }
    // Closing the writer flushed its memtables, which moves records between files but changes
    // no key or value.
    EXPECT_EQ(test::dump_diff(before, test::dump_datadir(f.dir)), "");
}
