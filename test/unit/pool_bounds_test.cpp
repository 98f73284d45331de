// The pool against clients that try to fill it, churn it or slip past its checks: the replacement
// rule at each boundary, cost sums past 2^256, pending and queued bounded apart with eviction of
// the cheapest, per-sender room, far-future nonces, queued expiry, queries as of an older block,
// and the journal appended as the pool admits (issue 29, findings 4, 5, 7, 9 and 13).

#include <barrel/core/uint256.hpp>
#include <barrel/pool/pool.hpp>

#include "pool_fixtures.hpp"
#include "test_files.hpp"
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <filesystem>
#include <thread>

namespace barrel::pool {
namespace {

using namespace barrel::pool::testing;

TEST_F(PoolTest, a_replacement_needs_ten_percent_on_both_caps_at_every_boundary) {
    admit_ok({.nonce = 0, .fee_cap = 1000, .tip = 100});
    struct Case {
        u256 fee_cap, tip;
    };
    // value 2: a different transaction even where the fees are the same
    for (const Case& c : {Case{1100, 101},     // cap +10%, tip +1%: the mutant the suite missed
                          Case{1100, 109},     // tip +9%
                          Case{1090, 110},     // cap +9%
                          Case{1099, 110},     // cap one short of +10%
                          Case{1090, 109},     // both +9%
                          Case{1000, 200},     // cap not raised
                          Case{2000, 100}}) {  // tip not raised
        const Rejection r = admit_err({.nonce = 0, .fee_cap = c.fee_cap, .tip = c.tip, .value = 2});
        EXPECT_EQ(r.code, RejectCode::replacement_underpriced) << c.fee_cap << " " << c.tip;
        EXPECT_EQ(r.message, "replacement transaction underpriced");
    }
    EXPECT_TRUE(admit_ok({.nonce = 0, .fee_cap = 1100, .tip = 110, .value = 2}).replaced);
    // From the replacement's fees on: +10% of 1100 and 110.
    EXPECT_EQ(admit_err({.nonce = 0, .fee_cap = 1209, .tip = 121, .value = 3}).code,
              RejectCode::replacement_underpriced);
    EXPECT_EQ(admit_err({.nonce = 0, .fee_cap = 1210, .tip = 120, .value = 3}).code,
              RejectCode::replacement_underpriced);
    EXPECT_TRUE(admit_ok({.nonce = 0, .fee_cap = 1210, .tip = 121, .value = 3}).replaced);
    EXPECT_EQ(pool().status().pending, 1u);
}

TEST_F(PoolTest, cost_sums_past_2_256_are_refused_never_wrapped) {
    const u256 max = std::numeric_limits<u256>::max();
    const u256 half = u256{1} << 255;
    const Address a = address_of_key(5);
    state.set_account(a, state::Account{0, max});
    admit_ok({.key = 5, .nonce = 0, .fee_cap = 0, .tip = 0, .value = half});
    // A second 2^255 makes 2^256: once it wrapped to 0 and was admitted (finding 7).
    const Rejection second =
        admit_err({.key = 5, .nonce = 1, .fee_cap = 0, .tip = 0, .value = half});
    EXPECT_EQ(second.code, RejectCode::insufficient_funds);
    EXPECT_EQ(second.message, "insufficient funds for gas * price + value: balance " +
                                  to_decimal(max) + ", queued cost " + to_decimal(half) +
                                  ", tx cost " + to_decimal(half) + ", overshot 1");
    // Exactly 2^256 − 1 together fits.
    admit_ok({.key = 5, .nonce = 1, .fee_cap = 0, .tip = 0, .value = half - 1});
    // A replacement whose cost would take the sum past it: refused too.
    const Rejection bumped =
        admit_err({.key = 5, .nonce = 1, .fee_cap = 1, .tip = 1, .value = half - 1});
    EXPECT_EQ(bumped.code, RejectCode::insufficient_funds);
    EXPECT_EQ(bumped.message, "insufficient funds for gas * price + value: balance " +
                                  to_decimal(max) + ", queued cost " + to_decimal(max) +
                                  ", tx bumped 21000, overshot 21000");
    EXPECT_EQ(pool().status().pending, 2u);
}

TEST_F(PoolTest, queued_transactions_cannot_take_the_room_of_pending_ones) {
    config.max_pending = 4;
    config.max_queued = 2;
    // Far-future nonces at gas price 0 (finding 5's flood) fill the queue only.
    admit_ok({.key = 1, .nonce = 5, .fee_cap = 0, .tip = 0, .value = 0});
    admit_ok({.key = 2, .nonce = 5, .fee_cap = 0, .tip = 0, .value = 0});
    const Rejection full = admit_err({.key = 4, .nonce = 5, .fee_cap = 0, .tip = 0, .value = 0});
    EXPECT_EQ(full.code, RejectCode::pool_full);
    EXPECT_EQ(full.message, "txpool is full");
    // An honest transaction is pending at once.
    EXPECT_TRUE(admit_ok({.key = 3, .nonce = 0}).pending);
    // A better-paying queued one evicts the cheapest queued one of another sender (the later
    // arrival of two at the same price), and never a pending one.
    admit_ok({.key = 3, .nonce = 7, .fee_cap = 10, .tip = 1});
    EXPECT_EQ(pool().status().queued, 2u);
    EXPECT_EQ(pool().status().pending, 1u);
    EXPECT_EQ(next_nonce(address_of_key(2)), 0u);
    EXPECT_EQ(
        pool().find(hash_of(signed_tx({.key = 2, .nonce = 5, .fee_cap = 0, .tip = 0, .value = 0})),
                    kLatest),
        nullptr);
    EXPECT_NE(
        pool().find(hash_of(signed_tx({.key = 1, .nonce = 5, .fee_cap = 0, .tip = 0, .value = 0})),
                    kLatest),
        nullptr);
}

TEST_F(PoolTest, a_full_pool_evicts_the_cheapest_pending_of_another_sender_with_its_later_nonces) {
    config.max_pending = 3;
    admit_ok({.key = 1, .nonce = 0, .fee_cap = 10, .tip = 5});
    const Admitted cheapest = admit_ok({.key = 1, .nonce = 1, .fee_cap = 10, .tip = 1});
    const Admitted later = admit_ok({.key = 1, .nonce = 2, .fee_cap = 10, .tip = 3});
    // Its own transactions are no room for a sender, however much it pays.
    EXPECT_EQ(admit_err({.key = 1, .nonce = 3, .fee_cap = 100, .tip = 50}).message,
              "txpool is full");
    // At the cheapest's price, the newcomer would itself be the cheapest.
    EXPECT_EQ(admit_err({.key = 2, .nonce = 0, .fee_cap = 10, .tip = 1}).message, "txpool is full");
    // Better paid: key 1's nonce 1 leaves, and nonce 2, gapped behind it, with it.
    EXPECT_TRUE(admit_ok({.key = 2, .nonce = 0, .fee_cap = 10, .tip = 2}).pending);
    EXPECT_EQ(pool().find(cheapest.hash, kLatest), nullptr);
    EXPECT_EQ(pool().find(later.hash, kLatest), nullptr);
    EXPECT_EQ(pool().status().pending, 2u);
    EXPECT_EQ(pool().status().queued, 0u);
    EXPECT_EQ(next_nonce(address_of_key(1)), 1u);

    // What is in a block being built is never evicted.
    admit_ok({.key = 3, .nonce = 0, .fee_cap = 10, .tip = 2});
    ASSERT_EQ(pool().take(10, 1'000'000).txs.size(), 3u);
    EXPECT_EQ(admit_err({.key = 4, .nonce = 0, .fee_cap = 100, .tip = 90}).message,
              "txpool is full");
    EXPECT_EQ(pool().status().pending, 3u);
}

TEST_F(PoolTest, a_transaction_closing_a_gap_makes_room_for_what_it_promotes) {
    config.max_pending = 2;
    admit_ok({.key = 1, .nonce = 1, .fee_cap = 10, .tip = 5});  // queued
    admit_ok({.key = 2, .nonce = 0, .fee_cap = 10, .tip = 1});
    admit_ok({.key = 3, .nonce = 0, .fee_cap = 10, .tip = 2});
    // Nonce 0 needs two pending slots (itself and nonce 1): both others go, cheapest first.
    EXPECT_TRUE(admit_ok({.key = 1, .nonce = 0, .fee_cap = 10, .tip = 5}).pending);
    EXPECT_EQ(pool().status().pending, 2u);
    EXPECT_EQ(pool().status().queued, 0u);
    EXPECT_EQ(next_nonce(address_of_key(1)), 2u);
    EXPECT_EQ(next_nonce(address_of_key(2)), 0u);
    EXPECT_EQ(next_nonce(address_of_key(3)), 0u);
}

TEST_F(PoolTest, each_sender_gets_bounded_room_for_queued_and_far_future_nonces) {
    config.max_queued_per_sender = 2;
    config.max_nonce_gap = 10;
    admit_ok({.key = 1, .nonce = 2});
    admit_ok({.key = 1, .nonce = 3});
    const Rejection queued = admit_err({.key = 1, .nonce = 4});
    EXPECT_EQ(queued.code, RejectCode::account_limit);
    EXPECT_EQ(queued.message, "account limit exceeded: queued 2 txs");
    // A replacement takes no new room.
    admit_ok({.key = 1, .nonce = 3, .fee_cap = 20, .tip = 4});
    const Rejection far = admit_err({.key = 2, .nonce = 11});
    EXPECT_EQ(far.code, RejectCode::nonce_too_high);
    EXPECT_EQ(far.message, "nonce too high: next nonce 0, tx nonce 11, more than 10 ahead");
    admit_ok({.key = 2, .nonce = 10});
    // The gap counts from the sender's next pending nonce.
    for (uint64_t n = 0; n < 3; ++n) admit_ok({.key = 3, .nonce = n});
    admit_ok({.key = 3, .nonce = 13});
    EXPECT_EQ(admit_err({.key = 3, .nonce = 14}).code, RejectCode::nonce_too_high);
}

TEST_F(PoolTest, a_drop_demotes_later_nonces_within_the_queue_bounds) {
    config.max_queued_per_sender = 2;
    config.max_queued = 3;
    admit_ok({.key = 2, .nonce = 5, .tip = 1});  // queued, and the cheapest
    admit_ok({.key = 2, .nonce = 6, .tip = 3});
    std::vector<Admitted> own;
    for (uint64_t n = 0; n < 5; ++n) own.push_back(admit_ok({.key = 1, .nonce = n}));
    ASSERT_EQ(pool().take(10, 1'000'000).txs.size(), 5u);
    // A block failed on nonce 1: 2, 3 and 4 wait behind the gap, within key 1's queue bound
    // (its furthest nonce goes) and then the pool's (the cheapest queued one goes).
    pool().drop(own[1].hash);
    EXPECT_EQ(pool().invariant_violation(), "");
    EXPECT_EQ(pool().status().pending, 1u);
    EXPECT_EQ(pool().status().queued, 3u);
    EXPECT_EQ(pool().find(own[4].hash, kLatest), nullptr);
    EXPECT_NE(pool().find(own[3].hash, kLatest), nullptr);
    EXPECT_EQ(pool().find(hash_of(signed_tx({.key = 2, .nonce = 5, .tip = 1})), kLatest), nullptr);
}

TEST_F(PoolTest, queued_transactions_expire_after_their_lifetime_and_pending_ones_never) {
    auto now = std::chrono::steady_clock::time_point{} + std::chrono::hours{1};
    config.clock = [&] { return now; };
    config.queued_lifetime = std::chrono::seconds{60};
    const Admitted queued = admit_ok({.key = 1, .nonce = 2});
    const Admitted pending = admit_ok({.key = 2, .nonce = 0});
    now += std::chrono::seconds{59};
    pool().expire();
    EXPECT_NE(pool().find(queued.hash, kLatest), nullptr);
    const Admitted younger = admit_ok({.key = 3, .nonce = 1});
    now += std::chrono::seconds{1};
    // Admission expires too: at 60 s the first is gone, the younger one stays.
    admit_ok({.key = 4, .nonce = 0});
    EXPECT_EQ(pool().find(queued.hash, kLatest), nullptr);
    EXPECT_NE(pool().find(younger.hash, kLatest), nullptr);
    now += std::chrono::hours{5};
    // all() (what a journal keeps) has no expired transaction.
    const auto kept = pool().all();
    ASSERT_EQ(kept.size(), 2u);
    EXPECT_EQ(pool().status().queued, 0u);
    EXPECT_NE(pool().find(pending.hash, kLatest), nullptr);
}

TEST_F(PoolTest, a_reader_of_an_older_snapshot_still_sees_what_left_with_a_newer_block) {
    config.recent_blocks = 2;
    const Admitted first = admit_ok({.key = 1, .nonce = 0});
    admit_ok({.key = 1, .nonce = 1});
    const Address a = address_of_key(1);
    // Block 7 takes nonce 0; a batch's snapshot is at block 6 throughout (finding 9).
    const Selection block = pool().take(1, 1'000'000);
    ASSERT_EQ(block.txs.size(), 1u);
    EXPECT_EQ(pool().pending_nonce(a, 0, 6), 2u);
    pool().committed(7, apply_to_state(block), {});
    EXPECT_EQ(pool().pending_nonce(a, 0, 6), 2u);  // not 1: nonce 0 is pooled as of block 6
    EXPECT_NE(pool().find(first.hash, 6), nullptr);
    // A reader of block 7 sees it in the block, not in the pool.
    EXPECT_EQ(pool().find(first.hash, 7), nullptr);
    EXPECT_EQ(pool().pending_nonce(a, 1, 7), 2u);
    // A reader ahead of the pool (the store committed, the pool not told yet) counts from its
    // account nonce.
    EXPECT_EQ(pool().pending_nonce(a, 1, 8), 2u);
    // Two more blocks: block 7 is no longer recent.
    pool().committed(8, {}, {});
    EXPECT_NE(pool().find(first.hash, 6), nullptr);
    pool().committed(9, {}, {});
    EXPECT_EQ(pool().find(first.hash, 6), nullptr);
}

TEST_F(PoolTest, the_journal_is_appended_as_the_pool_admits_and_compacted_past_twice_the_pool) {
    test::ScratchDir dir;
    const std::string path = (dir.path() / "transactions.rlp").string();
    config.max_pending = 2;
    config.max_queued = 1;  // journal_capacity 6
    auto writer = JournalWriter::open(path);
    ASSERT_TRUE(writer.has_value()) << writer.error();
    pool().journal_to(writer->get(), 0);
    auto journaled = [&] { return read_journal(path, config).value().transactions; };

    // Each admitted batch is in the file at once (a SIGKILL now loses nothing); a rejected one
    // is not.
    const Bytes t0 = signed_tx({.key = 1, .nonce = 0});
    const Bytes t1 = signed_tx({.key = 1, .nonce = 1});
    const std::vector<BytesView> batch{t0, t1, t0};
    EXPECT_FALSE(pool().admit(batch)[2].has_value());
    EXPECT_EQ(journaled(), (std::vector<Bytes>{t0, t1}));
    // Mined: they leave the pool, not the journal (a restart finds their nonces too low).
    pool().committed(1, apply_to_state(pool().take(10, 1'000'000)), {});
    std::vector<Bytes> sent{t0, t1};
    for (uint64_t n = 2; n < 6; ++n) {
        sent.push_back(signed_tx({.key = 1, .nonce = n}));
        admit_ok({.key = 1, .nonce = n});
        pool().committed(n, apply_to_state(pool().take(10, 1'000'000)), {});
    }
    EXPECT_EQ(journaled(), sent);  // six: the capacity
    // The seventh would pass it: the file is rewritten with the pool instead.
    const Bytes t6 = signed_tx({.key = 1, .nonce = 6});
    admit_ok({.key = 1, .nonce = 6});
    EXPECT_EQ(journaled(), std::vector<Bytes>{t6});
    const Bytes t7 = signed_tx({.key = 1, .nonce = 7});
    admit_ok({.key = 1, .nonce = 7});
    EXPECT_EQ(journaled(), (std::vector<Bytes>{t6, t7}));
    EXPECT_EQ((*writer)->error(), "");
    pool().journal_to(nullptr, 0);
}

TEST_F(PoolTest, journal_batches_land_in_ticket_order) {
    test::ScratchDir dir;
    const std::string path = (dir.path() / "transactions.rlp").string();
    auto writer = JournalWriter::open(path).value();
    Pool other{config, state, nullptr};
    auto pooled = [&](const Spec& spec) {
        const Bytes raw = signed_tx(spec);
        EXPECT_TRUE(other.admit_one(raw).has_value());
        return other.find(hash_of(raw), kLatest);
    };
    const TxPtr a = pooled({.key = 1}), b = pooled({.key = 2});
    // The second ticket's batch comes first and waits for the first's.
    const uint64_t first = writer->take_ticket(), next = writer->take_ticket();
    std::thread second{[&] { writer->write(next, std::span{&b, 1}, false); }};
    writer->write(first, std::span{&a, 1}, false);
    second.join();
    EXPECT_EQ(read_journal(path, config).value().transactions,
              (std::vector<Bytes>{a->encoding, b->encoding}));
}

TEST_F(PoolTest, a_batch_the_disk_cut_short_leaves_the_journal_readable_after_it) {
    test::ScratchDir dir;
    const std::string path = (dir.path() / "transactions.rlp").string();
    auto writer = JournalWriter::open(path).value();
    Pool other{config, state, nullptr};
    auto pooled = [&](const Spec& spec) {
        const Bytes raw = signed_tx(spec);
        EXPECT_TRUE(other.admit_one(raw).has_value());
        return other.find(hash_of(raw), kLatest);
    };
    const std::vector<TxPtr> first{pooled({.key = 1})};
    const std::vector<TxPtr> cut{pooled({.key = 2}), pooled({.key = 3}), pooled({.key = 4})};
    const std::vector<TxPtr> last{pooled({.key = 5})};
    writer->write(writer->take_ticket(), first, false);
    const auto size = std::filesystem::file_size(path);
    // A file size limit 50 bytes past the first batch: the second is written in part, then
    // write() fails (EFBIG once SIGXFSZ is ignored, as `run` ignores it).
    rlimit old{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
    const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
    rlimit limited{static_cast<rlim_t>(size + 50), old.rlim_max};
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
    writer->write(writer->take_ticket(), cut, false);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old), 0);
    ::signal(SIGXFSZ, old_handler);
    EXPECT_EQ(writer->error(), "cannot write '" + path + "': File too large");
    // Back to where the cut batch began, so what comes after it is read.
    EXPECT_EQ(std::filesystem::file_size(path), size);
    writer->write(writer->take_ticket(), last, false);
    const Journal read = read_journal(path, config).value();
    EXPECT_FALSE(read.damaged);
    EXPECT_EQ(read.transactions, (std::vector<Bytes>{first[0]->encoding, last[0]->encoding}));
}

TEST_F(PoolTest, a_fifo_at_the_journals_path_is_refused_not_waited_on) {
    test::ScratchDir dir;
    const std::string path = (dir.path() / "transactions.rlp").string();
    ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
    // Opening it for reading once waited for a writer that never came (finding 13).
    const auto read = read_journal(path, config);
    ASSERT_FALSE(read.has_value());
    EXPECT_EQ(read.error(), "cannot read '" + path + "': not a regular file");
    const auto append = JournalWriter::open(path);
    ASSERT_FALSE(append.has_value());
    EXPECT_TRUE(append.error().starts_with("cannot write '" + path + "': ")) << append.error();
    // The temporary file of a rewrite is made afresh, whatever was at its path.
    const std::string other = (dir.path() / "other.rlp").string();
    ASSERT_EQ(::mkfifo((other + ".tmp").c_str(), 0644), 0);
    ASSERT_TRUE(write_journal(other, {}).has_value());
    EXPECT_TRUE(read_journal(other, config).value().transactions.empty());
}

}  // namespace
}  // namespace barrel::pool
