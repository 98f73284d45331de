// The RocksDB store: init and reopen restore head, genesis and state; a commit writes every
// document of its block (checked as JSON) and reads after clear_cache() come back from disk; a
// second writer is refused as `locked` (in this process, and in another one, which meets the real
// file lock) while read-only opens still work; init refuses a non-empty path; open refuses anything
// that is not a barrel datadir.

#include <barrel/block/block.hpp>
#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/store/documents.hpp>
#include <barrel/store/store.hpp>

#include "child_process.hpp"
#include "store/testing.hpp"
#include "store_dump.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <atomic>
#include <limits>
#include <set>
#include <thread>

using namespace barrel;
using barrel::test::generate_or_throw;
using barrel::test::read_text;
using barrel::test::ScratchDir;
using barrel::test::write_text;
using nlohmann::json;

namespace {

chain::Genesis small_genesis() {
    const auto g = chain::parse_genesis(R"({
        "chain_id": 7, "gas_limit": "0x1c9c380", "timestamp": 1000,
        "coinbase": "0x00000000000000000000000000000000000000cb",
        "accounts": {
            "0x1111111111111111111111111111111111111111": {"nonce": 3, "balance": "0xde0b6b3a7640000"},
            "0x2222222222222222222222222222222222222222": {"balance": "1000"}
        },
        "users": {"alice": 100, "bob": "0x0"}
    })");
    EXPECT_TRUE(g) << (g ? "" : g.error());
    return g ? *g : chain::Genesis{};
}

Address address(std::string_view hex) { return *address_from_hex(hex); }

std::unique_ptr<store::Store> init_ok(const std::filesystem::path& dir, const chain::Genesis& g) {
    auto s = store::Store::init(dir, g);
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    return s ? std::move(s).value() : nullptr;
}

std::unique_ptr<store::Store> open_ok(const std::filesystem::path& dir, store::Options o = {}) {
    auto s = store::Store::open(dir, o);
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    return s ? std::move(s).value() : nullptr;
}

store::StoreErrorCode open_error(const std::filesystem::path& dir, store::Options o = {}) {
    auto s = store::Store::open(dir, o);
    EXPECT_FALSE(s) << dir << " opened";
    return s ? store::StoreErrorCode::io : s.error().code;
}

std::set<std::string> entries(const std::filesystem::path& dir) {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator{dir})
        names.insert(e.path().filename().string());
    return names;
}

/// The store's state read, which must not fail.
std::optional<state::Account> read_account(const store::Store& s, const Address& a) {
    auto v = s.account(a);
    EXPECT_TRUE(v) << (v ? "" : v.error().message);
    return v ? *v : std::nullopt;
}
std::optional<u256> read_user(const store::Store& s, std::string_view name) {
    auto v = s.user(name);
    EXPECT_TRUE(v) << (v ? "" : v.error().message);
    return v ? *v : std::nullopt;
}

#define EXPECT_STORE_CODE(expr, code) EXPECT_EQ(store::to_string(expr), store::to_string(code))

}  // namespace

