// Stage 2 (recover_senders) and the SenderCache: parallel recovery equals serial recovery of each
// transaction, the lowest bad index wins whatever the timing, chain ids are checked, a warm cache
// answers without recovery but never with a stale sender, and the cache keeps its bounds and FIFO
// order exactly, also under concurrent use (run under TSan in the tsan phase).

#include <barrel/block/block.hpp>
#include <barrel/block/sender_cache.hpp>
#include <barrel/core/keccak.hpp>

#include "block_fixtures.hpp"
#include "page_faults.hpp"
#include <gtest/gtest.h>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <limits>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace barrel;
using block::BlockError;
using block::BlockErrorCode;
using block::SenderCache;
using tx::TxErrorCode;

namespace {

block::Block decode(const Bytes& wire) {
    auto b = block::decode_block(wire);
    if (!b) {
        ADD_FAILURE() << describe(b.error());
        std::abort();
    }
    return std::move(b).value();
}

block::Block decode_txs(const test::TxSet& txs, uint64_t chain_id = 1) {
    return decode(block::encode_block(test::sample_header(chain_id), txs.views()));
}

Address serial_recovery(const tx::Transaction& t) {
    auto a = tx::recover_sender(t, tx::signing_hash(t));
    if (!a) std::abort();
    return *a;
}

BlockError invalid_tx(size_t index, TxErrorCode code, tx::Field field) {
    BlockError e;
    e.code = BlockErrorCode::invalid_tx;
    e.tx_index = index;
    e.tx = {code, field, {}};
    return e;
}

void expect_error(const Expected<void, BlockError>& got, const BlockError& want, const char* mode) {
    ASSERT_FALSE(got) << mode << ": verified, expected " << describe(want);
    EXPECT_EQ(describe(got.error()), describe(want)) << mode;
    EXPECT_TRUE(got.error() == want) << mode << ": got " << describe(got.error());
}

/// The transaction an encoding holds, re-encoded after `change`.
template <class Change>
Bytes modified(const Bytes& encoding, Change&& change) {
    auto t = tx::decode(encoding);
    if (!t) std::abort();
    change(*t);
    return tx::encode(*t);
}

const u256 kSecpN{"0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141"};

/// The smallest r that is not the x coordinate of a curve point: recovery fails for it whatever
/// the message, s and parity.
u256 r_without_point(const tx::Transaction& t) {
    for (uint64_t x = 1; x < 1000; ++x) {
        tx::Transaction c = t;
        c.r = x;
        auto a = tx::recover_sender(c, tx::signing_hash(c));
        if (!a && a.error().code == TxErrorCode::recovery_failed) return x;
    }
    std::abort();
}

const test::TxSet& mixed_500() {
    static const test::TxSet s = test::mixed_txs(500, 1, 11);
    return s;
}

}  // namespace

// ---- recovery ------------------------------------------------------------------------------

TEST(block_verify, senders_equal_serial_recovery) {
    for (size_t n : {1, 2, 3, 4, 5, 63, 257, 3000}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const auto txs = test::mixed_txs(n, 1, 100 + n);
        for (bool parallel : {true, false}) {
            block::Block b = decode_txs(txs);
            auto r = block::recover_senders(b, 1, nullptr, parallel);
            ASSERT_TRUE(r) << describe(r.error());
            ASSERT_EQ(b.senders.size(), n);
            for (size_t i = 0; i < n; ++i) {
                ASSERT_EQ(b.senders[i], serial_recovery(b.txs[i])) << "transaction " << i;
                ASSERT_EQ(b.senders[i], txs.senders[i]) << "transaction " << i;
            }
        }
    }
}

TEST(block_verify, every_kind_recovers) {
    const auto txs = test::mixed_txs(8);
    block::Block b = decode_txs(txs);
    ASSERT_TRUE(block::recover_senders(b, 1, nullptr));
    for (size_t i = 0; i < 8; ++i) {
        EXPECT_EQ(b.senders[i], txs.senders[i]) << i;
        EXPECT_EQ(b.txs[i].type,
                  i % 4 < 2 ? tx::TxType::legacy : static_cast<tx::TxType>(i % 4 - 1));
    }
    EXPECT_FALSE(b.txs[0].chain_id);  // pre-EIP-155
    EXPECT_EQ(b.txs[1].chain_id, 1u);
}

TEST(block_verify, empty_block) {
    block::Block b = decode(block::encode_block(test::sample_header(), {}));
    SenderCache cache{64};
    ASSERT_TRUE(block::recover_senders(b, 1, &cache));
    EXPECT_TRUE(b.senders.empty());
    EXPECT_EQ(cache.stats().misses, 0u);
}

