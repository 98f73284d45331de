// The store's documents are written without a DOM (json/writer.hpp) but are defined as what
// nlohmann::json::dump() makes of the documented object. These tests build that object the
// straightforward way (an nlohmann DOM, built here from the documented keys) and require
// the writer's text to be byte-identical, over thousands of random documents whose values cross
// every width boundary of the hex forms.

#include <barrel/core/hex.hpp>
#include <barrel/json/conventions.hpp>
#include <barrel/json/tx_json.hpp>
#include <barrel/store/documents.hpp>

#include "json/writer.hpp"
#include "store/block_batch.hpp"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <rocksdb/write_batch.h>

#include <deque>
#include <random>
#include <string>

using namespace barrel;
using nlohmann::json;

namespace {

// ---- The reference documents, as DOMs -------------------------------------------------------

json reference_header(const block::Header& h, const Hash& hash, size_t tx_count) {
    return {
        {"number", json_quantity(h.number)},
        {"hash", json_bytes(hash)},
        {"parent_hash", json_bytes(h.parent_hash)},
        {"timestamp", json_quantity(h.timestamp)},
        {"coinbase", json_bytes(h.coinbase)},
        {"gas_limit", json_quantity(h.gas_limit)},
        {"gas_used", json_quantity(h.gas_used)},
        {"txs_root", json_bytes(h.txs_root)},
        {"receipts_root", json_bytes(h.receipts_root)},
        {"state_root", json_bytes(h.state_root)},
        {"chain_id", json_quantity(h.chain_id)},
        {"transaction_count", json_quantity(uint64_t{tx_count})},
    };
}

json reference_tx(const tx::Transaction& t, const Hash& tx_hash, const Address& sender,
                  uint64_t block_number, const Hash& block_hash, size_t index) {
    // The keys json/tx_json.hpp documents, built without the serializer under test.
    json doc = {
        {"type", json_quantity(static_cast<uint64_t>(t.type))},
        {"chain_id", t.chain_id ? json(json_quantity(*t.chain_id)) : json(nullptr)},
        {"nonce", json_quantity(t.nonce)},
        {"gas_limit", json_quantity(t.gas_limit)},
        {"to", t.to ? json(json_bytes(*t.to)) : json(nullptr)},
        {"value", json_quantity(t.value)},
        {"input", json_bytes(t.data)},
        {"v", json_quantity(json_v(t))},
        {"r", json_quantity(t.r)},
        {"s", json_quantity(t.s)},
        {"hash", json_bytes(tx_hash)},
        {"sender", json_bytes(sender)},
    };
    if (t.type == tx::TxType::dynamic_fee) {
        doc["max_fee_per_gas"] = json_quantity(t.max_fee_per_gas);
        doc["max_priority_fee_per_gas"] = json_quantity(t.max_priority_fee_per_gas);
    } else {
        doc["gas_price"] = json_quantity(t.gas_price());
    }
    if (t.type != tx::TxType::legacy) {
        json list = json::array();
        for (const auto& entry : t.access_list) {
            json keys = json::array();
            for (const auto& key : entry.storage_keys) keys.push_back(json_bytes(key));
            list.push_back(
                {{"address", json_bytes(entry.address)}, {"storage_keys", std::move(keys)}});
        }
        doc["access_list"] = std::move(list);
    }
    doc["block_number"] = json_quantity(block_number);
    doc["block_hash"] = json_bytes(block_hash);
    doc["index"] = json_quantity(uint64_t{index});
    return doc;
}

json reference_receipt(const exec::Receipt& r, const Hash& tx_hash, uint64_t block_number,
                       size_t index) {
    return {
        {"transaction_hash", json_bytes(tx_hash)},
        {"block_number", json_quantity(block_number)},
        {"index", json_quantity(uint64_t{index})},
        {"status", json_quantity(uint64_t{r.status ? 1u : 0u})},
        {"gas_used", json_quantity(r.gas_used)},
        {"cumulative_gas_used", json_quantity(r.cumulative_gas_used)},
        {"output", json_bytes(r.output)},
    };
}

// ---- Random values that cross every hex width -------------------------------------------------

class Random {
public:
    explicit Random(uint64_t seed) : m_rng{seed} {}