TEST(store, init_then_reopen_restores_head_genesis_and_state) {
    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    const chain::Genesis g = small_genesis();
    const block::Header h0 = chain::genesis_header(g);
    const store::Head expected{0, block::hash_of(h0), chain::state_root(g)};
    {
        auto s = init_ok(dir, g);
        ASSERT_TRUE(s);
        EXPECT_EQ(s->head().number, 0u);
        EXPECT_EQ(s->head().hash, expected.hash);
        EXPECT_EQ(s->head().state_root, expected.state_root);
    }
    auto s = open_ok(dir);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->head().number, 0u);
    EXPECT_EQ(s->head().hash, expected.hash);
    EXPECT_EQ(s->head().state_root, expected.state_root);
    // The chain parameters; the allocation is read as state, never back as a document.
    chain::Genesis params = g;
    params.alloc = {};
    EXPECT_EQ(s->genesis(), params);

    const auto a = read_account(*s, address("0x1111111111111111111111111111111111111111"));
    ASSERT_TRUE(a);
    EXPECT_EQ(a->nonce, 3u);
    EXPECT_EQ(a->balance, u256{1'000'000'000'000'000'000ull});
    EXPECT_EQ(read_account(*s, address("0x2222222222222222222222222222222222222222"))->balance,
              1000u);
    EXPECT_FALSE(read_account(*s, address("0x3333333333333333333333333333333333333333")));
    EXPECT_EQ(read_user(*s, "alice"), u256{100});
    EXPECT_EQ(read_user(*s, "bob"), u256{0});
    EXPECT_FALSE(read_user(*s, "carol"));

    // Block 0's header document and the hash index.
    const auto header = s->header(0);
    ASSERT_TRUE(header && *header);
    EXPECT_EQ(**header, json::parse(store::header_document(h0, expected.hash, 0)));
    EXPECT_EQ((**header)["state_root"], to_hex(expected.state_root));
    EXPECT_EQ((**header)["transaction_count"], "0x0");
    const auto n = s->block_number(expected.hash);
    ASSERT_TRUE(n && *n);
    EXPECT_EQ(**n, 0u);
    EXPECT_FALSE(*s->raw_block(0));  // the genesis has no wire form
    EXPECT_FALSE(*s->header(1));

    const auto user = s->user_document("alice");
    ASSERT_TRUE(user && *user);
    EXPECT_EQ(**user, (json{{"name", "0x616c696365"}, {"balance", "0x64"}}));
    const auto account = s->account_document(address("0x1111111111111111111111111111111111111111"));
    ASSERT_TRUE(account && *account);
    EXPECT_EQ(**account, (json{{"nonce", "0x3"}, {"balance", "0xde0b6b3a7640000"}}));
}

