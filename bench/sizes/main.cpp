// barrel-datadir-sizes DIR: where a datadir's bytes go (docs/benchmarks.md, "Bytes per
// transfer"). Per column family: its keys, the bytes of its keys and values as stored (what barrel
// wrote), and its table files on disk (rocksdb.total-sst-files-size, after compression); then the
// datadir's other files by kind (write-ahead logs, info logs, MANIFEST, OPTIONS). A read-only
// open, which changes nothing: RocksDB directly, not the store, so that it reads any datadir.

#include <rocksdb/db.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

/// The kind of a file in a RocksDB directory, by its name.
std::string kind_of(const std::string& name) {
    if (name.ends_with(".sst")) return "table files (.sst)";
    if (name.ends_with(".log")) return "write-ahead logs (.log)";
    if (name.starts_with("LOG")) return "info logs (LOG*)";
    if (name.starts_with("MANIFEST")) return "MANIFEST";
    if (name.starts_with("OPTIONS")) return "OPTIONS";
    return "other";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: barrel-datadir-sizes DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    std::vector<std::string> names;
    rocksdb::DBOptions options;
    if (auto s = rocksdb::DB::ListColumnFamilies(options, dir, &names); !s.ok()) {
        std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
        return 1;
    }
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const auto& name : names) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions{});
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    if (auto s = rocksdb::DB::OpenForReadOnly(options, dir, descriptors, &handles, &raw); !s.ok()) {
        std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
        return 1;
    }
    std::unique_ptr<rocksdb::DB> db{raw};
    std::printf("%-14s %10s %14s %14s %12s\n", "family", "keys", "key bytes", "value bytes",
                "sst MiB");
    for (size_t i = 0; i < handles.size(); ++i) {
        uint64_t keys = 0, key_bytes = 0, value_bytes = 0, sst = 0;
        std::unique_ptr<rocksdb::Iterator> it{db->NewIterator(rocksdb::ReadOptions{}, handles[i])};
        for (it->SeekToFirst(); it->Valid(); it->Next()) {
            ++keys;
            key_bytes += it->key().size();
            value_bytes += it->value().size();
        }
        (void)db->GetIntProperty(handles[i], "rocksdb.total-sst-files-size", &sst);
        std::printf("%-14s %10llu %14llu %14llu %12.2f\n", names[i].c_str(),
                    static_cast<unsigned long long>(keys),
                    static_cast<unsigned long long>(key_bytes),
                    static_cast<unsigned long long>(value_bytes), mib(sst));
    }
    for (auto* h : handles) (void)db->DestroyColumnFamilyHandle(h);
    db.reset();
    std::map<std::string, uint64_t> by_kind;
    uint64_t total = 0;
    for (const auto& e : fs::directory_iterator{dir}) {
        if (!e.is_regular_file()) continue;
        by_kind[kind_of(e.path().filename().string())] += e.file_size();
        total += e.file_size();
    }
    std::printf("\nfiles\n");
    for (const auto& [kind, bytes] : by_kind)
        std::printf("%-26s %10.2f MiB\n", kind.c_str(), mib(bytes));
    std::printf("%-26s %10.2f MiB\n", "all", mib(total));
    return 0;
}
