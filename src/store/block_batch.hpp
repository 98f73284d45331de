#pragma once
/// @file
/// A block's commit as the representation rocksdb::WriteBatch(std::string&&) takes, built by
/// barrel in parallel instead of by one thread's WriteBatch::Put calls (docs/architecture.md,
/// "Stage 4"). The format is RocksDB's WAL record format (db/write_batch.cc), which the library
/// must keep readable across versions:
///
///   rep    := sequence: fixed64 (DB::Write sets it) ‖ count: fixed32 ‖ record[count]
///   record := 0x01 ‖ key ‖ value                        (a Put in the default family)
///           | 0x05 ‖ family id: varint32 ‖ key ‖ value  (a Put in another family)
///   key, value := length: varint32 ‖ bytes
///
/// Fixed-width integers are little-endian. put_records_match_rocksdb() checks against the linked
/// library that append_put_record writes what WriteBatch::Put writes; the store refuses to open
/// if it does not.

#include <barrel/block/block.hpp>
#include <barrel/exec/execute.hpp>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace barrel::store {

/// The sequence number and record count before the records.
inline constexpr size_t kBatchHeaderSize = 12;

/// Appends a Put of `value` under `key` in column family `family_id` to `records`. Key and value
/// must each be shorter than 4 GiB (WriteBatch::Put refuses longer ones).
void append_put_record(std::string& records, uint32_t family_id, std::string_view key,
                       std::string_view value);

/// The bytes append_put_record appends for these arguments.
size_t put_record_size(uint32_t family_id, std::string_view key, std::string_view value) noexcept;

/// Writes `count` into the header of `rep` (at least kBatchHeaderSize bytes).
void set_record_count(std::string& rep, uint32_t count) noexcept;

/// True if append_put_record writes, for the default family and another, the bytes this process's
/// RocksDB's WriteBatch::Put writes. Computed once.
bool put_records_match_rocksdb();

/// A column family handle that is only an id, which is all WriteBatch::Put reads of a handle: for
/// comparing append_put_record with WriteBatch::Put without a database.
class FamilyId final : public rocksdb::ColumnFamilyHandle {
public:
    explicit FamilyId(uint32_t id) : m_id{id} {}
    const std::string& GetName() const override { return m_name; }
    uint32_t GetID() const override { return m_id; }
    rocksdb::Status GetDescriptor(rocksdb::ColumnFamilyDescriptor*) override {
        return rocksdb::Status::NotSupported();
    }
    const rocksdb::Comparator* GetComparator() const override { return nullptr; }

private:
    uint32_t m_id;
    std::string m_name{"barrel-format-check"};
};

/// The column families a block's documents go to, by id.
struct DocumentFamilies {
    uint32_t txs;
    uint32_t receipts;
    uint32_t accounts;
    uint32_t users;
    uint32_t headers;
};

/// A Put that is not a document: the raw block, the hash index, the head.
struct PutRecord {
    uint32_t family;
    std::string_view key;
    std::string_view value;
};

struct BlockBatch {
    std::string rep;    ///< for rocksdb::WriteBatch(std::string&&)
    size_t records{0};  ///< Put records in rep
    size_t bytes{0};    ///< key and value bytes of all records
};

/// Every document the commit of `block` writes, as Put records encoded in parallel (or serially)
/// in runs of consecutive documents: each transaction and its receipt under the transaction hash,
/// the written accounts and users, the header under `header_key`; then the records of `tail`,
/// written straight into the representation. The block must carry its header and senders.
/// `buffer` becomes the representation: one that held an earlier batch (BlockWriteBatch::release)
/// saves mapping and zeroing megabytes per block.
BlockBatch encode_block_batch(const block::Block& block, const exec::Outcome& outcome,
                              const DocumentFamilies& families, std::string_view header_key,
                              std::span<const PutRecord> tail, bool parallel = true,
                              std::string buffer = {});

/// A WriteBatch over a representation built by encode_block_batch, which gives the
/// representation's buffer back once written, for the next block's batch.
class BlockWriteBatch final : public rocksdb::WriteBatch {
public:
    explicit BlockWriteBatch(std::string&& rep) : rocksdb::WriteBatch{std::move(rep)} {}
    /// The buffer; the batch is empty of meaning afterwards and only to be destroyed.
    std::string release() && { return std::move(rep_); }
};

}  // namespace barrel::store