// Several invalid transactions at random positions, each failing a different check (validation
// before recovery, and recovery itself): the lowest index is reported, in parallel and serially,
// with and without a warm cache (which makes the valid transactions instantaneous and so changes
// the timing completely).
TEST(block_verify, lowest_bad_index_whatever_the_timing) {
    const auto& base = mixed_500();
    const size_t n = base.size();
    const auto first = tx::decode(base.encodings[0]);
    ASSERT_TRUE(first);
    const u256 no_point = r_without_point(*first);

    struct Bad {
        Bytes encoding;
        tx::TxError error;
    };
    // Variants of transaction `i` (kind i % 4) that decode but do not verify.
    const auto bad_variant = [&](size_t i, size_t which) -> Bad {
        const Bytes& enc = base.encodings[i];
        using F = tx::Field;
        switch (which % 6) {
            case 0:
                return {modified(enc,
                                 [](tx::Transaction& t) {
                                     t.s = kSecpN - t.s;
                                     t.y_parity = !t.y_parity;
                                 }),
                        {TxErrorCode::high_s, F::s, {}}};
            case 1:
                return {modified(enc, [](tx::Transaction& t) { t.r = 0; }),
                        {TxErrorCode::invalid_signature, F::r, {}}};
            case 2:
                return {modified(enc, [](tx::Transaction& t) { t.chain_id = 5; }),
                        {TxErrorCode::wrong_chain_id, F::chain_id, {}}};
            case 3:
                return {modified(enc, [](tx::Transaction& t) { t.gas_limit = 20'999; }),
                        {TxErrorCode::intrinsic_gas_too_low, F::gas_limit, {}}};
            case 4:
                return {modified(enc, [&](tx::Transaction& t) { t.r = no_point; }),
                        {TxErrorCode::recovery_failed, F::none, {}}};
            default:
                if (i % test::kTxKinds == static_cast<size_t>(test::TxKind::dynamic_fee)) {
                    return {modified(enc,
                                     [](tx::Transaction& t) {
                                         t.max_priority_fee_per_gas = t.max_fee_per_gas + 1;
                                     }),
                            {TxErrorCode::priority_fee_above_cap, F::max_priority_fee_per_gas, {}}};
                }
                return {modified(enc, [](tx::Transaction& t) { t.nonce = ~uint64_t{0}; }),
                        {TxErrorCode::nonce_too_big, F::nonce, {}}};
        }
    };

    SenderCache warm{1u << 12};
    {
        block::Block b = decode_txs(base);
        ASSERT_TRUE(block::recover_senders(b, 1, &warm));
    }

    std::mt19937_64 rng{7};
    for (int run = 0; run < 50; ++run) {
        std::vector<Bytes> encodings = base.encodings;
        std::vector<size_t> positions;
        if (run % 3 == 0) {
            // One just below the middle, one just above: a worker that took the upper half
            // meets its bad transaction long before the lower half's is reached.
            positions.push_back(n / 2 - 1 - rng() % 16);
            positions.push_back(n / 2 + rng() % 16);
        }
        const size_t k = 2 + rng() % 6;
        while (positions.size() < k) {
            // Some runs keep the bad ones in the second half, far from where a serial scan
            // starts; the others spread them anywhere.
            const size_t p = run % 3 == 1 ? n / 2 + rng() % (n / 2) : rng() % n;
            if (std::find(positions.begin(), positions.end(), p) == positions.end())
                positions.push_back(p);
        }
        size_t lowest = n;
        BlockError expected;
        for (size_t j = 0; j < positions.size(); ++j) {
            Bad bad = bad_variant(positions[j], run + j);
            encodings[positions[j]] = bad.encoding;
            if (positions[j] < lowest) {
                lowest = positions[j];
                expected = invalid_tx(lowest, bad.error.code, bad.error.field);
            }
        }
        const test::TxSet set{encodings, {}, {}};
        SCOPED_TRACE("run " + std::to_string(run) + ", lowest bad index " + std::to_string(lowest));
        SenderCache* cache = run % 4 == 3 ? &warm : nullptr;
        block::Block p = decode_txs(set);
        expect_error(block::recover_senders(p, 1, cache, true), expected, "parallel");
        block::Block s = decode_txs(set);
        expect_error(block::recover_senders(s, 1, cache, false), expected, "serial");
    }
}

TEST(block_verify, tx_signed_for_another_chain) {
    auto txs = test::mixed_txs(6);
    const Hash key = test::private_key(99, 99);
    // Index 3 (a type-1 kind) replaced by a legacy EIP-155 transaction properly signed for chain 5.
    txs.encodings[3] =
        test::sign_and_encode(test::unsigned_tx(test::TxKind::legacy_155, 5, 0, 3), key);
    for (bool parallel : {true, false}) {
        block::Block b = decode_txs(txs);
        expect_error(block::recover_senders(b, 1, nullptr, parallel),
                     invalid_tx(3, TxErrorCode::wrong_chain_id, tx::Field::chain_id),
                     parallel ? "parallel" : "serial");
        // The same block verifies on chain 5 except for the others: index 1 (155, chain 1) fails.
        block::Block c = decode(block::encode_block(test::sample_header(5), txs.views()));
        expect_error(block::recover_senders(c, 5, nullptr, parallel),
                     invalid_tx(1, TxErrorCode::wrong_chain_id, tx::Field::chain_id),
                     parallel ? "parallel" : "serial");
    }
}

TEST(block_verify, pre_eip155_valid_on_any_chain) {
    test::TxSet txs;
    for (size_t i = 0; i < 5; ++i) {
        const Hash key = test::private_key(i, 42);
        txs.encodings.push_back(
            test::sign_and_encode(test::unsigned_tx(test::TxKind::legacy_pre155, 0, 0, i), key));
        txs.senders.push_back(test::address_of_key(key));
    }
    for (uint64_t chain : {1, 5, 1'000'000}) {
        block::Block b = decode_txs(txs, chain);
        ASSERT_TRUE(block::recover_senders(b, chain, nullptr));
        for (size_t i = 0; i < 5; ++i) EXPECT_EQ(b.senders[i], txs.senders[i]);
    }
}

TEST(block_verify, header_for_another_chain) {
    const auto txs = test::mixed_txs(4);
    block::Block b = decode_txs(txs, 5);
    BlockError want;
    want.code = BlockErrorCode::wrong_chain_id;
    SenderCache cache{64};
    expect_error(block::recover_senders(b, 1, &cache, true), want, "parallel");
    expect_error(block::recover_senders(b, 1, nullptr, false), want, "serial");
    EXPECT_EQ(describe(want), "wrong_chain_id");
    EXPECT_EQ(cache.stats().misses, 0u);  // rejected before looking at any transaction

    // A bare transaction list has no header to check.
    auto list = block::decode_tx_list(block::encode_plain_tx_list(txs.views()));
    ASSERT_TRUE(list);
    ASSERT_TRUE(block::recover_senders(*list, 1, nullptr));
    EXPECT_EQ(list->senders, txs.senders);
}

// ---- the cache in recover_senders ------------------------------------------------------------

TEST(block_verify, warm_cache_hits_every_transaction) {
    const auto txs = test::mixed_txs(50, 1, 21);
    SenderCache cache{1024};
    for (bool parallel : {true, false}) {
        cache.clear();
        const auto before = cache.stats();
        block::Block cold = decode_txs(txs);
        ASSERT_TRUE(block::recover_senders(cold, 1, &cache, parallel));
        auto s = cache.stats();
        EXPECT_EQ(s.hits - before.hits, 0u);
        EXPECT_EQ(s.misses - before.misses, 50u);
        EXPECT_EQ(s.insertions - before.insertions, 50u);
        EXPECT_EQ(s.evictions, 0u);
        EXPECT_EQ(s.size, 50u);

        block::Block warm = decode_txs(txs);
        ASSERT_TRUE(block::recover_senders(warm, 1, &cache, parallel));
        const auto w = cache.stats();
        EXPECT_EQ(w.hits - s.hits, 50u);
        EXPECT_EQ(w.misses, s.misses);
        EXPECT_EQ(w.insertions, s.insertions);
        EXPECT_EQ(w.size, 50u);
        EXPECT_EQ(warm.senders, cold.senders);
        EXPECT_EQ(warm.senders, txs.senders);
        // The key is the transaction hash.
        for (size_t i = 0; i < 50; ++i) EXPECT_EQ(cache.find(warm.tx_hashes[i]), txs.senders[i]);
    }
}

// A hit is used as is, without recovering: a planted entry comes back as the sender. (This is
// how the test sees that no recovery ran; it also shows why only verify may fill the cache.)
TEST(block_verify, hit_skips_recovery) {
    const auto txs = test::mixed_txs(3, 1, 31);
    block::Block b = decode_txs(txs);
    SenderCache cache{64};
    Address planted;
    planted[0] = 0xee;
    cache.insert(b.tx_hashes[1], planted);
    ASSERT_TRUE(block::recover_senders(b, 1, &cache));
    EXPECT_EQ(b.senders[0], txs.senders[0]);
    EXPECT_EQ(b.senders[1], planted);
    EXPECT_EQ(b.senders[2], txs.senders[2]);
    EXPECT_EQ(cache.stats().hits, 1u);
    EXPECT_EQ(cache.stats().misses, 2u);
}

// Stateless validity still applies to a cached sender: a cache never turns an invalid
// transaction valid.
TEST(block_verify, cache_does_not_skip_validation) {
    const auto txs = test::mixed_txs(4, 1, 41);
    SenderCache cache{64};
    block::Block b = decode_txs(txs);
    ASSERT_TRUE(block::recover_senders(b, 1, &cache));
    // Same bytes, hence same hashes, hence all cached: verified for chain 5 they still fail.
    block::Block c = decode(block::encode_block(test::sample_header(5), txs.views()));
    expect_error(block::recover_senders(c, 5, &cache),
                 invalid_tx(1, TxErrorCode::wrong_chain_id, tx::Field::chain_id), "parallel");
}

// A transaction that differs from a cached one in any way, the signature included, is a different
// key, so it is recovered afresh: never the cached sender.
TEST(block_verify, modified_transaction_never_gets_stale_sender) {
    const auto txs = test::mixed_txs(8, 1, 51);
    SenderCache cache{1024};
    block::Block original = decode_txs(txs);
    ASSERT_TRUE(block::recover_senders(original, 1, &cache));
    const Hash other_key = test::private_key(5151, 51);
    const Address other = test::address_of_key(other_key);
    static const Bytes other_data{0xde, 0xad};

    struct Case {
        std::string name;
        std::function<void(tx::Transaction&)> change;
        bool resign;  ///< re-sign with other_key after the change
    };
    const std::vector<Case> cases = {
        {"value_resigned", [](tx::Transaction& t) { t.value += 1; }, true},
        {"nonce_resigned", [](tx::Transaction& t) { t.nonce += 1; }, true},
        {"to_resigned", [](tx::Transaction& t) { (*t.to)[19] ^= 1; }, true},
        {"data_resigned", [](tx::Transaction& t) { t.data = other_data; }, true},
        {"same_fields_other_signer", [](tx::Transaction&) {}, true},
        {"parity_flipped", [](tx::Transaction& t) { t.y_parity = !t.y_parity; }, false},
        {"value_changed_not_resigned", [](tx::Transaction& t) { t.value += 1; }, false},
    };
    for (const auto& c : cases) {
        for (size_t i = 0; i < txs.size(); ++i) {
            SCOPED_TRACE(c.name + ", transaction " + std::to_string(i));
            auto t = tx::decode(txs.encodings[i]);
            ASSERT_TRUE(t);
            c.change(*t);
            if (c.resign) {
                ASSERT_TRUE(tx::sign(*t, other_key));
            }
            const Bytes changed = tx::encode(*t);
            ASSERT_NE(changed, txs.encodings[i]);
            const auto fresh = tx::recover_sender(*t, tx::signing_hash(*t));

            // The changed transaction among the unchanged (cached) ones.
            test::TxSet set = txs;
            set.encodings[i] = changed;
            block::Block b = decode_txs(set);
            const auto before = cache.stats();
            auto r = block::recover_senders(b, 1, &cache, true);
            if (!fresh) {
                // No sender at all (a flipped parity may have no curve point): rejected, not
                // cached.
                ASSERT_FALSE(r);
                EXPECT_EQ(*r.error().tx_index, i);
                continue;
            }
            ASSERT_TRUE(r) << describe(r.error());
            EXPECT_EQ(b.senders[i], *fresh);
            EXPECT_NE(b.senders[i], txs.senders[i]) << "stale sender from the cache";
            if (c.resign) {
                EXPECT_EQ(b.senders[i], other);
            }
            for (size_t j = 0; j < txs.size(); ++j) {
                if (j != i) {
                    EXPECT_EQ(b.senders[j], txs.senders[j]);
                }
            }
            const auto after = cache.stats();
            EXPECT_EQ(after.misses - before.misses, 1u);
            EXPECT_EQ(after.hits - before.hits, txs.size() - 1);
            EXPECT_EQ(cache.find(b.tx_hashes[i]), *fresh);
            EXPECT_EQ(cache.find(original.tx_hashes[i]), txs.senders[i]);
        }
    }
}

// ---- SenderCache on its own ------------------------------------------------------------------

namespace {

Hash key(uint64_t i, uint64_t domain = 0) {
    uint8_t seed[16];
    for (int b = 0; b < 8; ++b) {
        seed[b] = static_cast<uint8_t>(i >> (8 * b));
        seed[8 + b] = static_cast<uint8_t>(domain >> (8 * b));
    }
    return keccak256(BytesView{seed, sizeof seed});
}

Address sender_for(const Hash& k) {
    Address a;
    for (size_t i = 0; i < 20; ++i) a[i] = static_cast<uint8_t>(k[31 - i] ^ 0x5a);
    return a;
}

/// Number of shards: a capacity of 1 rounds up to one entry per shard.
size_t shard_count() {
    static const size_t n = SenderCache{1}.capacity();
    return n;
}

/// `count` keys that land in one shard, found by behaviour rather than by the shard function: with
/// one entry per shard, inserting a key evicts the reference key exactly when they share a shard.
std::vector<Hash> same_shard_keys(size_t count) {
    std::vector<Hash> keys{key(0, 77)};
    for (uint64_t i = 1; keys.size() < count; ++i) {
        if (i > 100'000) std::abort();
        SenderCache probe{1};
        probe.insert(keys[0], {});
        const Hash candidate = key(i, 77);
        probe.insert(candidate, {});
        if (probe.stats().evictions == 1) keys.push_back(candidate);
    }
    return keys;
}

}  // namespace

TEST(sender_cache, capacity_rounds_up_to_shards) {
    const size_t shards = shard_count();
    ASSERT_GE(shards, 1u);
    EXPECT_EQ(SenderCache{0}.capacity(), shards);
    EXPECT_EQ(SenderCache{shards}.capacity(), shards);
    EXPECT_EQ(SenderCache{shards + 1}.capacity(), 2 * shards);
    EXPECT_EQ(SenderCache{5 * shards}.capacity(), 5 * shards);
    EXPECT_EQ(SenderCache{}.capacity(), size_t{1} << 16);
}

// The table is mapped for the whole capacity up front: a capacity no machine can hold is refused
// at construction with std::bad_alloc (not an overflowed size, not a crash on first insert).
TEST(sender_cache, impossible_capacity_throws_bad_alloc) {
    EXPECT_THROW(SenderCache{std::numeric_limits<size_t>::max()}, std::bad_alloc);
    EXPECT_THROW(SenderCache{size_t{1} << 50}, std::bad_alloc);  // past the size guard
    EXPECT_THROW(SenderCache{size_t{1} << 44}, std::bad_alloc);  // 2^51 bytes: mmap refuses
    SenderCache fine{1u << 20};                                  // mapped lazily: costs nothing yet
    EXPECT_EQ(fine.capacity(), size_t{1} << 20);
}

TEST(sender_cache, find_insert_and_exact_stats) {
    SenderCache cache{1024};
    const Hash a = key(1), b = key(2);
    EXPECT_EQ(cache.find(a), std::nullopt);
    cache.insert(a, sender_for(a));
    EXPECT_EQ(cache.find(a), sender_for(a));
    EXPECT_EQ(cache.find(a), sender_for(a));
    EXPECT_EQ(cache.find(b), std::nullopt);
    cache.insert(a, sender_for(b));  // same key again: ignored, first value kept
    EXPECT_EQ(cache.find(a), sender_for(a));
    auto s = cache.stats();
    EXPECT_EQ(s.hits, 3u);
    EXPECT_EQ(s.misses, 2u);
    EXPECT_EQ(s.insertions, 1u);
    EXPECT_EQ(s.evictions, 0u);
    EXPECT_EQ(s.size, 1u);

    cache.clear();
    EXPECT_EQ(cache.find(a), std::nullopt);
    s = cache.stats();
    EXPECT_EQ(s.size, 0u);
    EXPECT_EQ(s.hits, 3u);  // counters survive clear()
    EXPECT_EQ(s.misses, 3u);
    EXPECT_EQ(s.insertions, 1u);
    cache.insert(a, sender_for(a));  // usable after clear()
    EXPECT_EQ(cache.find(a), sender_for(a));
}

// First in, first out within a shard: the oldest entry goes first; a repeated insert neither
// counts nor refreshes an entry's age; other shards are untouched.
TEST(sender_cache, fifo_eviction_order) {
    const size_t shards = shard_count();
    const auto k = same_shard_keys(8);
    const Hash elsewhere = [&] {
        for (uint64_t i = 0;; ++i) {
            SenderCache probe{1};
            probe.insert(k[0], {});
            probe.insert(key(i, 88), {});
            if (probe.stats().evictions == 0) return key(i, 88);
        }
    }();

    SenderCache cache{3 * shards};  // three entries per shard
    uint64_t hits = 0, misses = 0;
    const auto expect_present = [&](std::initializer_list<size_t> present,
                                    std::initializer_list<size_t> absent) {
        for (size_t i : present) {
            EXPECT_EQ(cache.find(k[i]), sender_for(k[i])) << "key " << i << " should be cached";
            ++hits;
        }
        for (size_t i : absent) {
            EXPECT_EQ(cache.find(k[i]), std::nullopt) << "key " << i << " should be evicted";
            ++misses;
        }
    };
    cache.insert(elsewhere, sender_for(elsewhere));
    for (size_t i = 0; i < 3; ++i) cache.insert(k[i], sender_for(k[i]));
    expect_present({0, 1, 2}, {3});
    EXPECT_EQ(cache.stats().evictions, 0u);

    cache.insert(k[3], sender_for(k[3]));  // evicts k0, the oldest
    expect_present({1, 2, 3}, {0});
    cache.insert(k[4], sender_for(k[4]));  // evicts k1
    expect_present({2, 3, 4}, {0, 1});
    cache.insert(k[2], sender_for(k[2]));  // already there: no insertion, no refresh
    cache.insert(k[5], sender_for(k[5]));  // evicts k2 although it was just inserted again
    expect_present({3, 4, 5}, {0, 1, 2});
    cache.insert(k[0], sender_for(k[0]));  // an evicted key comes back as the newest; evicts k3
    expect_present({4, 5, 0}, {1, 2, 3});
    for (size_t i = 0; i < 8; ++i) cache.insert(k[i], sender_for(k[i]));  // all but k0 new again
    expect_present({5, 6, 7}, {0, 1, 2, 3, 4});

    EXPECT_EQ(cache.find(elsewhere), sender_for(elsewhere));
    ++hits;
    const auto s = cache.stats();
    EXPECT_EQ(s.insertions, 1u + 3 + 1 + 1 + 1 + 1 + 7);
    EXPECT_EQ(s.evictions, s.insertions - 4);  // 3 left in the shard, 1 elsewhere
    EXPECT_EQ(s.size, 4u);
    EXPECT_EQ(s.hits, hits);
    EXPECT_EQ(s.misses, misses);
}

// A long FIFO run through one shard: probe runs wrap around the end of the shard's table and
// every eviction deletes from the middle of them (backward shift), yet exactly the newest
// `per_shard` keys stay findable, each with its own sender, and every older one is gone.
TEST(sender_cache, long_fifo_run_in_one_shard) {
    const size_t shards = shard_count();
    constexpr size_t per_shard = 50;
    const auto k = same_shard_keys(400);
    SenderCache cache{per_shard * shards};
    for (size_t n = 0; n < k.size(); ++n) {
        cache.insert(k[n], sender_for(k[n]));
        if (n % 37 != 0 && n + 1 != k.size()) continue;
        for (size_t i = 0; i <= n; ++i) {
            const bool newest = i + per_shard > n;
            if (newest)
                EXPECT_EQ(cache.find(k[i]), sender_for(k[i])) << "after " << n << ", key " << i;
            else
                EXPECT_EQ(cache.find(k[i]), std::nullopt) << "after " << n << ", key " << i;
        }
        EXPECT_EQ(cache.stats().size, std::min(n + 1, per_shard));
    }
}

TEST(sender_cache, capacity_respected) {
    const size_t shards = shard_count();
    SenderCache cache{10 * shards};
    constexpr size_t n = 20'000;
    for (size_t i = 0; i < n; ++i) cache.insert(key(i, 3), sender_for(key(i, 3)));
    const auto s = cache.stats();
    EXPECT_LE(s.size, cache.capacity());
    // 20,000 uniform keys fill every shard of 10 (a shard would need fewer than 10 of them).
    EXPECT_EQ(s.size, cache.capacity());
    EXPECT_EQ(s.insertions, n);
    EXPECT_EQ(s.evictions, n - s.size);
    // Everything still there is correct and the newest keys are all there.
    size_t found = 0;
    for (size_t i = 0; i < n; ++i) {
        if (auto a = cache.find(key(i, 3))) {
            EXPECT_EQ(*a, sender_for(key(i, 3)));
            ++found;
        }
    }
    EXPECT_EQ(found, s.size);
    for (size_t i = n - 5; i < n; ++i) EXPECT_TRUE(cache.find(key(i, 3))) << i;
}

// A fresh cache (the default 65,536 entries: 8 MiB): lookups load nothing from pages no entry
// was written to, so they map none; a miss then an insert, as the verify stage does, costs the
// one fault of a fresh page, not a zero-page mapping and then its copy-on-write; clear() makes
// every page unwritten again (core/zeroed_pages.hpp).
TEST(sender_cache, lookups_in_pages_never_written_map_nothing) {
    std::vector<Hash> keys;
    for (size_t i = 0; i < 1'000; ++i) keys.push_back(key(i, 21));
    SenderCache cache;
    const auto misses_fault = [&] {
        const uint64_t before = test::minor_faults_of_this_thread();
        size_t hits = 0;
        for (const Hash& k : keys) hits += cache.find(k).has_value();
        EXPECT_EQ(hits, 0u);
        return test::minor_faults_of_this_thread() - before;
    };
    const uint64_t miss_faults = misses_fault();

    constexpr size_t kFills = 200;  // under the move to huge pages (256 fills)
    const uint64_t before = test::minor_faults_of_this_thread();
    for (size_t i = 0; i < kFills; ++i) {
        EXPECT_EQ(cache.find(keys[i]), std::nullopt);
        cache.insert(keys[i], sender_for(keys[i]));
    }
    const uint64_t fill_faults = test::minor_faults_of_this_thread() - before;
    for (size_t i = 0; i < kFills; ++i) EXPECT_EQ(cache.find(keys[i]), sender_for(keys[i])) << i;
    cache.clear();
    const uint64_t cleared_miss_faults = misses_fault();
    if (test::kShadowFaults) GTEST_SKIP() << "a sanitizer's shadow memory faults on its own";
    EXPECT_LE(miss_faults, 16u) << "1,000 lookups on ~800 pages: one fault each if they load";
    EXPECT_LE(cleared_miss_faults, 16u) << "after clear()";
    // The slack: the shards' FIFO rings grow on the heap meanwhile.
    EXPECT_LE(fill_faults, kFills + 32) << "one fault per page written, not two";
}

// Lookups beside the first insert into each page of a fresh table, in rounds: a key the writer
// has published (a release store the reader's acquire load reads) is found every time, with its
// sender, even when its page was fresh (the page's bit is set before end_write); a key being
// inserted may be missed, never answered with a wrong sender. The rounds cross the move to huge
// pages (256 fills), so lookups also run beside it.
TEST(sender_cache, lookups_beside_the_first_inserts_into_fresh_pages) {
    constexpr size_t kKeys = 3'000;  // no shard fills up: nothing is evicted
    std::vector<Hash> keys;
    for (size_t i = 0; i < kKeys; ++i) keys.push_back(key(i, 23));
    std::atomic<size_t> missed{0}, wrong{0}, checked{0};
    for (int round = 0; round < 3; ++round) {
        SenderCache cache;
        std::atomic<size_t> published{0};
        std::vector<std::thread> threads;
        for (unsigned r = 0; r < 2; ++r)
            threads.emplace_back([&, r] {
                std::minstd_rand pick{r + 1};
                for (size_t n = 0; n < kKeys;) {
                    n = published.load(std::memory_order_acquire);
                    if (n > 0) {
                        const size_t j = pick() % n;
                        const auto found = cache.find(keys[j]);
                        checked.fetch_add(1, std::memory_order_relaxed);
                        if (!found)
                            missed.fetch_add(1);
                        else if (*found != sender_for(keys[j]))
                            wrong.fetch_add(1);
                    }
                    if (n < kKeys) {
                        if (auto a = cache.find(keys[n]); a && *a != sender_for(keys[n]))
                            wrong.fetch_add(1);
                    }
                }
            });
        for (size_t i = 0; i < kKeys; ++i) {
            cache.insert(keys[i], sender_for(keys[i]));
            published.store(i + 1, std::memory_order_release);
        }
        for (auto& t : threads) t.join();
        EXPECT_EQ(cache.stats().evictions, 0u);
    }
    EXPECT_EQ(missed.load(), 0u) << "of " << checked.load() << " lookups of published keys";
    EXPECT_EQ(wrong.load(), 0u);
    EXPECT_GT(checked.load(), 0u);
}

// A cache smaller than the block: senders stay right, the bounds hold.
TEST(sender_cache, smaller_than_block) {
    const auto txs = test::mixed_txs(300, 1, 61);
    SenderCache cache{1};
    for (bool parallel : {true, false, true}) {
        block::Block b = decode_txs(txs);
        ASSERT_TRUE(block::recover_senders(b, 1, &cache, parallel));
        EXPECT_EQ(b.senders, txs.senders);
        const auto s = cache.stats();
        EXPECT_LE(s.size, cache.capacity());
        EXPECT_EQ(s.insertions - s.evictions, s.size);
    }
}

// prefetch() is a hint: on an empty, filling, full or cleared cache it changes no entry and
// no counter.
TEST(sender_cache, prefetch_changes_nothing) {
    const size_t shards = shard_count();
    SenderCache cache{4 * shards};
    const auto check_unchanged = [&](size_t inserted) {
        const auto before = cache.stats();
        for (size_t i = 0; i < 2 * inserted + 10; ++i) cache.prefetch(key(i, 5));
        const auto after = cache.stats();
        EXPECT_EQ(after.hits, before.hits);
        EXPECT_EQ(after.misses, before.misses);
        EXPECT_EQ(after.insertions, before.insertions);
        EXPECT_EQ(after.evictions, before.evictions);
        EXPECT_EQ(after.size, before.size);
    };
    check_unchanged(0);
    for (size_t n : {size_t{1}, shards, 10 * shards}) {  // first entry, filling, eviction
        for (size_t i = 0; i < n; ++i) cache.insert(key(i, 5), sender_for(key(i, 5)));
        check_unchanged(n);
    }
    for (size_t i = 10 * shards - 5; i < 10 * shards; ++i)
        EXPECT_EQ(cache.find(key(i, 5)), sender_for(key(i, 5)));
    cache.clear();
    check_unchanged(10 * shards);
    EXPECT_EQ(cache.find(key(0, 5)), std::nullopt);
}

// prefetch() touches the table without the lock: threads prefetching and finding while another
// inserts and clears (handing the table's pages back) must race on nothing (TSan), read nothing
// outside the mapping (ASan) and never see a wrong sender.
TEST(sender_cache, prefetch_beside_insert_and_clear) {
    tbb::global_control threads{tbb::global_control::max_allowed_parallelism, 8};
    tbb::task_arena arena{8};
    SenderCache cache{2048};
    std::vector<Hash> keys;
    for (size_t i = 0; i < 3'000; ++i) keys.push_back(key(i, 11));
    std::atomic<size_t> wrong{0};
    arena.execute([&] {
        tbb::parallel_for(size_t{0}, size_t{8}, [&](size_t t) {
            for (size_t round = 0; round < 4; ++round) {
                for (size_t i = 0; i < keys.size(); ++i) {
                    if (t == 0) {
                        cache.insert(keys[i], sender_for(keys[i]));
                        continue;
                    }
                    cache.prefetch(keys[(i + 8) % keys.size()]);
                    if (auto a = cache.find(keys[i]); a && *a != sender_for(keys[i]))
                        wrong.fetch_add(1);
                }
                if (t == 0) cache.clear();
            }
        });
    });
    EXPECT_EQ(wrong.load(), 0u);
    EXPECT_EQ(cache.stats().size, 0u);
}

// Lookups take no lock. While one thread churns a single shard (every insert evicts that shard's
// oldest key, and the deletion shifts probe runs back), threads looking up keys of that shard
// must never get a wrong sender, nor miss a key that was cached for the whole lookup.
TEST(sender_cache, lock_free_lookups_beside_evictions_in_their_shard) {
    constexpr size_t per_shard = 24;
    const auto k = same_shard_keys(160);  // cycled: a key comes back long after its eviction
    SenderCache cache{per_shard * shard_count()};
    constexpr size_t inserts = 20'000;
    constexpr size_t readers = 3;
    std::atomic<size_t> done{0};  // inserts finished; insert i evicts key i - per_shard
    std::atomic<size_t> started{0};
    std::atomic<size_t> wrong{0}, missed{0}, guaranteed{0};
    std::vector<std::thread> threads;
    for (size_t r = 0; r < readers; ++r) {
        threads.emplace_back([&, r] {
            std::minstd_rand pick{static_cast<unsigned>(r + 1)};
            started.fetch_add(1);
            for (;;) {
                const size_t before = done.load(std::memory_order_acquire);
                if (before == inserts) break;
                if (before < per_shard) continue;
                const size_t j =
                    before - 1 - pick() % (per_shard / 2);  // inserted before the lookup
                const auto found = cache.find(k[j % k.size()]);
                const size_t after = done.load(std::memory_order_acquire);
                if (found && *found != sender_for(k[j % k.size()])) wrong.fetch_add(1);
                // Inserts up to `after` (the last perhaps still running) may have run meanwhile;
                // none of them evicted key j if j + per_shard > after.
                if (j + per_shard > after) {
                    guaranteed.fetch_add(1, std::memory_order_relaxed);
                    if (!found) missed.fetch_add(1);
                }
            }
        });
    }
    while (started.load() < readers) std::this_thread::yield();
    for (size_t i = 0; i < inserts; ++i) {
        cache.insert(k[i % k.size()], sender_for(k[i % k.size()]));
        done.store(i + 1, std::memory_order_release);
        // Every 64 inserts, wait for one lookup that overlapped no eviction of its key: on a busy
        // machine the readers might otherwise not run at all before the writer finishes.
        if (i % 64 == 63) {
            const size_t seen = guaranteed.load();
            while (guaranteed.load() == seen) std::this_thread::yield();
        }
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong.load(), 0u);
    EXPECT_EQ(missed.load(), 0u) << "of " << guaranteed.load()
                                 << " lookups of keys cached throughout";
    EXPECT_GE(guaranteed.load(), inserts / 64);
    EXPECT_EQ(cache.stats().evictions, inserts - per_shard);
}

// Many threads inserting and finding at once (TSan checks the locking); every hit returns the
// value stored for its key, and the counters add up.
TEST(sender_cache, concurrent_insert_and_find) {
    tbb::global_control threads{tbb::global_control::max_allowed_parallelism, 16};
    tbb::task_arena arena{16};
    SenderCache cache{4096};
    constexpr size_t ops = 40'000;
    constexpr size_t distinct = 6'000;  // more than the capacity: evictions run concurrently too
    std::vector<Hash> keys;
    for (size_t i = 0; i < distinct; ++i) keys.push_back(key(i, 9));
    std::atomic<size_t> wrong{0}, finds{0};
    arena.execute([&] {
        tbb::parallel_for(
            tbb::blocked_range<size_t>(0, ops, 64), [&](const tbb::blocked_range<size_t>& r) {
                for (size_t i = r.begin(); i != r.end(); ++i) {
                    const Hash& k = keys[(i * 7919) % distinct];
                    cache.prefetch(
                        keys[((i + 8) * 7919) % distinct]);  // races inserts and evictions
                    if (i % 3 == 0) {
                        cache.insert(k, sender_for(k));
                    } else {
                        finds.fetch_add(1, std::memory_order_relaxed);
                        if (auto a = cache.find(k); a && *a != sender_for(k)) wrong.fetch_add(1);
                    }
                    if (i % 1000 == 0) (void)cache.stats();
                }
            });
    });
    EXPECT_EQ(wrong.load(), 0u);
    const auto s = cache.stats();
    EXPECT_EQ(s.hits + s.misses, finds.load());
    EXPECT_LE(s.size, cache.capacity());
    EXPECT_EQ(s.insertions - s.evictions, s.size);
    EXPECT_LE(s.insertions, ops / 3 + 1);
}

// Whole blocks verified concurrently against one cache, as a pipeline does with consecutive
// blocks.
TEST(sender_cache, concurrent_blocks_share_a_cache) {
    tbb::global_control threads{tbb::global_control::max_allowed_parallelism, 8};
    const auto a = test::mixed_txs(120, 1, 71);
    const auto b = test::mixed_txs(120, 1, 72);
    SenderCache cache{1024};
    for (int round = 0; round < 3; ++round) {
        block::Block ba = decode_txs(a), bb = decode_txs(b), ba2 = decode_txs(a);
        bool ok_a = false, ok_b = false, ok_a2 = false;
        tbb::parallel_invoke(
            [&] { ok_a = static_cast<bool>(block::recover_senders(ba, 1, &cache)); },
            [&] { ok_b = static_cast<bool>(block::recover_senders(bb, 1, &cache)); },
            [&] { ok_a2 = static_cast<bool>(block::recover_senders(ba2, 1, &cache)); });
        ASSERT_TRUE(ok_a && ok_b && ok_a2);
        EXPECT_EQ(ba.senders, a.senders);
        EXPECT_EQ(bb.senders, b.senders);
        EXPECT_EQ(ba2.senders, a.senders);
    }
    const auto s = cache.stats();
    EXPECT_EQ(s.size, 240u);
    EXPECT_EQ(s.insertions, 240u);
    EXPECT_EQ(s.hits + s.misses, 3u * 3 * 120);
}