    uint64_t u64() {
        // Zero, small, 4-bit boundaries and all 64 bits, each often enough to matter.
        switch (m_rng() % 6) {
            case 0: return 0;
            case 1: return m_rng() % 17;
            case 2: return uint64_t{1} << (m_rng() % 64);
            case 3: return (uint64_t{1} << (m_rng() % 64)) - 1;
            case 4: return ~uint64_t{0};
            default: return m_rng() >> (m_rng() % 64);
        }
    }
    u256 u256_value() {
        u256 v;
        for (int limb = 0; limb < 4; ++limb) v = (v << 64) | (m_rng() % 3 == 0 ? 0 : u64());
        return v >> (m_rng() % 256);
    }
    Bytes bytes(size_t max) {
        Bytes b(m_rng() % (max + 1));
        for (auto& x : b) x = static_cast<uint8_t>(m_rng());
        return b;
    }
    template <class Fixed>
    Fixed fixed() {
        Fixed f;
        for (size_t i = 0; i < Fixed::size(); ++i) f[i] = static_cast<uint8_t>(m_rng());
        return f;
    }
    bool coin() { return m_rng() % 2 == 0; }
    size_t below(size_t n) { return static_cast<size_t>(m_rng() % n); }

private:
    std::mt19937_64 m_rng;
};

tx::Transaction random_tx(Random& r, std::deque<Bytes>& calldata) {
    tx::Transaction t;
    t.type = static_cast<tx::TxType>(r.below(3));
    if (t.type != tx::TxType::legacy || r.coin()) t.chain_id = r.u64();
    t.nonce = r.u64();
    t.max_fee_per_gas = r.u256_value();
    t.max_priority_fee_per_gas =
        t.type == tx::TxType::dynamic_fee ? r.u256_value() : t.max_fee_per_gas;
    t.gas_limit = r.u64();
    if (r.below(5) != 0) t.to = r.fixed<Address>();
    t.value = r.u256_value();
    calldata.push_back(r.bytes(r.coin() ? 0 : 200));
    t.data = calldata.back();
    if (t.type != tx::TxType::legacy) {
        t.access_list.resize(r.below(4));
        for (auto& entry : t.access_list) {
            entry.address = r.fixed<Address>();
            entry.storage_keys.resize(r.below(3));
            for (auto& key : entry.storage_keys) key = r.fixed<Hash>();
        }
    }
    t.y_parity = r.coin();
    t.r = r.u256_value();
    t.s = r.u256_value();
    return t;
}

constexpr int kRounds = 3'000;

}  // namespace

TEST(json_writer, quantities_match_the_conventions_at_every_width) {
    const std::vector<std::pair<u256, std::string>> cases = {
        {0, "\"0x0\""},
        {1, "\"0x1\""},
        {15, "\"0xf\""},
        {16, "\"0x10\""},
        {0x5208, "\"0x5208\""},
        {u256{~uint64_t{0}}, "\"0xffffffffffffffff\""},
        {u256{1} << 64, "\"0x10000000000000000\""},
        {(u256{1} << 128) + 1, "\"0x100000000000000000000000000000001\""},
        {~u256{0}, "\"0x" + std::string(64, 'f') + "\""},
    };
    for (const auto& [value, text] : cases) {
        std::string out;
        JsonWriter{out}.quantity(value);
        EXPECT_EQ(out, text);
        EXPECT_EQ(out, json(to_hex_quantity(value)).dump());
        if (value <= ~uint64_t{0}) {
            std::string narrow;
            JsonWriter{narrow}.quantity(static_cast<uint64_t>(value));
            EXPECT_EQ(narrow, text);
        }
    }
}

TEST(json_writer, nesting_matches_nlohmann_dump) {
    std::string out;
    JsonWriter w{out};
    const Bytes two = {0x00, 0xab};
    w.begin_object()
        .key("a")
        .begin_array()
        .end_array()
        .key("b")
        .begin_array()
        .begin_object()
        .end_object()
        .bytes({})
        .bytes(two)
        .null()
        .end_array()
        .key("c")
        .begin_object()
        .key("x")
        .quantity(uint64_t{0})
        .key("y")
        .null()
        .end_object()
        .key("d")
        .null()
        .end_object();
    const json expected = {{"a", json::array()},
                           {"b", {json::object(), "0x", "0x00ab", nullptr}},
                           {"c", {{"x", "0x0"}, {"y", nullptr}}},
                           {"d", nullptr}};
    EXPECT_EQ(out, expected.dump());
    EXPECT_EQ(out, R"({"a":[],"b":[{},"0x","0x00ab",null],"c":{"x":"0x0","y":null},"d":null})");
}

TEST(store_documents, transactions_are_byte_identical_to_the_nlohmann_dump) {
    Random r{1};
    std::deque<Bytes> calldata;
    int types[3] = {0, 0, 0};
    for (int round = 0; round < kRounds; ++round) {
        const tx::Transaction t = random_tx(r, calldata);
        ++types[static_cast<size_t>(t.type)];
        const Hash hash = r.fixed<Hash>();
        const Hash block_hash = r.fixed<Hash>();
        const Address sender = r.fixed<Address>();
        const uint64_t number = r.u64();
        const size_t index = r.u64();
        ASSERT_EQ(store::tx_document(t, hash, sender, number, block_hash, index),
                  reference_tx(t, hash, sender, number, block_hash, index).dump())
            << "round " << round;
    }
    for (const int n : types) EXPECT_GT(n, kRounds / 4);  // every type was exercised
}

