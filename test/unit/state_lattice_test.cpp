// The state commitment (docs/formats.md, "State commitment"): the lattice's algebra, its
// independence of order and threads, the incremental update against a full recomputation, and
// the vectors of test/data/state_lattice.json, which a second implementation checks too
// (test/integration/lattice_vectors.py, the ctest state_lattice_vectors).

#include <barrel/core/hex.hpp>
#include <barrel/state/lattice.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <tbb/global_control.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

using namespace barrel;

namespace {

Address address_of(uint64_t n) {
    Address a;
    for (size_t i = 0; i < 8; ++i) a[12 + i] = static_cast<uint8_t>(n >> (56 - 8 * i));
    a[0] = 0xa0;
    return a;
}

/// A state of `accounts` accounts and `users` users, deterministic in `seed`.
state::WriteSet some_state(size_t accounts, size_t users, uint64_t seed) {
    std::mt19937_64 rng{seed};
    state::WriteSet s;
    for (size_t i = 0; i < accounts; ++i)
        s.accounts.emplace_back(address_of(i), state::Account{rng() % 1000, u256{rng()} << 64});
    for (size_t i = 0; i < users; ++i) s.users.emplace_back("user" + std::to_string(i), rng());
    return s;
}

std::optional<u256> u256_of(const std::string& text) {
    try {
        return u256{text};
    } catch (...) {
        return std::nullopt;
    }
}

}  // namespace

TEST(state_lattice, the_empty_state_is_all_zeros_and_the_identity) {
    const state::Lattice zero;
    EXPECT_TRUE(zero.is_zero());
    EXPECT_EQ(state::lattice_of({}), zero);
    const auto e = state::Lattice::element(address_of(1), {1, 2});
    EXPECT_FALSE(e.is_zero());
    EXPECT_EQ(e + zero, e);
    EXPECT_EQ(e - zero, e);
}

