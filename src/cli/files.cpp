#include <barrel/cli/files.hpp>
#include <barrel/rlp/decode.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace barrel::cli {

namespace {

namespace fs = std::filesystem;

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

/// The longest RLP prefix: one byte and up to eight bytes of length.
constexpr size_t kMaxPrefix = 9;
/// Reads of a block are bounded by this much at a time, so a corrupt length allocates no more
/// than the file holds.
constexpr size_t kReadChunk = size_t{1} << 20;

/// A file opened for reading, or why not (a directory opens, and fails only on its first read).
Expected<std::unique_ptr<std::ifstream>, FileError> open_for_reading(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return unexpected(FileError{std::strerror(EISDIR), true});
    auto f = std::make_unique<std::ifstream>();
    f->open(path, std::ios::binary);
    if (!*f) return unexpected(FileError{std::strerror(errno), false});
    return f;
}

}  // namespace

// ---- read_file -------------------------------------------------------------------------------

Expected<Bytes, FileError> read_file(const std::string& path) {
    auto f = open_for_reading(path);
    if (!f) return unexpected(f.error());
    std::ifstream& in = **f;
    Bytes bytes;
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (!ec) bytes.reserve(static_cast<size_t>(size));
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        const auto n = static_cast<size_t>(in.gcount());
        bytes.insert(bytes.end(), reinterpret_cast<const uint8_t*>(buf),
                     reinterpret_cast<const uint8_t*>(buf) + n);
        if (n < sizeof buf) break;
    }
    if (in.bad()) return unexpected(FileError{std::strerror(errno), false});
    return bytes;
}

// ---- AtomicFile ------------------------------------------------------------------------------

Expected<AtomicFile, std::string> AtomicFile::create(const std::string& target) {
    if (target.empty()) return unexpected(std::string{"empty path"});
    std::error_code ec;
    if (fs::is_directory(target, ec)) return unexpected(in_quotes(target) + " is a directory");
    const fs::path path{target};
    const std::string base = (path.parent_path() / ("." + path.filename().string())).string();
    std::string temp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        temp = base + ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(attempt);
        fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0)
        return unexpected("cannot write " + in_quotes(target) + ": " + std::strerror(errno));
    return AtomicFile{target, std::move(temp), fd};
}

AtomicFile::AtomicFile(std::string target, std::string temp, int fd) noexcept
    : m_target{std::move(target)}, m_temp{std::move(temp)}, m_fd{fd} {}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : m_target{std::move(other.m_target)},
      m_temp{std::move(other.m_temp)},
      m_fd{std::exchange(other.m_fd, -1)},
      m_committed{std::exchange(other.m_committed, true)} {}

AtomicFile::~AtomicFile() {
    if (m_fd >= 0) ::close(m_fd);
    if (!m_committed) ::unlink(m_temp.c_str());
}

void AtomicFile::write(BytesView bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(m_fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw std::runtime_error("cannot write " + in_quotes(m_temp) + ": " +
                                     std::strerror(errno));
        bytes = bytes.subspan(static_cast<size_t>(n));
    }
}

void AtomicFile::finish() {
    if (m_fd < 0) return;
    const bool synced = ::fsync(m_fd) == 0;
    const int saved = errno;
    const bool closed = ::close(m_fd) == 0;
    m_fd = -1;
    if (!synced || !closed)
        throw std::runtime_error("cannot write " + in_quotes(m_temp) + ": " +
                                 std::strerror(synced ? errno : saved));
}

void AtomicFile::commit() {
    finish();
    if (::rename(m_temp.c_str(), m_target.c_str()) != 0)
        throw std::runtime_error("cannot rename " + in_quotes(m_temp) + " to " +
                                 in_quotes(m_target) + ": " + std::strerror(errno));
    m_committed = true;
}

// ---- ChainReader -----------------------------------------------------------------------------

Expected<ChainReader, FileError> ChainReader::open(const std::string& path) {
    auto f = open_for_reading(path);
    if (!f) return unexpected(f.error());
    return ChainReader{std::move(*f), path};
}

ChainReader::ChainReader(std::unique_ptr<std::istream> owned, std::string path) noexcept
    : m_owned{std::move(owned)}, m_in{m_owned.get()}, m_path{std::move(path)} {}

bool ChainReader::read_up_to(Bytes& out, size_t n) {
    const size_t old = out.size();
    out.resize(old + n);
    m_in->read(reinterpret_cast<char*>(out.data() + old), static_cast<std::streamsize>(n));
    const auto got = static_cast<size_t>(m_in->gcount());
    out.resize(old + got);
    if (m_in->bad())
        throw std::runtime_error("cannot read " + in_quotes(m_path) + ": " + std::strerror(errno));
    return got == n;
}

std::optional<Bytes> ChainReader::next() {
    Bytes block = std::move(m_ahead);
    m_ahead.clear();
    if (block.size() < kMaxPrefix) read_up_to(block, kMaxPrefix - block.size());
    if (block.empty()) return std::nullopt;  // the end, at a block boundary

    const auto length = rlp::item_length(block);
    if (!length || block[0] < 0xc0) {
        // Not a block: the rest of the input, for the decoder to name what is wrong.
        while (read_up_to(block, kReadChunk)) {
        }
        return block;
    }
    if (*length < block.size()) {
        m_ahead.assign(block.begin() + static_cast<std::ptrdiff_t>(*length), block.end());
        block.resize(static_cast<size_t>(*length));
        return block;
    }
    while (block.size() < *length) {
        const auto want =
            static_cast<size_t>(std::min<uint64_t>(*length - block.size(), kReadChunk));
        if (!read_up_to(block, want)) break;  // truncated: handed on as it is
    }
    return block;
}

}  // namespace barrel::cli