TEST(store, commit_writes_every_document_and_reads_come_back_from_disk) {
    const auto w = generate_or_throw({.blocks = 2,
                                      .txs = 60,
                                      .accounts = 40,
                                      .hot_accounts = 2,
                                      .hot_ratio = 0.3,
                                      .mix = gen::Mix::mixed});

    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    auto s = init_ok(dir, w.genesis);
    ASSERT_TRUE(s);

    std::vector<exec::Outcome> outcomes;
    std::vector<Hash> hashes;
    for (size_t k = 0; k < w.blocks.size(); ++k) {
        SCOPED_TRACE("block " + std::to_string(k + 1));
        auto b = block::decode_block(w.blocks[k]);
        ASSERT_TRUE(b);
        ASSERT_TRUE(block::recover_senders(*b, w.genesis.config.chain_id, nullptr));
        auto outcome = exec::execute(*b, *s, s->lattice(), w.genesis.config);
        ASSERT_TRUE(outcome) << exec::describe(outcome.error());
        ASSERT_TRUE(exec::check_seal(*b->header, *outcome));
        const auto stats = s->commit(*b, *outcome);
        ASSERT_TRUE(stats) << stats.error().message;
        EXPECT_EQ(stats->documents, 2 * b->size() + outcome->writes.size() + 1);
        EXPECT_GT(stats->bytes, b->wire.size());

        EXPECT_EQ(s->head().number, k + 1);
        EXPECT_EQ(s->head().hash, b->hash);
        EXPECT_EQ(s->head().state_root, b->header->state_root);

        // Every document of the block, as JSON.
        EXPECT_EQ(**s->raw_block(k + 1), w.blocks[k]);
        EXPECT_EQ(**s->block_number(b->hash), k + 1);
        const json header = **s->header(k + 1);
        EXPECT_EQ(header, json::parse(store::header_document(*b->header, b->hash, b->size())));
        EXPECT_EQ(header["number"], to_hex_quantity(uint64_t{k + 1}));
        EXPECT_EQ(header["hash"], to_hex(b->hash));
        EXPECT_EQ(header["parent_hash"], to_hex(b->header->parent_hash));
        EXPECT_EQ(header["transaction_count"], to_hex_quantity(uint64_t{b->size()}));
        for (size_t i = 0; i < b->size(); ++i) {
            const json tx = **s->transaction(b->tx_hashes[i]);
            EXPECT_EQ(tx, json::parse(store::tx_document(b->txs[i], b->tx_hashes[i], b->senders[i],
                                                         k + 1, b->hash, i)));
            EXPECT_EQ(tx["hash"], to_hex(b->tx_hashes[i]));
            EXPECT_EQ(tx["sender"], to_hex(w.senders[k][i]));
            EXPECT_EQ(tx["block_number"], to_hex_quantity(uint64_t{k + 1}));
            EXPECT_EQ(tx["block_hash"], to_hex(b->hash));
            EXPECT_EQ(tx["index"], to_hex_quantity(uint64_t{i}));
            EXPECT_EQ(tx["nonce"], to_hex_quantity(b->txs[i].nonce));
            const json receipt = **s->receipt(b->tx_hashes[i]);
            const auto& r = outcome->receipts[i];
            EXPECT_EQ(receipt, json::parse(store::receipt_document(r, b->tx_hashes[i], k + 1, i)));
            EXPECT_EQ(receipt["transaction_hash"], to_hex(b->tx_hashes[i]));
            EXPECT_EQ(receipt["status"], r.status ? "0x1" : "0x0");
            EXPECT_EQ(receipt["gas_used"], to_hex_quantity(r.gas_used));
            EXPECT_EQ(receipt["cumulative_gas_used"], to_hex_quantity(r.cumulative_gas_used));
            EXPECT_EQ(receipt["output"], to_hex(r.output));
        }
        ASSERT_FALSE(outcome->writes.accounts.empty());
        for (const auto& [a, account] : outcome->writes.accounts) {
            const json doc = **s->account_document(a);
            EXPECT_EQ(doc, (json{{"nonce", to_hex_quantity(account.nonce)},
                                 {"balance", to_hex_quantity(account.balance)}}));
        }
        ASSERT_FALSE(outcome->writes.users.empty());  // the mixed workload calls DagTransfer
        for (const auto& [name, balance] : outcome->writes.users) {
            const json doc = **s->user_document(name);
            EXPECT_EQ(doc, (json{{"name", to_hex(as_bytes(name))},
                                 {"balance", to_hex_quantity(balance)}}));
        }
        hashes.push_back(b->hash);
        outcomes.push_back(std::move(outcome).value());
    }

    // The last value each key was given, i.e. the state after both blocks.
    std::map<Address, state::Account> accounts;
    std::map<std::string, u256> users;
    for (const auto& out : outcomes) {
        for (const auto& [a, account] : out.writes.accounts) accounts[a] = account;
        for (const auto& [name, balance] : out.writes.users) users[name] = balance;
    }
    auto check_state = [&](const store::Store& st) {
        for (const auto& [a, account] : accounts)
            EXPECT_EQ(read_account(st, a), account) << to_hex(a);
        for (const auto& [name, balance] : users) EXPECT_EQ(read_user(st, name), balance) << name;
        // Keys no block touched still read their genesis values.
        for (const auto& [a, account] : w.genesis.alloc.accounts)
            if (!accounts.contains(a)) {
                EXPECT_EQ(read_account(st, a), account);
            }
    };
    store::testing::clear_cache(*s);  // every read below goes to RocksDB
    check_state(*s);

    s.reset();
    auto reopened = open_ok(dir);
    ASSERT_TRUE(reopened);
    EXPECT_EQ(reopened->head().number, 2u);
    EXPECT_EQ(reopened->head().hash, hashes.back());
    EXPECT_EQ(reopened->head().state_root, outcomes.back().state_root);
    check_state(*reopened);

    // The same reads from table files (their bloom filters and the hash-bucketed memtables'
    // prefix setting) instead of the memtables, and absent keys stay absent.
    ASSERT_TRUE(reopened->flush());
    store::testing::clear_cache(*reopened);
    check_state(*reopened);
    for (size_t k = 0; k < w.blocks.size(); ++k) {
        const auto b = block::decode_block(w.blocks[k]);
        ASSERT_TRUE(b);
        for (size_t i = 0; i < b->size(); ++i) {
            EXPECT_EQ((**reopened->transaction(b->tx_hashes[i]))["hash"], to_hex(b->tx_hashes[i]));
            EXPECT_EQ((**reopened->receipt(b->tx_hashes[i]))["transaction_hash"],
                      to_hex(b->tx_hashes[i]));
        }
    }
    Hash absent = hashes.back();
    absent[31] ^= 1;
    EXPECT_FALSE(*reopened->transaction(absent));
    EXPECT_FALSE(*reopened->receipt(absent));
    EXPECT_FALSE(read_account(*reopened, Address::from_view(BytesView{absent.data(), 20})));
}