TEST(state_lattice, adding_then_removing_an_entry_gives_the_identity_back) {
    const auto s = some_state(50, 10, 1);
    state::Lattice l = state::lattice_of(s);
    const state::Lattice before = l;
    Bytes entry;
    state::encode_entry(entry, address_of(999), state::Account{7, 8});
    l.add(entry);
    EXPECT_NE(l, before);
    l.remove(entry);
    EXPECT_EQ(l, before);
    // Lane arithmetic wraps mod 2^16: an element added 65,536 times is the identity.
    state::Lattice wrapped;
    const auto e = state::Lattice::element(entry);
    for (int i = 0; i < 65'536; ++i) wrapped += e;
    EXPECT_TRUE(wrapped.is_zero());
}

TEST(state_lattice, an_element_is_its_encoding_s) {
    Bytes entry;
    state::encode_entry(entry, address_of(3), state::Account{1, 5});
    EXPECT_EQ(state::Lattice::element(address_of(3), state::Account{1, 5}),
              state::Lattice::element(entry));
    entry.clear();
    state::encode_entry(entry, "bob", 9);
    EXPECT_EQ(state::Lattice::element("bob", 9), state::Lattice::element(entry));
    // Every field counts: a nonce, a balance, a name, a kind.
    const auto base = state::Lattice::element(address_of(3), state::Account{1, 5});
    EXPECT_NE(base, state::Lattice::element(address_of(3), state::Account{2, 5}));
    EXPECT_NE(base, state::Lattice::element(address_of(3), state::Account{1, 6}));
    EXPECT_NE(base, state::Lattice::element(address_of(4), state::Account{1, 5}));
    EXPECT_NE(state::Lattice::element("bob", 9), state::Lattice::element("bob2", 9));
}

TEST(state_lattice, the_sum_depends_on_neither_order_nor_thread_count) {
    auto s = some_state(3000, 500, 2);
    const state::Lattice serial = state::lattice_of(s, false);
    for (size_t threads : {1, 2, 4}) {
        tbb::global_control limit{tbb::global_control::max_allowed_parallelism, threads};
        EXPECT_EQ(state::lattice_of(s, true), serial) << threads << " threads";
    }
    std::mt19937_64 rng{3};
    std::shuffle(s.accounts.begin(), s.accounts.end(), rng);
    std::shuffle(s.users.begin(), s.users.end(), rng);
    EXPECT_EQ(state::lattice_of(s, true), serial);
    EXPECT_EQ(state::lattice_of(s, false), serial);
}

TEST(state_lattice, the_incremental_update_is_the_full_recompute) {
    const auto parent_state = some_state(400, 100, 4);
    const state::Lattice parent = state::lattice_of(parent_state, true);
    // A block: changes some accounts and users, creates new ones of each.
    state::WriteSet writes;
    std::map<Address, state::Account> after_accounts;
    std::map<std::string, u256> after_users;
    for (const auto& [a, v] : parent_state.accounts) after_accounts[a] = v;
    for (const auto& [n, v] : parent_state.users) after_users[n] = v;
    for (size_t i = 0; i < 400; i += 3) {
        const Address a = address_of(i);
        writes.accounts_before.push_back(after_accounts[a]);
        after_accounts[a].nonce += 1;
        writes.accounts.emplace_back(a, after_accounts[a]);
    }
    for (size_t i = 400; i < 410; ++i) {
        writes.accounts_before.push_back(std::nullopt);
        after_accounts[address_of(i)] = state::Account{0, i};
        writes.accounts.emplace_back(address_of(i), after_accounts[address_of(i)]);
    }
    for (size_t i = 0; i < 100; i += 7) {
        const std::string name = "user" + std::to_string(i);
        writes.users_before.push_back(after_users[name]);
        after_users[name] += 1;
        writes.users.emplace_back(name, after_users[name]);
    }
    writes.users_before.push_back(std::nullopt);
    writes.users.emplace_back("newcomer", 42);
    after_users["newcomer"] = 42;
    ASSERT_TRUE(writes.has_before());

    state::WriteSet after;
    for (const auto& [a, v] : after_accounts) after.accounts.emplace_back(a, v);
    for (const auto& [n, v] : after_users) after.users.emplace_back(n, v);
    const state::Lattice full = state::lattice_of(after, true);
    EXPECT_EQ(state::next_lattice(parent, writes, false), full);
    for (size_t threads : {1, 2}) {
        tbb::global_control limit{tbb::global_control::max_allowed_parallelism, threads};
        EXPECT_EQ(state::next_lattice(parent, writes, true), full) << threads << " threads";
    }
    // An empty write set keeps the parent's lattice, and so its root.
    EXPECT_EQ(state::next_lattice(parent, {}, true), parent);
}

TEST(state_lattice, bytes_round_trip_and_a_wrong_length_is_refused) {
    const state::Lattice l = state::lattice_of(some_state(20, 5, 5));
    const Bytes b = l.bytes();
    ASSERT_EQ(b.size(), state::Lattice::kBytes);
    // Lane 0 is bytes 0 and 1, little-endian.
    EXPECT_EQ(l.lanes()[0], b[0] | (b[1] << 8));
    EXPECT_EQ(state::Lattice::from_bytes(b), l);
    EXPECT_FALSE(state::Lattice::from_bytes(BytesView{b}.first(2047)));
    Bytes longer = b;
    longer.push_back(0);
    EXPECT_FALSE(state::Lattice::from_bytes(longer));
    EXPECT_FALSE(state::Lattice::from_bytes({}));
}

TEST(state_lattice, the_documented_vectors) {
    std::ifstream in{std::filesystem::path{BARREL_TEST_DATA_DIR} / "state_lattice.json"};
    ASSERT_TRUE(in) << "test/data/state_lattice.json";
    const auto doc = nlohmann::json::parse(in);
    ASSERT_GE(doc.at("cases").size(), 4u);
    for (const auto& c : doc.at("cases")) {
        SCOPED_TRACE(c.at("name").get<std::string>());
        state::WriteSet s;
        for (const auto& a : c.value("accounts", nlohmann::json::array())) {
            const auto address = address_from_hex(a.at("address").get<std::string>());
            const auto nonce = u256_of(a.at("nonce").get<std::string>());
            const auto balance = u256_of(a.at("balance").get<std::string>());
            ASSERT_TRUE(address && nonce && balance);
            s.accounts.emplace_back(*address,
                                    state::Account{static_cast<uint64_t>(*nonce), *balance});
        }
        for (const auto& u : c.value("users", nlohmann::json::array())) {
            const auto balance = u256_of(u.at("balance").get<std::string>());
            ASSERT_TRUE(balance);
            s.users.emplace_back(u.at("name").get<std::string>(), *balance);
        }
        auto by_key = [](const auto& x, const auto& y) { return x.first < y.first; };
        std::sort(s.accounts.begin(), s.accounts.end(), by_key);
        std::sort(s.users.begin(), s.users.end(), by_key);
        std::vector<std::string> entries;
        for (const auto& [a, v] : s.accounts) {
            Bytes e;
            state::encode_entry(e, a, v);
            entries.push_back(to_hex(e));
        }
        for (const auto& [n, v] : s.users) {
            Bytes e;
            state::encode_entry(e, n, v);
            entries.push_back(to_hex(e));
        }
        EXPECT_EQ(entries, c.at("entries").get<std::vector<std::string>>());
        const state::Lattice l = state::lattice_of(s, true);
        EXPECT_EQ(to_hex(BytesView{l.bytes()}.first(16)),
                  c.at("lattice_first_16_bytes").get<std::string>());
        EXPECT_EQ(to_hex(l.root()), c.at("state_root").get<std::string>());
    }
}
