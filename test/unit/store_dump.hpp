#pragma once
// Test-only helpers for datadirs: a dump of every key and value of every column family, read
// with RocksDB directly (read-only, which takes no lock, so it works beside an open Store and
// sees exactly what is on disk), to prove that a failed operation changed nothing and that two
// ways of building a datadir give the same one. Scratch directories are in test_files.hpp.

#include "test_files.hpp"
#include <rocksdb/db.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace barrel::test {

/// Column family name → key → value.
using Dump = std::map<std::string, std::map<std::string, std::string>>;

/// Every column family of a datadir, opened with RocksDB directly.
class RawDatadir {
public:
    RawDatadir(const std::filesystem::path& dir, bool read_only) : m_dir{dir.string()} {
        rocksdb::DBOptions db_options;
        check(rocksdb::DB::ListColumnFamilies(db_options, m_dir, &names));
        std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
        for (const auto& name : names)
            descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions{});
        rocksdb::DB* raw = nullptr;
        check(read_only
                  ? rocksdb::DB::OpenForReadOnly(db_options, m_dir, descriptors, &handles, &raw)
                  : rocksdb::DB::Open(db_options, m_dir, descriptors, &handles, &raw));
        db.reset(raw);
    }
    ~RawDatadir() {
        for (auto* h : handles) (void)db->DestroyColumnFamilyHandle(h);
    }
    RawDatadir(const RawDatadir&) = delete;
    RawDatadir& operator=(const RawDatadir&) = delete;

    void check(const rocksdb::Status& s) const {
        if (!s.ok()) throw std::runtime_error(m_dir + ": " + s.ToString());
    }
    rocksdb::ColumnFamilyHandle* family(const std::string& name) const {
        for (size_t i = 0; i < names.size(); ++i)
            if (names[i] == name) return handles[i];
        throw std::runtime_error(m_dir + ": no column family " + name);
    }

    std::vector<std::string> names;
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    std::unique_ptr<rocksdb::DB> db;

private:
    std::string m_dir;
};

inline Dump dump_datadir(const std::filesystem::path& dir) {
    const RawDatadir d{dir, true};
    Dump dump;
    for (size_t i = 0; i < d.handles.size(); ++i) {
        auto& cf = dump[d.names[i]];
        std::unique_ptr<rocksdb::Iterator> it{
            d.db->NewIterator(rocksdb::ReadOptions{}, d.handles[i])};
        for (it->SeekToFirst(); it->Valid(); it->Next())
            cf.emplace(it->key().ToString(), it->value().ToString());
        d.check(it->status());
    }
    return dump;
}

/// Puts `value` under `key` in column family `family` of a closed datadir, or with nullopt
/// deletes the key: to damage a datadir the way a disk or an older barrel would leave it.
inline void write_raw(const std::filesystem::path& dir, const std::string& family,
                      const std::string& key, const std::optional<std::string>& value) {
    const RawDatadir d{dir, false};
    d.check(value ? d.db->Put(rocksdb::WriteOptions{}, d.family(family), key, *value)
                  : d.db->Delete(rocksdb::WriteOptions{}, d.family(family), key));
}

/// Empty when equal, else a few lines saying where the dumps differ (a full EXPECT_EQ of two
/// dumps would print megabytes).
inline std::string dump_diff(const Dump& a, const Dump& b) {
    std::ostringstream out;
    size_t shown = 0;
    auto note = [&](const std::string& line) {
        if (shown++ < 8) out << line << "\n";
    };
    auto hex = [](const std::string& k) {
        static const char* digits = "0123456789abcdef";
        std::string h;
        for (unsigned char c : k.substr(0, 40)) {
            h += digits[c >> 4];
            h += digits[c & 15];
        }
        return h;
    };
    for (const auto& [cf, kv] : a) {
        const auto other = b.find(cf);
        if (other == b.end()) {
            note("column family " + cf + " only in the first");
            continue;
        }
        for (const auto& [k, v] : kv) {
            const auto o = other->second.find(k);
            if (o == other->second.end())
                note(cf + ": key " + hex(k) + " only in the first");
            else if (o->second != v)
                note(cf + ": key " + hex(k) + " differs: " + v.substr(0, 200) + " vs " +
                     o->second.substr(0, 200));
        }
        for (const auto& [k, v] : other->second)
            if (kv.find(k) == kv.end()) note(cf + ": key " + hex(k) + " only in the second");
    }
    for (const auto& [cf, kv] : b)
        if (a.find(cf) == a.end()) note("column family " + cf + " only in the second");
    if (shown > 8) out << "... " << shown - 8 << " more differences\n";
    return out.str();
}

}  // namespace barrel::test