TEST(store, reads_racing_commits_never_leave_a_replaced_value_cached) {
    // A reader that misses the cache fetches from RocksDB and fills the cache; if a commit's
    // write and write-through land between its fetch and its fill, the fill must not win. Readers
    // hammer every account the chain touches while blocks commit, the cache emptied before each
    // commit so that fills race it; after each commit every read must give the new value. A cache
    // of a few entries keeps evicting, so reads keep missing.
    // A mixed workload: DagTransfer users too, their cache follows the same rule.
    const auto w =
        generate_or_throw({.blocks = 6, .txs = 40, .accounts = 24, .mix = gen::Mix::mixed});
    ScratchDir tmp;
    store::Options small;
    small.account_cache_bytes = 1024;
    small.user_cache_entries = 4;  // one per shard at most: every fill of a new user evicts
    auto created = store::Store::init(tmp.path() / "data", w.genesis, small);
    ASSERT_TRUE(created) << created.error().message;
    auto s = std::move(created).value();

    std::vector<Address> touched;
    for (const auto& [a, account] : w.genesis.alloc.accounts) touched.push_back(a);
    std::vector<std::string> users;
    for (const auto& [name, balance] : w.genesis.alloc.users) users.push_back(name);
    std::atomic<bool> stop{false};
    std::vector<std::thread> readers;
    for (int r = 0; r < 2; ++r)
        readers.emplace_back([&] {
            while (!stop.load(std::memory_order_relaxed)) {
                for (const auto& a : touched) (void)s->account(a);
                for (const auto& name : users) (void)s->user(name);
            }
        });
    for (size_t k = 0; k < w.blocks.size(); ++k) {
        SCOPED_TRACE("block " + std::to_string(k + 1));
        auto b = block::decode_block(w.blocks[k]);
        ASSERT_TRUE(b);
        b->senders = w.senders[k];
        auto outcome = exec::execute(*b, *s, s->lattice(), w.genesis.config);
        ASSERT_TRUE(outcome) << exec::describe(outcome.error());
        store::testing::clear_cache(*s);
        ASSERT_TRUE(s->commit(*b, *outcome));
        for (int rep = 0; rep < 3; ++rep) {
            for (const auto& [a, account] : outcome->writes.accounts)
                EXPECT_EQ(read_account(*s, a), account) << to_hex(a);
            for (const auto& [name, balance] : outcome->writes.users)
                EXPECT_EQ(read_user(*s, name), balance) << name;
        }
    }
    stop = true;
    for (auto& t : readers) t.join();
}

TEST(store, an_account_cache_too_large_to_map_is_an_error_and_writes_nothing) {
    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    store::Options huge;
    huge.account_cache_bytes = std::numeric_limits<size_t>::max();
    const auto created = store::Store::init(dir, small_genesis(), huge);
    ASSERT_FALSE(created);
    EXPECT_EQ(created.error().code, store::StoreErrorCode::out_of_memory);
    EXPECT_EQ(created.error().message, "cannot allocate an account cache of " +
                                           std::to_string(huge.account_cache_bytes) + " bytes");
    EXPECT_FALSE(std::filesystem::exists(dir));
    // A one-set cache (the smallest) works, evicting as it goes.
    store::Options tiny;
    tiny.account_cache_bytes = 0;
    auto s = store::Store::init(dir, small_genesis(), tiny);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(read_account(**s, address("0x2222222222222222222222222222222222222222")),
              (state::Account{0, 1000}));
}

