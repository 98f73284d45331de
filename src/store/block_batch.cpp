#include "block_batch.hpp"

#include <barrel/core/parallel.hpp>

#include "document_writers.hpp"
#include <rocksdb/write_batch.h>

#include <cassert>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

namespace barrel::store {

namespace {

// RocksDB's ValueType tags (db/dbformat.h) for a Put.
constexpr char kTypeValue = 0x1;
constexpr char kTypeColumnFamilyValue = 0x5;

void append_varint32(std::string& out, uint32_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7f) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

size_t varint32_size(uint32_t v) noexcept {
    size_t size = 1;
    for (; v >= 0x80; v >>= 7) ++size;
    return size;
}

void append_length_prefixed(std::string& out, std::string_view bytes) {
    assert(bytes.size() <= UINT32_MAX && "a record's key or value is shorter than 4 GiB");
    append_varint32(out, static_cast<uint32_t>(bytes.size()));
    out.append(bytes);
}

}  // namespace

void append_put_record(std::string& records, uint32_t family_id, std::string_view key,
                       std::string_view value) {
    if (family_id == 0) {
        records.push_back(kTypeValue);
    } else {
        records.push_back(kTypeColumnFamilyValue);
        append_varint32(records, family_id);
    }
    append_length_prefixed(records, key);
    append_length_prefixed(records, value);
}

size_t put_record_size(uint32_t family_id, std::string_view key, std::string_view value) noexcept {
    return 1 + (family_id == 0 ? 0 : varint32_size(family_id)) +
           varint32_size(static_cast<uint32_t>(key.size())) + key.size() +
           varint32_size(static_cast<uint32_t>(value.size())) + value.size();
}

void set_record_count(std::string& rep, uint32_t count) noexcept {
    for (size_t i = 0; i < 4; ++i) rep[8 + i] = static_cast<char>(count >> (8 * i));
}

bool put_records_match_rocksdb() {
    static const bool match = [] {
        // Lengths and ids at and past the limits of a varint's one and two bytes, and an empty
        // value.
        const std::string b127(127, 'a'), b128(128, 'b'), b16384(16'384, 'c');
        struct Put {
            uint32_t family;
            std::string_view key, value;
        };
        const Put puts[] = {{0, "k", "value"},      {127, b127, b128},
                            {128, b128, b16384},    {200, std::string_view{"\0\x01", 2}, ""},
                            {16'384, b16384, b127}, {70'000, "key", "x"}};
        rocksdb::WriteBatch reference;
        std::string ours(kBatchHeaderSize, '\0');
        for (const Put& p : puts) {
            FamilyId family{p.family};
            if (!reference
                     .Put(&family, rocksdb::Slice{p.key.data(), p.key.size()},
                          rocksdb::Slice{p.value.data(), p.value.size()})
                     .ok())
                return false;
            append_put_record(ours, p.family, p.key, p.value);
        }
        set_record_count(ours, static_cast<uint32_t>(std::size(puts)));
        // And the library parses them back as the same puts.
        struct Reader final : rocksdb::WriteBatch::Handler {
            std::vector<std::tuple<uint32_t, std::string, std::string>> puts;
            rocksdb::Status PutCF(uint32_t family, const rocksdb::Slice& key,
                                  const rocksdb::Slice& value) override {
                puts.emplace_back(family, key.ToString(), value.ToString());
                return rocksdb::Status::OK();
            }
        } reader;
        rocksdb::WriteBatch rebuilt{std::string{ours}};
        if (reference.Data() != ours || !rebuilt.Iterate(&reader).ok() ||
            reader.puts.size() != std::size(puts))
            return false;
        for (size_t i = 0; i < std::size(puts); ++i) {
            const auto& [family, key, value] = reader.puts[i];
            if (family != puts[i].family || key != puts[i].key || value != puts[i].value)
                return false;
        }
        return true;
    }();
    return match;
}

BlockBatch encode_block_batch(const block::Block& b, const exec::Outcome& o,
                              const DocumentFamilies& families, std::string_view header_key,
                              std::span<const PutRecord> tail, bool parallel, std::string buffer) {
    const block::Header& h = *b.header;
    const size_t n = b.size();
    const size_t n_accounts = o.writes.accounts.size();
    const size_t n_users = o.writes.users.size();
    // Items: each transaction with its receipt, then the accounts, the users, and the header;
    // in runs of consecutive items, each run's records written by one task into its own buffer.
    const size_t items = n + n_accounts + n_users + 1;
    constexpr size_t kItemsPerRun = 64;
    const size_t runs = (items + kItemsPerRun - 1) / kItemsPerRun;
    std::vector<std::string> records(runs);
    std::vector<size_t> bytes(runs, 0);
    for_each_group(items, kItemsPerRun, parallel, [&](size_t begin, size_t end) {
        const size_t run = begin / kItemsPerRun;
        std::string& out = records[run];
        out.reserve(16 << 10);
        // Each document is written here first: a record gives its value's length before it.
        std::string doc;
        doc.reserve(4 << 10);
        size_t run_bytes = 0;
        const auto put = [&](uint32_t family, std::string_view key) {
            append_put_record(out, family, key, doc);
            run_bytes += key.size() + doc.size();
            doc.clear();
        };
        for (size_t i = begin; i < end; ++i) {
            if (i < n) {
                const std::string_view key = as_chars(b.tx_hashes[i].view());
                write_tx_document(doc, b.txs[i], b.tx_hashes[i], b.senders[i], h.number, b.hash, i);
                put(families.txs, key);
                write_receipt_document(doc, o.receipts[i], b.tx_hashes[i], h.number, i);
                put(families.receipts, key);
            } else if (i < n + n_accounts) {
                const auto& [address, account] = o.writes.accounts[i - n];
                write_account_document(doc, account);
                put(families.accounts, as_chars(address.view()));
            } else if (i < items - 1) {
                const auto& [name, balance] = o.writes.users[i - n - n_accounts];
                write_user_document(doc, name, balance);
                put(families.users, name);
            } else {
                write_header_document(doc, h, b.hash, n);
                put(families.headers, header_key);
            }
        }
        bytes[run] = run_bytes;
    });

    BlockBatch batch{std::move(buffer)};
    batch.records = 2 * n + n_accounts + n_users + 1 + tail.size();
    std::vector<size_t> offset(runs + 1, kBatchHeaderSize);
    for (size_t r = 0; r < runs; ++r) {
        offset[r + 1] = offset[r] + records[r].size();
        batch.bytes += bytes[r];
    }
    size_t size = offset[runs];
    for (const PutRecord& p : tail) {
        size += put_record_size(p.family, p.key, p.value);
        batch.bytes += p.key.size() + p.value.size();
    }
    // A buffer that held an earlier batch is mapped already and fills only what it grows by; one
    // too small is emptied first, so that growing it copies none of the old batch.
    if (batch.rep.capacity() < size) {
        batch.rep.clear();
        batch.rep.reserve(size);
    }
    batch.rep.resize(offset[runs]);
    std::memset(batch.rep.data(), 0, 8);  // the sequence number, which DB::Write sets
    set_record_count(batch.rep, static_cast<uint32_t>(batch.records));
    for_each_index(runs, parallel, [&](size_t r) {
        std::memcpy(batch.rep.data() + offset[r], records[r].data(), records[r].size());
    });
    // The tail (the raw block among it) goes in once, where it ends up.
    for (const PutRecord& p : tail) append_put_record(batch.rep, p.family, p.key, p.value);
    return batch;
}

}  // namespace barrel::store
