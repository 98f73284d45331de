#include "committed.hpp"

#include <barrel/core/keccak.hpp>

#include "errors.hpp"
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

namespace barrel::store {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMagic = "BRLCMT01";

std::array<uint8_t, kCommittedSize> encode(const Committed& c) {
    std::array<uint8_t, kCommittedSize> r{};
    std::memcpy(r.data(), kMagic.data(), 8);
    for (size_t i = 0; i < 8; ++i) r[8 + i] = static_cast<uint8_t>(c.number >> (56 - 8 * i));
    std::memcpy(r.data() + 16, c.hash.data(), 32);
    const Hash sum = keccak256(BytesView{r.data(), 48});
    std::memcpy(r.data() + 48, sum.data(), 8);
    return r;
}

std::string errno_text(const fs::path& file) { return file.string() + ": " + std::strerror(errno); }

}  // namespace

Expected<std::optional<Committed>, StoreError> read_committed(const fs::path& dir) {
    const fs::path file = dir / kCommittedFile;
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return std::optional<Committed>{};
        return fail(StoreErrorCode::io, "cannot read " + errno_text(file));
    }
    std::array<uint8_t, kCommittedSize + 1> bytes{};
    const ssize_t n = ::pread(fd, bytes.data(), bytes.size(), 0);
    const int read_errno = errno;
    ::close(fd);
    if (n < 0) {
        errno = read_errno;
        return fail(StoreErrorCode::io, "cannot read " + errno_text(file));
    }
    // Empty: a writer created it and stopped before its first write (committed.hpp).
    if (n == 0) return std::optional<Committed>{};
    Committed c;
    if (static_cast<size_t>(n) == kCommittedSize) {
        for (size_t i = 0; i < 8; ++i) c.number = (c.number << 8) | bytes[8 + i];
        std::memcpy(c.hash.data(), bytes.data() + 16, 32);
        if (std::memcmp(encode(c).data(), bytes.data(), kCommittedSize) == 0)
            return std::optional<Committed>{c};
    }
    return fail(StoreErrorCode::corruption,
                "datadir " + dir.string() + " is damaged: its " + kCommittedFile +
                    " record does not check out; nothing was changed; `barrel-node recover "
                    "--datadir " +
                    dir.string() + "` rewrites it from what the datadir holds");
}

Expected<CommittedFile, StoreError> CommittedFile::open(const fs::path& dir) {
    const fs::path file = dir / kCommittedFile;
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return fail(StoreErrorCode::io, "cannot write " + errno_text(file));
    return CommittedFile{fd};
}

CommittedFile& CommittedFile::operator=(CommittedFile&& other) noexcept {
    if (this != &other) {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = std::exchange(other.m_fd, -1);
    }
    return *this;
}

CommittedFile::~CommittedFile() {
    if (m_fd >= 0) ::close(m_fd);
}

Expected<void, StoreError> CommittedFile::write(const Head& head, bool sync) {
    const auto record = encode({head.number, head.hash});
    const ssize_t n = ::pwrite(m_fd, record.data(), record.size(), 0);
    if (n != static_cast<ssize_t>(record.size())) {
        if (n >= 0) errno = ENOSPC;  // a short write of 56 bytes: the disk is full
        return fail(StoreErrorCode::io,
                    "writing the committed head: " + std::string{std::strerror(errno)});
    }
    if (sync && ::fdatasync(m_fd) != 0)
        return fail(StoreErrorCode::io,
                    "syncing the committed head: " + std::string{std::strerror(errno)});
    return {};
}

}  // namespace barrel::store
