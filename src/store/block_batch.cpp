#include "block_batch.hpp"

#include <rocksdb/write_batch.h>

#include <cassert>
#include <cstdint>
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

void append_put_record(std::string& records, uint32_t family_id, std::string_view key, std::string_view value) {
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
    return 1 + (family_id == 0 ? 0 : varint32_size(family_id)) + varint32_size(static_cast<uint32_t>(key.size())) +
           key.size() + varint32_size(static_cast<uint32_t>(value.size())) + value.size();
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
        const Put puts[] = {{0, "k", "value"},      {127, b127, b128},      {128, b128, b16384},
                            {200, std::string_view{"\0\x01", 2}, ""}, {16'384, b16384, b127}, {70'000, "key", "x"}};
        rocksdb::WriteBatch reference;
        std::string ours(kBatchHeaderSize, '\0');
        for (const Put& p : puts) {
            FamilyId family{p.family};
            if (!reference.Put(&family, rocksdb::Slice{p.key.data(), p.key.size()},
                               rocksdb::Slice{p.value.data(), p.value.size()})
                     .ok())
                return false;
            append_put_record(ours, p.family, p.key, p.value);
        }
        set_record_count(ours, static_cast<uint32_t>(std::size(puts)));
        // And the library parses them back as the same puts.
        struct Reader final : rocksdb::WriteBatch::Handler {
            std::vector<std::tuple<uint32_t, std::string, std::string>> puts;
            rocksdb::Status PutCF(uint32_t family, const rocksdb::Slice& key, const rocksdb::Slice& value) override {
                puts.emplace_back(family, key.ToString(), value.ToString());
                return rocksdb::Status::OK();
            }
        } reader;
        rocksdb::WriteBatch rebuilt{std::string{ours}};
        if (reference.Data() != ours || !rebuilt.Iterate(&reader).ok() || reader.puts.size() != std::size(puts))
            return false;
        for (size_t i = 0; i < std::size(puts); ++i) {
            const auto& [family, key, value] = reader.puts[i];
            if (family != puts[i].family || key != puts[i].key || value != puts[i].value) return false;
        }
        return true;
    }();
    return match;
}

}  // namespace barrel::store