TEST(store_documents, receipts_headers_accounts_users_are_byte_identical_to_the_nlohmann_dump) {
    Random r{2};
    for (int round = 0; round < kRounds; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        const exec::Receipt receipt{r.coin(), r.u64(), r.u64(), r.bytes(r.coin() ? 0 : 96)};
        const Hash tx_hash = r.fixed<Hash>();
        const uint64_t number = r.u64();
        const size_t index = r.u64();
        ASSERT_EQ(store::receipt_document(receipt, tx_hash, number, index),
                  reference_receipt(receipt, tx_hash, number, index).dump());

        block::Header h;
        h.parent_hash = r.fixed<Hash>();
        h.number = r.u64();
        h.timestamp = r.u64();
        h.coinbase = r.fixed<Address>();
        h.gas_limit = r.u64();
        h.gas_used = r.u64();
        h.txs_root = r.fixed<Hash>();
        h.receipts_root = r.fixed<Hash>();
        h.state_root = r.fixed<Hash>();
        h.chain_id = r.u64();
        const Hash hash = r.fixed<Hash>();
        const size_t count = r.u64();
        ASSERT_EQ(store::header_document(h, hash, count), reference_header(h, hash, count).dump());

        const state::Account account{r.u64(), r.u256_value()};
        ASSERT_EQ(store::account_document(account),
                  json({{"nonce", json_quantity(account.nonce)},
                        {"balance", json_quantity(account.balance)}})
                      .dump());
        // Account documents read back to the same account.
        EXPECT_EQ(store::parse_account_document(store::account_document(account)), account);

        const Bytes name_bytes = r.bytes(40);
        const std::string name{name_bytes.begin(), name_bytes.end()};
        const u256 balance = r.u256_value();
        ASSERT_EQ(store::user_document(name, balance),
                  json({{"name", json_bytes(as_bytes(name))}, {"balance", json_quantity(balance)}})
                      .dump());
        EXPECT_EQ(store::parse_user_document(store::user_document(name, balance)), balance);
    }
}

namespace {

/// A block of `n` random transactions with receipts, as many written accounts and n/5 users.
struct RandomBlock {
    std::deque<Bytes> calldata;
    block::Block block;
    exec::Outcome outcome;
};

void fill_random_block(RandomBlock& rb, Random& r, size_t n) {
    block::Header h;
    h.number = 9;
    rb.block.header = h;
    for (size_t i = 0; i < n; ++i) {
        rb.block.txs.push_back(random_tx(r, rb.calldata));
        rb.block.tx_hashes.push_back(r.fixed<Hash>());
        rb.block.senders.push_back(r.fixed<Address>());
        rb.outcome.receipts.push_back({r.coin(), r.u64(), r.u64(), r.bytes(64)});
        rb.outcome.writes.accounts.emplace_back(r.fixed<Address>(),
                                                state::Account{r.u64(), r.u256_value()});
        if (i % 5 == 0)
            rb.outcome.writes.users.emplace_back("user" + std::to_string(i), r.u256_value());
    }
}

}  // namespace

// ---- The commit's write batch, against RocksDB's own WriteBatch::Put ------------------------

