#include "block_batch.hpp"

#include "core/parallel.hpp"
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

namespace {

/// encode_block_batch's items: each transaction with its receipt, then the accounts, the users,
/// and the header; in runs of consecutive items, each run's records written by one task into its
/// own buffer.
constexpr size_t kItemsPerRun = 64;

/// Writes the records of one run of a block's items.
class RunWriter {
public:
    RunWriter(const block::Block& b, const exec::Outcome& o, const DocumentFamilies& families,
              std::string_view header_key, std::string& out)
        : m_b{b},
          m_o{o},
          m_families{families},
          m_header_key{header_key},
          m_out{out},
          m_accounts_end{b.size() + o.writes.accounts.size()},
          m_users_end{m_accounts_end + o.writes.users.size()} {
        m_out.reserve(16 << 10);
        m_doc.reserve(4 << 10);
    }

    /// Appends item i's records.
    void write(size_t i) {
        const block::Header& h = *m_b.header;
        if (i < m_b.size()) {
            const std::string_view key = as_chars(m_b.tx_hashes[i].view());
            write_tx_document(m_doc, m_b.txs[i], m_b.tx_hashes[i], m_b.senders[i], h.number,
                              m_b.hash, i);
            put(m_families.txs, key);
            write_receipt_document(m_doc, m_o.receipts[i], m_b.tx_hashes[i], h.number, i);
            put(m_families.receipts, key);
        } else if (i < m_accounts_end) {
            const auto& [address, account] = m_o.writes.accounts[i - m_b.size()];
            write_account_document(m_doc, account);
            put(m_families.accounts, as_chars(address.view()));
        } else if (i < m_users_end) {
            const auto& [name, balance] = m_o.writes.users[i - m_accounts_end];
            write_user_document(m_doc, name, balance);
            put(m_families.users, name);
        } else {
            write_header_document(m_doc, h, m_b.hash, m_b.size());
            put(m_families.headers, m_header_key);
        }
    }
    /// Key and value bytes of the records written.
    size_t bytes() const noexcept { return m_bytes; }

private:
    // Each document is written to m_doc first: a record gives its value's length before it.
    void put(uint32_t family, std::string_view key) {
        append_put_record(m_out, family, key, m_doc);
        m_bytes += key.size() + m_doc.size();
        m_doc.clear();
    }

    const block::Block& m_b;
    const exec::Outcome& m_o;
    const DocumentFamilies& m_families;
    std::string_view m_header_key;
    std::string& m_out;
    const size_t m_accounts_end;  ///< items [size, m_accounts_end) are the accounts
    const size_t m_users_end;     ///< then the users; the header is last
    std::string m_doc;
    size_t m_bytes{0};
};

/// Each run's records, and their key and value bytes.
struct Runs {
    std::vector<std::string> records;
    std::vector<size_t> bytes;
};

Runs encode_runs(const block::Block& b, const exec::Outcome& o, const DocumentFamilies& families,
                 std::string_view header_key, size_t items, bool parallel) {
    const size_t runs = (items + kItemsPerRun - 1) / kItemsPerRun;
    Runs out{std::vector<std::string>(runs), std::vector<size_t>(runs, 0)};
    for_each_group(items, kItemsPerRun, parallel, [&](size_t begin, size_t end) {
        const size_t run = begin / kItemsPerRun;
        RunWriter writer{b, o, families, header_key, out.records[run]};
        for (size_t i = begin; i < end; ++i) writer.write(i);
        out.bytes[run] = writer.bytes();
    });
    return out;
}

/// The runs' records copied in parallel into the batch (`records` counts them and the tail's),
/// then the tail (the raw block among it) appended once, where it ends up.
void assemble(BlockBatch& batch, const Runs& runs, std::span<const PutRecord> tail, bool parallel) {
    const size_t n_runs = runs.records.size();
    std::vector<size_t> offset(n_runs + 1, kBatchHeaderSize);
    for (size_t r = 0; r < n_runs; ++r) {
        offset[r + 1] = offset[r] + runs.records[r].size();
        batch.bytes += runs.bytes[r];
    }
    size_t size = offset[n_runs];
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
    batch.rep.resize(offset[n_runs]);
    std::memset(batch.rep.data(), 0, 8);  // the sequence number, which DB::Write sets
    set_record_count(batch.rep, static_cast<uint32_t>(batch.records));
    for_each_index(n_runs, parallel, [&](size_t r) {
        std::memcpy(batch.rep.data() + offset[r], runs.records[r].data(), runs.records[r].size());
    });
    for (const PutRecord& p : tail) append_put_record(batch.rep, p.family, p.key, p.value);
}

}  // namespace

BlockBatch encode_block_batch(const block::Block& b, const exec::Outcome& o,
                              const DocumentFamilies& families, std::string_view header_key,
                              std::span<const PutRecord> tail, bool parallel, std::string buffer) {
    const size_t n = b.size();
    const size_t n_accounts = o.writes.accounts.size();
    const size_t n_users = o.writes.users.size();
    const Runs runs =
        encode_runs(b, o, families, header_key, n + n_accounts + n_users + 1, parallel);
    BlockBatch batch{std::move(buffer)};
    batch.records = 2 * n + n_accounts + n_users + 1 + tail.size();
    assemble(batch, runs, tail, parallel);
    return batch;
}

}  // namespace barrel::store
