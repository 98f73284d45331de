// exec::build_dag on hand-made conflict-key lists: edges from the last toucher of each key, no
// duplicate edges, barriers, level statistics, key kinds, and a brute-force reference on random
// lists (every pair of transactions that share a key must be ordered by a path).

#include "exec/dag.hpp"
#include "exec_oracle.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

using namespace barrel;
using exec::build_dag;
using exec::ConflictKey;
using exec::Dag;
using exec::KeyKind;
using exec::TxKeys;

namespace {

ConflictKey acc(std::string_view bytes) { return {KeyKind::account, bytes}; }
ConflictKey usr(std::string_view bytes) { return {KeyKind::user, bytes}; }

TxKeys tx(std::initializer_list<ConflictKey> keys, bool barrier = false) {
    TxKeys t;
    for (const auto& k : keys) t.add(k.kind, k.bytes);
    t.barrier = barrier;
    return t;
}

std::set<uint32_t> preds(const Dag& d, size_t i) {
    const auto p = d.preds_of(i);
    return {p.begin(), p.end()};
}

/// Structural invariants every DAG must satisfy.
void check_shape(const Dag& d, std::span<const TxKeys> txs) {
    const size_t n = txs.size();
    ASSERT_EQ(d.size(), n);
    ASSERT_EQ(d.pred_begin.size(), n + 1);
    ASSERT_EQ(d.succ_begin.size(), n + 1);
    EXPECT_EQ(d.stats.transactions, n);
    EXPECT_EQ(d.stats.edges, d.preds.size());
    EXPECT_EQ(d.succs.size(), d.preds.size());
    size_t barriers = 0;
    std::vector<size_t> width;
    for (size_t i = 0; i < n; ++i) {
        barriers += txs[i].barrier ? 1 : 0;
        const auto p = d.preds_of(i);
        std::set<uint32_t> unique(p.begin(), p.end());
        EXPECT_EQ(unique.size(), p.size()) << "duplicate edge into " << i;
        uint32_t level = 0;
        for (uint32_t q : p) {
            EXPECT_LT(q, i) << "edge must point backwards";
            level = std::max(level, d.level[q] + 1);
            const auto s = d.succs_of(q);
            EXPECT_NE(std::find(s.begin(), s.end(), i), s.end())
                << q << " -> " << i << " missing in succs";
        }
        EXPECT_EQ(d.level[i], level) << i;
        if (width.size() <= level) width.resize(level + 1, 0);
        ++width[level];
        // Slots: each key of the transaction has one, naming that key.
        for (uint8_t k = 0; k < txs[i].count; ++k) {
            const uint32_t slot = d.key_slot[i * 3 + k];
            ASSERT_LT(slot, d.slots.size());
            EXPECT_EQ(d.slots[slot], txs[i].keys[k]);
        }
    }
    EXPECT_EQ(d.stats.barriers, barriers);
    EXPECT_EQ(d.stats.levels, width.size());
    EXPECT_EQ(d.stats.max_width, width.empty() ? 0 : *std::max_element(width.begin(), width.end()));
    // Distinct slots for distinct keys.
    for (size_t a = 0; a < d.slots.size(); ++a)
        for (size_t b = a + 1; b < d.slots.size() && d.slots.size() < 500; ++b)
            EXPECT_NE(d.slots[a], d.slots[b]);
}

TEST(exec_dag, empty) {
    const Dag d = build_dag({});
    EXPECT_EQ(d.size(), 0u);
    EXPECT_EQ(d.stats.levels, 0u);
    EXPECT_EQ(d.stats.max_width, 0u);
    EXPECT_EQ(d.stats.edges, 0u);
    EXPECT_EQ(d.pred_begin.size(), 1u);
}

TEST(exec_dag, txkeys_add_removes_duplicates) {
    TxKeys t;
    t.add(KeyKind::account, "a");
    t.add(KeyKind::account, "a");
    t.add(KeyKind::user, "a");
    t.add(KeyKind::user, "a");
    EXPECT_EQ(t.count, 2);
}

TEST(exec_dag, independent_transactions_share_level_zero) {
    const std::vector<TxKeys> txs{tx({acc("a"), acc("b")}), tx({acc("c"), acc("d")}),
                                  tx({usr("a"), usr("b")}), tx({acc("e")})};
    const Dag d = build_dag(txs);
    check_shape(d, txs);
    EXPECT_EQ(d.stats.edges, 0u);
    EXPECT_EQ(d.stats.levels, 1u);
    EXPECT_EQ(d.stats.max_width, 4u);
}

TEST(exec_dag, chain_on_one_key_links_only_the_last_toucher) {
    const std::vector<TxKeys> txs{tx({acc("h"), acc("x1")}), tx({acc("h"), acc("x2")}),
                                  tx({acc("x3"), acc("h")}), tx({acc("h")})};
    const Dag d = build_dag(txs);
    check_shape(d, txs);
    EXPECT_EQ(preds(d, 0), (std::set<uint32_t>{}));
    EXPECT_EQ(preds(d, 1), (std::set<uint32_t>{0}));
    EXPECT_EQ(preds(d, 2), (std::set<uint32_t>{1}));
    EXPECT_EQ(preds(d, 3), (std::set<uint32_t>{2}));
    EXPECT_EQ(d.stats.edges, 3u);
    EXPECT_EQ(d.stats.levels, 4u);
    EXPECT_EQ(d.stats.max_width, 1u);
}

TEST(exec_dag, one_edge_when_two_keys_share_the_last_toucher) {
    const std::vector<TxKeys> txs{tx({acc("a"), acc("b")}), tx({acc("b"), acc("a")}),
                                  tx({acc("a"), usr("u"), usr("v")}),
                                  tx({acc("z"), usr("v"), usr("u")})};
    const Dag d = build_dag(txs);
    check_shape(d, txs);
    EXPECT_EQ(preds(d, 1), (std::set<uint32_t>{0}));
    EXPECT_EQ(preds(d, 2), (std::set<uint32_t>{1}));
    EXPECT_EQ(preds(d, 3), (std::set<uint32_t>{2}));
    EXPECT_EQ(d.stats.edges, 3u);
}

TEST(exec_dag, edges_from_the_last_toucher_of_each_key) {
    const std::vector<TxKeys> txs{
        tx({acc("a")}),            // 0
        tx({acc("b")}),            // 1
        tx({acc("a"), acc("b")}),  // 2 <- 0, 1
        tx({acc("c")}),            // 3
        tx({acc("a"), acc("c")}),  // 4 <- 2, 3
        tx({acc("b")}),            // 5 <- 2
    };
    const Dag d = build_dag(txs);
    check_shape(d, txs);
    EXPECT_EQ(preds(d, 2), (std::set<uint32_t>{0, 1}));
    EXPECT_EQ(preds(d, 4), (std::set<uint32_t>{2, 3}));
    EXPECT_EQ(preds(d, 5), (std::set<uint32_t>{2}));
    EXPECT_EQ(d.level[2], 1u);
    EXPECT_EQ(d.level[4], 2u);
    EXPECT_EQ(d.level[5], 2u);
    EXPECT_EQ(d.stats.levels, 3u);
    EXPECT_EQ(d.stats.max_width, 3u);  // 0, 1, 3
    EXPECT_EQ(d.stats.edges, 5u);
    const auto s2 = d.succs_of(2);
    EXPECT_EQ(std::set<uint32_t>(s2.begin(), s2.end()), (std::set<uint32_t>{4, 5}));
}

TEST(exec_dag, barrier_orders_everything_around_it) {
    const std::vector<TxKeys> txs{
        tx({acc("a")}),            // 0
        tx({acc("b")}),            // 1
        tx({acc("c")}, true),      // 2 barrier <- 0, 1
        tx({acc("d")}),            // 3 <- 2
        tx({acc("a")}),            // 4 <- 2 (a's earlier toucher is behind the barrier)
        tx({acc("d"), acc("e")}),  // 5 <- 3, 2
        tx({acc("f")}, true),      // 6 barrier <- 3, 4, 5, 2
        tx({acc("f")}, true),      // 7 barrier <- 6
        tx({acc("a")}),            // 8 <- 7
    };
    const Dag d = build_dag(txs);
    check_shape(d, txs);
    EXPECT_EQ(preds(d, 2), (std::set<uint32_t>{0, 1}));
    EXPECT_EQ(preds(d, 3), (std::set<uint32_t>{2}));
    EXPECT_EQ(preds(d, 4), (std::set<uint32_t>{2}));
    EXPECT_EQ(preds(d, 5), (std::set<uint32_t>{2, 3}));
    EXPECT_EQ(preds(d, 6), (std::set<uint32_t>{2, 3, 4, 5}));
    EXPECT_EQ(preds(d, 7), (std::set<uint32_t>{6}));
    EXPECT_EQ(preds(d, 8), (std::set<uint32_t>{7}));
    EXPECT_EQ(d.stats.barriers, 3u);
    EXPECT_EQ(d.level[2], 1u);
    EXPECT_EQ(d.level[5], 3u);
    EXPECT_EQ(d.level[6], 4u);
    EXPECT_EQ(d.level[8], 6u);
    EXPECT_EQ(d.stats.levels, 7u);
    EXPECT_EQ(d.stats.max_width, 2u);
}

TEST(exec_dag, barrier_first_and_last) {
    const std::vector<TxKeys> txs{tx({acc("s")}, true), tx({acc("a")}), tx({acc("b")}),
                                  tx({acc("s")}, true)};
    const Dag d = build_dag(txs);
    check_shape(d, txs);
    EXPECT_EQ(preds(d, 1), (std::set<uint32_t>{0}));
    EXPECT_EQ(preds(d, 2), (std::set<uint32_t>{0}));
    EXPECT_EQ(preds(d, 3), (std::set<uint32_t>{0, 1, 2}));
    EXPECT_EQ(d.stats.levels, 3u);
    EXPECT_EQ(d.stats.max_width, 2u);
}

TEST(exec_dag, key_kinds_never_collide) {
    // An account whose 20 bytes equal a user name's bytes.
    const Address a = test::derived_address(7);
    const std::string name(reinterpret_cast<const char*>(a.data()), 20);
    const std::string_view account_bytes{reinterpret_cast<const char*>(a.data()), 20};
    const std::vector<TxKeys> txs{tx({acc(account_bytes)}), tx({acc("s"), usr(name)}),
                                  tx({acc(account_bytes)}), tx({acc("t"), usr(name)})};
    const Dag d = build_dag(txs);
    check_shape(d, txs);
    EXPECT_EQ(preds(d, 1), (std::set<uint32_t>{}));
    EXPECT_EQ(preds(d, 2), (std::set<uint32_t>{0}));
    EXPECT_EQ(preds(d, 3), (std::set<uint32_t>{1}));
    EXPECT_EQ(d.slots.size(), 4u);
}

TEST(exec_dag, keys_compare_by_content_not_by_pointer) {
    const std::string one = "same-name";
    const std::string two = "same-name";
    ASSERT_NE(one.data(), two.data());
    const std::vector<TxKeys> txs{tx({usr(one)}), tx({usr(two)}), tx({usr("")}),
                                  tx({usr(std::string_view{})})};
    const Dag d = build_dag(txs);
    check_shape(d, txs);
    EXPECT_EQ(preds(d, 1), (std::set<uint32_t>{0}));
    EXPECT_EQ(preds(d, 3), (std::set<uint32_t>{2}));  // the empty name is one key
}

/// Reference by definition, O(n²): j depends on i < j iff i is the last transaction before j
/// touching one of j's keys and after the last barrier before j, or one of them is the barrier
/// rule's partner.
std::vector<std::set<uint32_t>> reference_preds(const std::vector<TxKeys>& txs) {
    std::vector<std::set<uint32_t>> out(txs.size());
    for (size_t j = 0; j < txs.size(); ++j) {
        long last_barrier = -1;
        for (size_t i = 0; i < j; ++i)
            if (txs[i].barrier) last_barrier = static_cast<long>(i);
        if (txs[j].barrier) {
            for (long i = std::max(0L, last_barrier); i < static_cast<long>(j); ++i)
                out[j].insert(static_cast<uint32_t>(i));
            continue;
        }
        if (last_barrier >= 0) out[j].insert(static_cast<uint32_t>(last_barrier));
        for (uint8_t k = 0; k < txs[j].count; ++k) {
            for (long i = static_cast<long>(j) - 1; i > last_barrier; --i) {
                const TxKeys& t = txs[static_cast<size_t>(i)];
                if (std::find(t.keys.begin(), t.keys.begin() + t.count, txs[j].keys[k]) !=
                    t.keys.begin() + t.count) {
                    out[j].insert(static_cast<uint32_t>(i));
                    break;
                }
            }
        }
    }
    return out;
}

TEST(exec_dag, random_lists_match_the_reference_and_order_every_conflict) {
    static const std::string names[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"};
    std::mt19937_64 rng{42};
    for (int round = 0; round < 300; ++round) {
        const size_t n = rng() % 120;
        const size_t universe = 1 + rng() % 12;
        const unsigned barrier_per_mille =
            static_cast<unsigned>(std::array<int, 3>{0, 20, 150}[rng() % 3]);
        std::vector<TxKeys> txs(n);
        for (auto& t : txs) {
            const size_t count = 1 + rng() % 3;
            for (size_t k = 0; k < count; ++k)
                t.add(rng() % 2 ? KeyKind::account : KeyKind::user, names[rng() % universe]);
            t.barrier = rng() % 1000 < barrier_per_mille;
        }
        const Dag d = build_dag(txs);
        check_shape(d, txs);
        const auto want = reference_preds(txs);
        for (size_t j = 0; j < n; ++j)
            ASSERT_EQ(preds(d, j), want[j]) << "round " << round << ", tx " << j;
        // Soundness: every conflicting pair (shared key, or a barrier) is ordered by a path.
        std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
        for (size_t j = 0; j < n; ++j)
            for (uint32_t p : d.preds_of(j)) {
                reach[p][j] = true;
                for (size_t i = 0; i < p; ++i)
                    if (reach[i][p]) reach[i][j] = true;
            }
        for (size_t j = 0; j < n; ++j)
            for (size_t i = 0; i < j; ++i) {
                bool conflict = txs[i].barrier || txs[j].barrier;
                for (uint8_t k = 0; k < txs[j].count && !conflict; ++k)
                    conflict = std::find(txs[i].keys.begin(), txs[i].keys.begin() + txs[i].count,
                                         txs[j].keys[k]) != txs[i].keys.begin() + txs[i].count;
                if (conflict) {
                    ASSERT_TRUE(reach[i][j])
                        << "round " << round << ": " << i << " -> " << j << " unordered";
                }
            }
    }
}

/// 100,000 transactions of realistic keys (keccak-spread addresses, user names) with a barrier
/// every 10,000: builds in well under a second; no timing assertion, it only has to finish.
TEST(exec_dag, hundred_thousand_transactions) {
    constexpr size_t n = 100'000;
    std::vector<Address> accounts(200'000);
    for (size_t i = 0; i < accounts.size(); ++i) accounts[i] = test::derived_address(i, 0xdac);
    std::vector<std::string> users(50'000);
    for (size_t i = 0; i < users.size(); ++i) users[i] = "user" + std::to_string(i);
    auto view = [](const Address& a) {
        return std::string_view{reinterpret_cast<const char*>(a.data()), 20};
    };
    std::mt19937_64 rng{7};
    std::vector<TxKeys> txs(n);
    for (size_t i = 0; i < n; ++i) {
        txs[i].add(KeyKind::account, view(accounts[rng() % accounts.size()]));
        if (i % 3 == 0) {
            txs[i].add(KeyKind::user, users[rng() % users.size()]);
            txs[i].add(KeyKind::user, users[rng() % users.size()]);
        } else {
            txs[i].add(KeyKind::account, view(accounts[i % 10 == 0 ? 0 : rng() % accounts.size()]));
        }
        txs[i].barrier = i % 10'000 == 9'999;
    }
    const Dag d = build_dag(txs);
    EXPECT_EQ(d.size(), n);
    EXPECT_EQ(d.stats.barriers, 10u);
    EXPECT_GT(d.stats.levels, 10u);
    EXPECT_GT(d.stats.max_width, 1'000u);
    // All on one key: a chain of n.
    std::vector<TxKeys> chain(n);
    for (auto& t : chain) t.add(KeyKind::account, view(accounts[0]));
    const Dag c = build_dag(chain);
    EXPECT_EQ(c.stats.levels, n);
    EXPECT_EQ(c.stats.edges, n - 1);
}

/// Keys a sender can choose freely (recipients 0x00000000000000000000…01, …02, …: equal in
/// their first bytes) and one barrier after 100,000 transactions: both once took minutes
/// (a prefix hash put every key in one bucket; the barrier searched its growing row for
/// duplicates). Still linear: no timing assertion, it only has to finish.
TEST(exec_dag, hostile_keys_and_a_late_barrier_stay_linear) {
    constexpr size_t n = 100'000;
    std::vector<Address> small(2 * n);
    for (size_t i = 0; i < small.size(); ++i) {
        small[i][16] = static_cast<uint8_t>(i >> 24);
        small[i][17] = static_cast<uint8_t>(i >> 16);
        small[i][18] = static_cast<uint8_t>(i >> 8);
        small[i][19] = static_cast<uint8_t>(i);
    }
    auto view = [](const Address& a) {
        return std::string_view{reinterpret_cast<const char*>(a.data()), 20};
    };
    std::vector<TxKeys> txs(n);
    for (size_t i = 0; i < n; ++i) {
        txs[i].add(KeyKind::account, view(small[2 * i]));
        txs[i].add(KeyKind::account, view(small[2 * i + 1]));
    }
    txs[n - 1].barrier = true;
    const Dag d = build_dag(txs);
    EXPECT_EQ(d.slots.size(), 2 * n);
    EXPECT_EQ(d.stats.edges, n - 1);  // only the barrier's
    EXPECT_EQ(d.stats.levels, 2u);
    EXPECT_EQ(d.stats.max_width, n - 1);
    EXPECT_EQ(d.preds_of(n - 1).size(), n - 1);
}

/// The write-set order slots_in_key_order gives: accounts before users, bytewise within each
/// kind. The keys below defeat a comparison of the first eight bytes alone: shared prefixes,
/// names shorter than eight bytes, a zero byte where the padding of a shorter name would be.
TEST(exec_dag, slots_in_key_order_is_bytewise_accounts_first) {
    using namespace std::string_literals;
    const std::vector<std::string> users = {"bob",
                                            "alice",
                                            "al",
                                            "al\0"s,
                                            "alice_and_bob_2",
                                            "alice_and_bob_1",
                                            "\xff",
                                            ""s,
                                            "a",
                                            "al\0\0\0\0\0\0\x01"s};
    const std::vector<std::string> accounts = {
        std::string(19, '\x22') + "\x01", std::string(20, '\x11'),
        std::string(19, '\x22') + "\x00"s, std::string(20, '\x00')};
    std::vector<TxKeys> txs;
    for (size_t i = 0; i < users.size(); ++i) {
        TxKeys t;
        if (i < accounts.size()) t.add(KeyKind::account, accounts[i]);
        t.add(KeyKind::user, users[i]);
        txs.push_back(t);
    }
    const Dag d = build_dag(txs);
    ASSERT_EQ(d.slots.size(), users.size() + accounts.size());
    std::vector<ConflictKey> expected(d.slots.begin(), d.slots.end());
    std::sort(expected.begin(), expected.end(), [](const ConflictKey& a, const ConflictKey& b) {
        return a.kind != b.kind ? a.kind < b.kind : a.bytes < b.bytes;
    });
    const std::vector<uint32_t> order = exec::slots_in_key_order(d);
    ASSERT_EQ(order.size(), expected.size());
    for (size_t k = 0; k < order.size(); ++k)
        EXPECT_EQ(d.slots[order[k]], expected[k]) << "position " << k;
    EXPECT_EQ(d.slots[order[0]].bytes, std::string(20, '\x00'));
    EXPECT_EQ(d.slots[order[accounts.size()]].bytes, "");
}

/// Checks slots_in_key_order against a plain sort of the keys (kind, then bytes) for a block whose
/// transactions touch `accounts` and `users`.
void expect_bytewise_order(const std::vector<std::string>& accounts,
                           const std::vector<std::string>& users) {
    std::vector<TxKeys> txs;
    for (size_t i = 0; i < std::max(accounts.size(), users.size()); ++i) {
        TxKeys t;
        if (i < accounts.size()) t.add(KeyKind::account, accounts[i]);
        if (i < users.size()) t.add(KeyKind::user, users[i]);
        txs.push_back(t);
    }
    const Dag d = build_dag(txs);
    std::vector<ConflictKey> expected(d.slots.begin(), d.slots.end());
    std::sort(expected.begin(), expected.end(), [](const ConflictKey& a, const ConflictKey& b) {
        return a.kind != b.kind ? a.kind < b.kind : a.bytes < b.bytes;
    });
    const std::vector<uint32_t> order = exec::slots_in_key_order(d);
    ASSERT_EQ(order.size(), expected.size());
    std::vector<bool> seen(order.size(), false);
    for (size_t k = 0; k < order.size(); ++k) {
        ASSERT_LT(order[k], order.size());
        EXPECT_FALSE(seen[order[k]]) << "slot " << order[k] << " twice";
        seen[order[k]] = true;
        EXPECT_EQ(d.slots[order[k]], expected[k]) << "position " << k;
    }
}

/// The same order over block-sized key sets, where the keys spread over many buckets of the
/// counting pass: 4,000 random addresses, 200 addresses sharing their first eight bytes and 100
/// sharing sixteen (one bucket each, sorted by whole key), and 1,000 user names of every length
/// from 0 to 12 bytes, many sharing a start.
TEST(exec_dag, slots_in_key_order_is_bytewise_over_thousands_of_keys) {
    std::mt19937_64 rng{42};
    auto random_bytes = [&](std::string prefix, size_t length, unsigned alphabet) {
        while (prefix.size() < length) prefix.push_back(static_cast<char>(rng() % alphabet));
        return prefix;
    };
    std::vector<std::string> accounts, users;
    for (int i = 0; i < 4000; ++i) accounts.push_back(random_bytes("", 20, 256));
    for (int i = 0; i < 200; ++i) accounts.push_back(random_bytes(std::string(8, '\x5a'), 20, 4));
    for (int i = 0; i < 100; ++i) accounts.push_back(random_bytes(std::string(16, '\x77'), 20, 4));
    for (int i = 0; i < 1000; ++i) {
        std::string u = i % 3 == 0 ? "user" : "";
        const size_t length = rng() % 13;
        while (u.size() < length) u.push_back(static_cast<char>(rng() % 3 == 0 ? 0 : rng()));
        users.push_back(u);
    }
    expect_bytewise_order(accounts, users);
}

/// Names as a workload generator makes them: alike in their first eight bytes ("username" and
/// digits: the counting pass spreads them by their second word), or in their first sixteen and
/// longer than that (one bucket, ties broken by the whole name).
TEST(exec_dag, slots_in_key_order_is_bytewise_for_names_alike_at_the_start) {
    std::mt19937_64 rng{7};
    std::vector<std::string> alike_in_eight, alike_in_sixteen;
    for (int i = 0; i < 3000; ++i)
        alike_in_eight.push_back("username" + std::to_string(rng() % 1'000'000));
    for (int i = 0; i < 500; ++i)
        alike_in_sixteen.push_back("customer_account_" + std::to_string(rng() % 100'000));
    expect_bytewise_order({}, alike_in_eight);
    expect_bytewise_order({}, alike_in_sixteen);
    std::vector<std::string> both = alike_in_eight;
    both.insert(both.end(), alike_in_sixteen.begin(), alike_in_sixteen.end());
    expect_bytewise_order({std::string(20, '\x01')}, both);
}

TEST(exec_dag, slots_in_key_order_of_no_keys_is_empty) {
    EXPECT_TRUE(exec::slots_in_key_order(Dag{}).empty());
}

/// One kind spread by its first word while the other, all alike there, spreads by its second:
/// accounts sharing their first eight bytes beside random user names, and the reverse.
TEST(exec_dag, slots_in_key_order_spreads_each_kind_by_its_own_word) {
    std::mt19937_64 rng{11};
    auto random_tail = [&](std::string prefix, size_t length) {
        while (prefix.size() < length) prefix.push_back(static_cast<char>(rng()));
        return prefix;
    };
    std::vector<std::string> alike_accounts, random_accounts, alike_users, random_users;
    for (int i = 0; i < 1500; ++i) {
        alike_accounts.push_back(random_tail(std::string(8, '\xa5'), 20));
        random_accounts.push_back(random_tail("", 20));
        alike_users.push_back(random_tail("prefix__", 8 + rng() % 12));
        random_users.push_back(random_tail("", 1 + rng() % 20));
    }
    expect_bytewise_order(alike_accounts, random_users);
    expect_bytewise_order(random_accounts, alike_users);
}

/// Keys that differ only late in a word, so almost every bit of it is shared: only in their last
/// bit (63 shared bits), only in byte 7 of the first word, only in byte 15 (the second word).
TEST(exec_dag, slots_in_key_order_is_bytewise_for_keys_differing_in_their_last_bits) {
    const std::string base(20, '\x3c');
    std::vector<std::string> last_bit_hi, byte_seven, byte_fifteen, last_bit_lo;
    for (int b = 0; b < 2; ++b) {
        std::string k = base;
        k[7] = static_cast<char>(0x3c | b);
        last_bit_hi.push_back(k);
        k = base;
        k[15] = static_cast<char>(0x3c | b);
        last_bit_lo.push_back(k);
    }
    for (int v : {0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, 0x3c, 0x3d}) {
        std::string k = base;
        k[7] = static_cast<char>(v);
        byte_seven.push_back(k);
        k = base;
        k[15] = static_cast<char>(v);
        byte_fifteen.push_back(k);
    }
    for (const auto* keys : {&last_bit_hi, &byte_seven, &byte_fifteen, &last_bit_lo}) {
        expect_bytewise_order(*keys, {});
        expect_bytewise_order({}, *keys);
        expect_bytewise_order(*keys, *keys);
    }
}

/// Keys equal in the sixteen bytes the records hold (a shorter key padded with zeros) and told
/// apart only by the whole key: at the end of the second word and at the end of the first.
TEST(exec_dag, slots_in_key_order_breaks_ties_of_the_padded_words_by_the_whole_key) {
    const std::string sixteen = "0123456789abcdef";
    const std::string eight = "01234567";
    const std::vector<std::string> at_sixteen = {
        sixteen + std::string("\0\x01", 2), sixteen, sixteen + std::string(1, '\0'),
        sixteen + std::string(2, '\0'), "0123456789abcdeg"};
    const std::vector<std::string> at_eight = {
        eight + std::string("\0\x01", 2), eight, eight + std::string(1, '\0'),
        eight + std::string(9, '\0'), eight + std::string(8, '\0') + "x"};
    expect_bytewise_order({}, at_sixteen);
    expect_bytewise_order({}, at_eight);
    expect_bytewise_order(at_eight, at_sixteen);
}

TEST(exec_dag, slots_in_key_order_of_one_or_two_keys) {
    expect_bytewise_order({std::string(20, '\x01')}, {});
    expect_bytewise_order({}, {""});
    expect_bytewise_order({std::string(20, '\x02')}, {"alice"});
    expect_bytewise_order({std::string(20, '\x02'), std::string(20, '\x01')}, {});
    expect_bytewise_order({}, {"bob", ""});
}

/// Past the counting pass's largest bucket count: it stops at 65,536 per kind, which n/2 exceeds
/// from 131,074 keys on, so these 200,002 keys share buckets of about three.
TEST(exec_dag, slots_in_key_order_is_bytewise_past_the_largest_bucket_count) {
    std::mt19937_64 rng{5};
    std::vector<std::string> accounts(200'000, std::string(20, '\0'));
    for (std::string& a : accounts)
        for (char& c : a) c = static_cast<char>(rng());
    expect_bytewise_order(accounts, {"carol", "dave"});
}

/// Small random key sets over the bytes where order goes wrong first (0, 1, 0x7f, 0x80, 0xff),
/// of every length from 0 to 20, both kinds, against a plain sort.
TEST(exec_dag, slots_in_key_order_matches_a_plain_sort_on_random_small_sets) {
    constexpr char kAlphabet[] = {'\x00', '\x01', '\x7f', '\x80', '\xff'};
    for (uint64_t seed = 1; seed <= 2000; ++seed) {
        std::mt19937_64 rng{seed};
        auto random_key = [&] {
            std::string k(rng() % 21, '\0');
            for (char& c : k) c = kAlphabet[rng() % std::size(kAlphabet)];
            return k;
        };
        std::vector<std::string> accounts(rng() % 33), users(rng() % 33);
        if (accounts.empty() && users.empty()) users.resize(1);
        for (std::string& a : accounts) a = random_key();
        for (std::string& u : users) u = random_key();
        SCOPED_TRACE("seed " + std::to_string(seed));
        expect_bytewise_order(accounts, users);
        if (testing::Test::HasFailure()) return;
    }
}

}  // namespace