namespace {

using store::FamilyId;

rocksdb::Slice slice_of(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace

TEST(store_block_batch, the_linked_rocksdb_reads_the_records_barrel_writes) {
    EXPECT_TRUE(store::put_records_match_rocksdb());
}

/// Records of every length and family id across the varint32 byte boundaries are byte for byte
/// what WriteBatch::Put appends, and a batch rebuilt from them counts and iterates them.
TEST(store_block_batch, put_records_are_byte_identical_to_write_batch_put) {
    Random r{17};
    rocksdb::WriteBatch reference;
    std::string ours(store::kBatchHeaderSize, '\0');
    const uint32_t ids[] = {0, 1, 7, 127, 128, 16'383, 16'384, 2'097'151, 2'097'152, 0xffff'ffff};
    const size_t lengths[] = {0, 1, 127, 128, 300, 16'383, 16'384, 20'000};
    uint32_t count = 0;
    for (uint32_t id : ids) {
        for (size_t key_length : lengths) {
            const size_t value_length = lengths[r.u64() % std::size(lengths)];
            const Bytes key = r.bytes(key_length);
            const Bytes value = r.bytes(value_length);
            FamilyId family{id};
            ASSERT_TRUE(
                reference.Put(&family, slice_of(as_chars(key)), slice_of(as_chars(value))).ok());
            const size_t before = ours.size();
            store::append_put_record(ours, id, as_chars(key), as_chars(value));
            EXPECT_EQ(ours.size() - before,
                      store::put_record_size(id, as_chars(key), as_chars(value)));
            ++count;
        }
    }
    store::set_record_count(ours, count);
    ASSERT_EQ(ours.size(), reference.GetDataSize());
    EXPECT_TRUE(ours == reference.Data());
    const rocksdb::WriteBatch rebuilt{std::string{ours}};
    EXPECT_EQ(rebuilt.Count(), count);
    EXPECT_TRUE(rebuilt.HasPut());
    EXPECT_FALSE(rebuilt.HasDelete());
    EXPECT_FALSE(rebuilt.HasMerge());
}

/// The commit's batch for a block is the batch WriteBatch::Put makes of the block's documents (each
/// transaction, then its receipt; accounts; users; header), followed by the tail records, serially
/// and in parallel; and of a block with no transactions.
TEST(store_block_batch, a_block_batch_is_what_write_batch_put_makes_of_its_documents) {
    const store::DocumentFamilies families{3, 4, 5, 6, 1};
    const std::string header_key = std::string(7, '\0') + "\x09";
    const std::string raw_block(300, '\x5a');
    const store::PutRecord tail[] = {{2, header_key, raw_block}, {0, "head", "{}"}};
    for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{700}}) {
        SCOPED_TRACE("transactions: " + std::to_string(n));
        Random r{n + 1};
        RandomBlock rb;
        fill_random_block(rb, r, n);
        const block::Block& b = rb.block;
        const block::Header& h = *b.header;
        const exec::Outcome& o = rb.outcome;

        rocksdb::WriteBatch reference;
        size_t bytes = 0;
        auto put = [&](uint32_t id, std::string_view key, std::string_view value) {
            FamilyId family{id};
            ASSERT_TRUE(reference.Put(&family, slice_of(key), slice_of(value)).ok());
            bytes += key.size() + value.size();
        };
        for (size_t i = 0; i < n; ++i) {
            const std::string_view key = as_chars(b.tx_hashes[i].view());
            put(families.txs, key,
                store::tx_document(b.txs[i], b.tx_hashes[i], b.senders[i], h.number, b.hash, i));
            put(families.receipts, key,
                store::receipt_document(o.receipts[i], b.tx_hashes[i], h.number, i));
        }
        for (const auto& [address, account] : o.writes.accounts)
            put(families.accounts, as_chars(address.view()), store::account_document(account));
        for (const auto& [name, balance] : o.writes.users)
            put(families.users, name, store::user_document(name, balance));
        put(families.headers, header_key, store::header_document(h, b.hash, n));
        put(2, header_key, raw_block);
        put(0, "head", "{}");

        for (bool parallel : {false, true}) {
            const store::BlockBatch batch =
                store::encode_block_batch(b, o, families, header_key, tail, parallel);
            EXPECT_EQ(batch.records, reference.Count());
            EXPECT_EQ(batch.bytes, bytes);
            ASSERT_EQ(batch.rep.size(), reference.GetDataSize()) << "parallel: " << parallel;
            EXPECT_TRUE(batch.rep == reference.Data()) << "parallel: " << parallel;
        }
        // A reused buffer (an earlier batch's, here all 0xff bytes, header included) of any size
        // and capacity leaves nothing of itself behind.
        const size_t size = reference.GetDataSize();
        std::string longer(size + 1000, '\xff'), shorter(10, '\xff'), roomy(5, '\xff');
        roomy.reserve(2 * size);
        for (std::string* buffer : {&longer, &shorter, &roomy}) {
            const store::BlockBatch batch = store::encode_block_batch(
                b, o, families, header_key, tail, true, std::move(*buffer));
            ASSERT_EQ(batch.rep.size(), size);
            EXPECT_TRUE(batch.rep == reference.Data());
        }
    }
}

/// BlockWriteBatch hands back the representation it was given, capacity and all.
TEST(store_block_batch, a_block_write_batch_gives_its_buffer_back) {
    std::string rep(store::kBatchHeaderSize, '\0');
    store::append_put_record(rep, 3, "key", "value");
    store::set_record_count(rep, 1);
    rep.reserve(1 << 20);
    const std::string copy = rep;
    const char* storage = rep.data();
    store::BlockWriteBatch batch{std::move(rep)};
    EXPECT_EQ(batch.Count(), 1u);
    const std::string back = std::move(batch).release();
    EXPECT_EQ(back, copy);
    EXPECT_EQ(back.data(), storage);
    EXPECT_GE(back.capacity(), size_t{1} << 20);
}
