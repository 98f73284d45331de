#pragma once
/// @file
/// `COMMITTED`: the head a writer last committed, kept outside RocksDB so that an open can tell a
/// datadir RocksDB recovered to an older state (a damaged write-ahead log or MANIFEST, which
/// RocksDB's point-in-time recovery passes over silently) from one that is whole
/// (docs/architecture.md, "Store", and docs/formats.md, "Recovery"). 56 bytes, overwritten in
/// place after every commit returns: the magic "BRLCMT01", the number (8 bytes big-endian), the
/// hash, and the first 8 bytes of the keccak of those 48. It can lag the database (a crash between
/// the commit and its update) but never lead it, unless unsynced writes were lost to a power
/// loss, which is then lost data. Internal to the store.

#include <barrel/store/store.hpp>

#include <filesystem>
#include <optional>
#include <utility>

namespace barrel::store {

inline constexpr const char* kCommittedFile = "COMMITTED";
inline constexpr size_t kCommittedSize = 56;

struct Committed {
    uint64_t number{0};
    Hash hash;
};

/// The marker of `dir`: nullopt for a datadir written before it existed, or for an empty file
/// (a writer creates it before RocksDB opens, so one that then failed, or was killed, leaves it
/// empty); a corruption error if it is there but does not check out.
Expected<std::optional<Committed>, StoreError> read_committed(const std::filesystem::path& dir);

/// The open marker file of a writer.
class CommittedFile {
public:
    static Expected<CommittedFile, StoreError> open(const std::filesystem::path& dir);
    CommittedFile(CommittedFile&& other) noexcept : m_fd{std::exchange(other.m_fd, -1)} {}
    CommittedFile& operator=(CommittedFile&& other) noexcept;
    CommittedFile(const CommittedFile&) = delete;
    CommittedFile& operator=(const CommittedFile&) = delete;
    ~CommittedFile();

    /// Overwrites the marker with `head` (one pwrite of the whole record); fsyncs it with `sync`.
    Expected<void, StoreError> write(const Head& head, bool sync);

private:
    explicit CommittedFile(int fd) : m_fd{fd} {}
    int m_fd{-1};
};

}  // namespace barrel::store