/// A block larger than Options::max_block_bytes is refused with the sizes named, and nothing of it
/// is written; one of exactly that size is taken. A limit past what any store can take is refused
/// at open, before the path is touched.
TEST(store, a_block_over_the_size_limit_is_refused_and_writes_nothing) {
    const auto w = generate_or_throw({.blocks = 1, .txs = 20, .accounts = 20});
    auto b = block::decode_block(w.blocks[0]);
    ASSERT_TRUE(b);
    b->senders = w.senders[0];
    const size_t size = b->wire.size();

    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    store::Options limited;
    limited.max_block_bytes = size - 1;
    {
        auto s = store::Store::init(dir, w.genesis, limited);
        ASSERT_TRUE(s) << s.error().message;
        const auto outcome = exec::execute(*b, **s, (*s)->lattice(), w.genesis.config);
        ASSERT_TRUE(outcome) << exec::describe(outcome.error());
        const test::Dump before = test::dump_datadir(dir);
        const auto refused = (*s)->commit(*b, *outcome);
        ASSERT_FALSE(refused);
        EXPECT_EQ(refused.error().code, store::StoreErrorCode::invalid_argument);
        EXPECT_EQ(refused.error().message, "commit: a block of " + std::to_string(size) +
                                               " bytes is more than the store takes (" +
                                               std::to_string(size - 1) + ")");
        EXPECT_EQ((*s)->head().number, 0u);
        EXPECT_EQ(test::dump_datadir(dir), before);
    }
    store::Options exact;
    exact.max_block_bytes = size;
    auto s = open_ok(dir, exact);
    ASSERT_TRUE(s);
    const auto outcome = exec::execute(*b, *s, s->lattice(), w.genesis.config);
    ASSERT_TRUE(outcome);
    ASSERT_TRUE(s->commit(*b, *outcome));
    EXPECT_EQ(s->head().number, 1u);

    store::Options past;
    past.max_block_bytes = store::Options::kMaxBlockBytes + 1;
    const auto other = tmp.path() / "other";
    const auto created = store::Store::init(other, w.genesis, past);
    ASSERT_FALSE(created);
    EXPECT_EQ(created.error().code, store::StoreErrorCode::invalid_argument);
    EXPECT_EQ(created.error().message,
              "max_block_bytes 1073741825 is more than a store can take (1073741824)");
    EXPECT_FALSE(std::filesystem::exists(other));
}

TEST(store, second_writer_in_the_same_process_is_locked_but_readers_are_not) {
    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    auto s = init_ok(dir, small_genesis());
    ASSERT_TRUE(s);
    auto again = store::Store::open(dir);
    ASSERT_FALSE(again);
    EXPECT_STORE_CODE(again.error().code, store::StoreErrorCode::locked);
    EXPECT_EQ(again.error().message, "datadir " + dir.string() + " is in use by another process");

    store::Options ro;
    ro.read_only = true;
    auto reader = open_ok(dir, ro);
    ASSERT_TRUE(reader);
    EXPECT_EQ(reader->head().hash, s->head().hash);
    EXPECT_EQ(read_user(*reader, "alice"), u256{100});

    // Once the writer is gone, the datadir opens again.
    s.reset();
    EXPECT_TRUE(open_ok(dir));
}

TEST(store, second_writer_in_another_process_is_locked) {
    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    auto s = init_ok(dir, small_genesis());
    ASSERT_TRUE(s);
    write_text(tmp.path() / "empty.rlp", "");
    const std::string err = (tmp.path() / "stderr").string();
    const pid_t child = test::spawn_cli(
        {"import", "--datadir", dir.string(), (tmp.path() / "empty.rlp").string()}, err);
    ASSERT_GT(child, 0);
    auto child_stderr = [&err] { return read_text(err); };
    EXPECT_EQ(test::wait_child(child), 2) << child_stderr();
    EXPECT_EQ(child_stderr(), "error: datadir " + dir.string() + " is in use by another process\n");

    // Once this process lets go, the other one gets in.
    s.reset();
    const pid_t again = test::spawn_cli(
        {"import", "--datadir", dir.string(), (tmp.path() / "empty.rlp").string()}, err);
    EXPECT_EQ(test::wait_child(again), 0) << child_stderr();
}

TEST(store, init_refuses_anything_but_a_missing_path_or_an_empty_directory) {
    ScratchDir tmp;
    const chain::Genesis g = small_genesis();

    // An empty directory is fine.
    std::filesystem::create_directory(tmp.path() / "empty");
    EXPECT_TRUE(init_ok(tmp.path() / "empty", g));

    std::filesystem::create_directory(tmp.path() / "full");
    write_text(tmp.path() / "full" / "something", "x");
    auto full = store::Store::init(tmp.path() / "full", g);
    ASSERT_FALSE(full);
    EXPECT_STORE_CODE(full.error().code, store::StoreErrorCode::already_initialized);
    EXPECT_EQ(full.error().message, (tmp.path() / "full").string() + " is not empty");

    // An existing datadir (the one initialized above), whether or not it is open.
    auto twice = store::Store::init(tmp.path() / "empty", g);
    ASSERT_FALSE(twice);
    EXPECT_STORE_CODE(twice.error().code, store::StoreErrorCode::already_initialized);

    write_text(tmp.path() / "file", "x");
    auto file = store::Store::init(tmp.path() / "file", g);
    ASSERT_FALSE(file);
    EXPECT_STORE_CODE(file.error().code, store::StoreErrorCode::already_initialized);
    EXPECT_EQ(file.error().message,
              (tmp.path() / "file").string() + " exists and is not a directory");
}

TEST(store, open_refuses_what_is_not_a_barrel_datadir) {
    ScratchDir tmp;
    const auto& p = tmp.path();

    EXPECT_STORE_CODE(open_error(p / "missing"), store::StoreErrorCode::not_a_datadir);
    EXPECT_FALSE(std::filesystem::exists(p / "missing"));  // and nothing was created

    std::filesystem::create_directory(p / "empty");
    EXPECT_STORE_CODE(open_error(p / "empty"), store::StoreErrorCode::not_a_datadir);
    EXPECT_TRUE(std::filesystem::is_empty(p / "empty"));

    write_text(p / "file", "not a directory");
    EXPECT_STORE_CODE(open_error(p / "file"), store::StoreErrorCode::not_a_datadir);

    // A directory that merely has a CURRENT file (whatever it says).
    for (const std::string current : {"MANIFEST-000001\n", "hello\n", "no newline", ""}) {
        SCOPED_TRACE(current);
        std::filesystem::remove_all(p / "current");
        std::filesystem::create_directory(p / "current");
        write_text(p / "current" / "CURRENT", current);
        EXPECT_STORE_CODE(open_error(p / "current"), store::StoreErrorCode::not_a_datadir);
        store::Options ro;
        ro.read_only = true;
        EXPECT_STORE_CODE(open_error(p / "current", ro), store::StoreErrorCode::not_a_datadir);
        // Refused without writing anything into the directory (RocksDB's info LOG included).
        EXPECT_EQ(entries(p / "current"), std::set<std::string>{"CURRENT"});
    }

    // A RocksDB database that is not barrel's: without barrel's column families, and with them
    // but without barrel's format marker.
    {
        rocksdb::Options options;
        options.create_if_missing = true;
        rocksdb::DB* raw = nullptr;
        ASSERT_TRUE(rocksdb::DB::Open(options, (p / "plain").string(), &raw).ok());
        ASSERT_TRUE(raw->Put(rocksdb::WriteOptions{}, "key", "value").ok());
        delete raw;
    }
    const auto plain = entries(p / "plain");
    EXPECT_STORE_CODE(open_error(p / "plain"), store::StoreErrorCode::not_a_datadir);
    EXPECT_EQ(entries(p / "plain"), plain);
    {
        rocksdb::Options options;
        options.create_if_missing = true;
        options.create_missing_column_families = true;
        std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
        for (const char* name : {"default", "headers", "blocks", "transactions", "receipts",
                                 "accounts", "users", "meta"})
            cfs.emplace_back(name, rocksdb::ColumnFamilyOptions{});
        std::vector<rocksdb::ColumnFamilyHandle*> handles;
        rocksdb::DB* raw = nullptr;
        ASSERT_TRUE(
            rocksdb::DB::Open(options, (p / "lookalike").string(), cfs, &handles, &raw).ok());
        for (auto* h : handles) (void)raw->DestroyColumnFamilyHandle(h);
        delete raw;
    }
    EXPECT_STORE_CODE(open_error(p / "lookalike"), store::StoreErrorCode::not_a_datadir);
}

TEST(store, damaged_head_is_corruption) {
    ScratchDir tmp;
    const auto dir = tmp.path() / "data";
    ASSERT_TRUE(init_ok(dir, small_genesis()));
    test::write_raw(dir, "meta", "head", "{");
    auto s = store::Store::open(dir);
    ASSERT_FALSE(s);
    EXPECT_STORE_CODE(s.error().code, store::StoreErrorCode::corruption);
    EXPECT_EQ(s.error().message, "datadir has no valid head");
}
