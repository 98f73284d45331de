#include <barrel/io/files.hpp>
#include <barrel/rlp/decode.hpp>

#include "io/testing.hpp"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <utility>

namespace barrel::io {

namespace {

namespace fs = std::filesystem;

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

ReplaceError write_error(const std::string& target, int error) {
    return {error, "cannot write " + in_quotes(target) + ": " + std::strerror(error)};
}

/// sync_directory of `file`'s directory, the error naming the file.
Expected<void, ReplaceError> sync_parent(const std::string& file) {
    const fs::path dir = fs::path{file}.parent_path();
    auto synced = sync_directory(dir.empty() ? "." : dir.string());
    if (!synced)
        return unexpected(ReplaceError{synced.error().code,
                                       "cannot sync the directory of " + in_quotes(file) + ": " +
                                           std::strerror(synced.error().code),
                                       true});
    return {};
}

/// The longest RLP prefix: one byte and up to eight bytes of length.
constexpr size_t kMaxPrefix = 9;
/// Reads are bounded by this much at a time, so a corrupt length allocates no more than the
/// input holds.
constexpr size_t kReadChunk = size_t{1} << 20;
/// Links followed before a target is taken for a loop (the kernel's own limit).
constexpr int kMaxLinks = 40;

/// A file opened for reading, or why not (a directory opens, and fails only on its first read).
Expected<std::unique_ptr<std::ifstream>, FileError> open_for_reading(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return unexpected(FileError{std::strerror(EISDIR), true});
    auto f = std::make_unique<std::ifstream>();
    f->open(path, std::ios::binary);
    if (!*f) return unexpected(FileError{std::strerror(errno), false});
    return f;
}

/// Appends up to n bytes of `in` to `out`, growing `out` only by what arrived; the count read.
size_t append_from(std::istream& in, Bytes& out, size_t n) {
    size_t total = 0;
    while (total < n) {
        const size_t want = std::min(n - total, kReadChunk);
        const size_t old = out.size();
        out.resize(old + want);
        in.read(reinterpret_cast<char*>(out.data() + old), static_cast<std::streamsize>(want));
        const auto got = static_cast<size_t>(in.gcount());
        out.resize(old + got);
        total += got;
        if (got < want) break;
    }
    return total;
}

Expected<Bytes, FileError> read_bounded(std::istream& in, size_t limit) {
    Bytes bytes;
    append_from(in, bytes, limit + 1);  // one byte past the limit tells "more" from "exactly"
    if (in.bad()) return unexpected(FileError{std::strerror(errno ? errno : EIO)});
    if (bytes.size() > limit) return unexpected(FileError{over_limit(limit), false, true});
    return bytes;
}

// ---- Where an output goes --------------------------------------------------------------------

/// How an output target is written, once its links are followed.
struct Resolved {
    fs::path file;       ///< the final target: the file to replace, or to create if none
    bool direct{false};  ///< not a regular file (or a /proc/PID/fd link): written in place
    int own_fd{-1};      ///< /proc/self/fd/N (or /dev/stdout): this process's descriptor N
};

/// Whether `dir` (a canonical path) is /proc/PID/fd or /proc/PID/task/TID/fd, whose entries are
/// links to what a process has open: reopened rather than followed, since what they name
/// ("pipe:[123]", a file the shell redirected to) is not a path to replace.
bool is_fd_directory(const fs::path& dir) {
    const auto first = dir.begin();
    return first != dir.end() && std::next(first) != dir.end() &&
           std::next(first)->string() == "proc" && dir.filename() == "fd";
}

/// N of a /proc/self/fd/N entry, if `name` is one.
std::optional<int> descriptor_number(const std::string& name) {
    constexpr size_t kMaxDigits = 9;
    if (name.empty() || name.size() > kMaxDigits ||
        !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return std::stoi(name);
}

/// Follows `target`'s links to the file a write must replace, or finds it must be written in
/// place. A dangling link leads to the file it names, which the write creates.
Expected<Resolved, std::string> resolve(const std::string& target) {
    fs::path p{target};
    for (int links = 0; links <= kMaxLinks; ++links) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) {
            if (errno == ENOENT) return Resolved{p};  // a new file
            return unexpected("cannot write " + in_quotes(target) + ": " + std::strerror(errno));
        }
        if (!S_ISLNK(st.st_mode)) return Resolved{p, !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)};
        std::error_code ec;
        const fs::path dir = fs::canonical(p.parent_path().empty() ? "." : p.parent_path(), ec);
        if (!ec && is_fd_directory(dir)) {
            // Ours is written through its descriptor, which keeps the shell's offset and
            // O_APPEND (`>>`); another process's is reopened.
            Resolved r{p, true};
            if (dir == fs::path{"/proc/" + std::to_string(::getpid()) + "/fd"})
                r.own_fd = descriptor_number(p.filename().string()).value_or(-1);
            return r;
        }
        std::string link(static_cast<size_t>(PATH_MAX), '\0');
        const ssize_t n = ::readlink(p.c_str(), link.data(), link.size());
        if (n < 0)
            return unexpected("cannot write " + in_quotes(target) + ": " + std::strerror(errno));
        link.resize(static_cast<size_t>(n));
        p = fs::path{link}.is_absolute() ? fs::path{link} : p.parent_path() / link;
    }
    return unexpected("cannot write " + in_quotes(target) + ": " + std::strerror(ELOOP));
}

bool path_exists(const fs::path& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0;
}

/// The barrel datadir that holds `file` (at any depth), if any. A datadir is a RocksDB
/// directory: CURRENT names its manifest and LOCK is created by every open, so the two together
/// are there from the first `init` on, while no file a user writes by hand has both beside it.
std::optional<fs::path> enclosing_datadir(const fs::path& file) {
    std::error_code ec;
    fs::path dir = fs::weakly_canonical(fs::absolute(file, ec).parent_path(), ec);
    if (ec) return std::nullopt;
    for (;;) {
        if (path_exists(dir / "CURRENT") && path_exists(dir / "LOCK")) return dir;
        if (dir == dir.parent_path()) return std::nullopt;
        dir = dir.parent_path();
    }
}

int open_direct(const std::string& target, const Resolved& r) {
    if (r.own_fd >= 0) return ::fcntl(r.own_fd, F_DUPFD_CLOEXEC, 0);
    // A regular file behind another process's descriptor is rewritten from its start, as a
    // shell's `>` would; a device or fifo has nothing to truncate.
    std::error_code ec;
    const bool regular = fs::is_regular_file(target, ec);
    return ::open(target.c_str(), O_WRONLY | O_CLOEXEC | (regular ? O_TRUNC : 0));
}

}  // namespace

std::string over_limit(size_t limit) {
    return "larger than the limit of " + std::to_string(limit) + " bytes";
}

// ---- read_file -------------------------------------------------------------------------------

Expected<Bytes, FileError> read_file(const std::string& path, size_t limit) {
    auto f = open_for_reading(path);
    if (!f) return unexpected(f.error());
    std::error_code ec;
    // A regular file's size is known: refuse it without reading. Anything else (a pipe,
    // /dev/zero) reports no size and is read up to the limit.
    if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) > limit && !ec)
        return unexpected(FileError{over_limit(limit), false, true});
    return read_bounded(**f, limit);
}

Expected<Bytes, FileError> read_stream(std::istream& in, size_t limit) {
    return read_bounded(in, limit);
}

// ---- FileReplacement -------------------------------------------------------------------------

FileReplacement::FileReplacement(std::string target, std::string temp, int fd) noexcept
    : m_target{std::move(target)}, m_temp{std::move(temp)}, m_fd{fd} {}

FileReplacement::FileReplacement(FileReplacement&& other) noexcept
    : m_target{std::move(other.m_target)},
      m_temp{std::move(other.m_temp)},
      m_fd{std::exchange(other.m_fd, -1)},
      m_done{std::exchange(other.m_done, true)} {}

FileReplacement::~FileReplacement() {
    if (m_fd >= 0) ::close(m_fd);
    if (!m_done) ::unlink(m_temp.c_str());
}

Expected<FileReplacement, ReplaceError> FileReplacement::create(const std::string& target) {
    // A directory would only be found at the rename, after all the work.
    std::error_code ec;
    if (fs::is_directory(target, ec))
        return unexpected(ReplaceError{EISDIR, in_quotes(target) + " is a directory"});
    const fs::path file{target};
    const std::string base = (file.parent_path() / ("." + file.filename().string())).string();
    std::string temp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        temp = base + ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(attempt);
        fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) return unexpected(write_error(target, errno));
    return FileReplacement{target, std::move(temp), fd};
}

ReplaceError FileReplacement::fail(int error) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    if (!m_done) ::unlink(m_temp.c_str());
    m_done = true;
    return write_error(m_target, error);
}

Expected<void, ReplaceError> FileReplacement::write(BytesView bytes) {
    if (m_fd < 0) return unexpected(fail(EBADF));
    while (!bytes.empty()) {
        const ssize_t n = ::write(m_fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return unexpected(fail(n == 0 ? EIO : errno));
        bytes = bytes.subspan(static_cast<size_t>(n));
    }
    return {};
}

Expected<void, ReplaceError> FileReplacement::finish(bool sync) {
    if (m_fd < 0) return m_done ? unexpected(fail(EBADF)) : Expected<void, ReplaceError>{};
    const bool synced = !sync || ::fsync(m_fd) == 0;
    const int sync_errno = errno;
    const bool closed = ::close(m_fd) == 0;
    const int close_errno = errno;
    m_fd = -1;
    if (!synced) return unexpected(fail(sync_errno));
    if (!closed) return unexpected(fail(close_errno));
    return {};
}

Expected<void, ReplaceError> FileReplacement::commit(bool sync) {
    if (auto finished = finish(sync); !finished) return finished;
    if (m_done) return unexpected(fail(EBADF));  // committed already
    if (::rename(m_temp.c_str(), m_target.c_str()) != 0) return unexpected(fail(errno));
    m_done = true;
    if (!sync) return {};
    return sync_parent(m_target);
}

Expected<void, ReplaceError> replace_file(const std::string& target, BytesView bytes, bool sync) {
    auto file = FileReplacement::create(target);
    if (!file) return unexpected(file.error());
    if (auto written = file->write(bytes); !written) return written;
    return file->commit(sync);
}

Expected<void, ReplaceError> rename_durably(const std::string& from, const std::string& to) {
    if (::rename(from.c_str(), to.c_str()) != 0) {
        const int e = errno;
        return unexpected(ReplaceError{e, "cannot move " + in_quotes(from) + " to " +
                                              in_quotes(to) + ": " + std::strerror(e)});
    }
    return sync_parent(to);
}

Expected<void, ReplaceError> sync_directory(const std::string& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const bool synced = fd >= 0 && ::fsync(fd) == 0;
    const int e = errno;
    if (fd >= 0) ::close(fd);
    if (!synced)
        return unexpected(ReplaceError{
            e, "cannot sync the directory " + in_quotes(dir) + ": " + std::strerror(e)});
    testing::detail::count_directory_sync();
    return {};
}

// ---- AtomicFile ------------------------------------------------------------------------------

Expected<AtomicFile, std::string> AtomicFile::create(const std::string& target,
                                                     std::ostream& standard_output) {
    if (target.empty()) return unexpected(std::string{"empty path"});
    if (target == "-") {
        AtomicFile out{target, -1, &standard_output};
        out.m_to_stdout = true;
        return out;
    }
    std::error_code ec;
    if (fs::is_directory(target, ec)) return unexpected(in_quotes(target) + " is a directory");
    const auto resolved = resolve(target);
    if (!resolved) return unexpected(resolved.error());
    if (const auto datadir = enclosing_datadir(resolved->file))
        return unexpected(in_quotes(target) + " is inside the datadir " +
                          in_quotes(datadir->string()));
    if (resolved->direct) {
        const int fd = open_direct(target, *resolved);
        if (fd < 0)
            return unexpected("cannot write " + in_quotes(target) + ": " + std::strerror(errno));
        AtomicFile out{target, fd, nullptr};
        out.m_to_stdout = resolved->own_fd == STDOUT_FILENO;
        return out;
    }
    // Over the final target of the links, beside which the temporary file sits.
    auto replacement = FileReplacement::create(resolved->file.string());
    if (!replacement)
        return unexpected("cannot write " + in_quotes(target) + ": " +
                          std::strerror(replacement.error().code));
    AtomicFile out{target, -1, nullptr};
    out.m_replacement.emplace(std::move(replacement).value());
    return out;
}

AtomicFile::AtomicFile(std::string target, int fd, std::ostream* stream) noexcept
    : m_target{std::move(target)}, m_fd{fd}, m_stream{stream} {}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : m_target{std::move(other.m_target)},
      m_replacement{std::move(other.m_replacement)},
      m_fd{std::exchange(other.m_fd, -1)},
      m_stream{std::exchange(other.m_stream, nullptr)},
      m_to_stdout{other.m_to_stdout} {
    other.m_replacement.reset();
}

AtomicFile::~AtomicFile() {
    if (m_fd >= 0) ::close(m_fd);
}

const std::string& AtomicFile::temporary() const noexcept {
    static const std::string none;
    return m_replacement ? m_replacement->temporary() : none;
}

void AtomicFile::fail(int error) {
    // The temporary file goes now, not at destruction: a caller that exits without unwinding
    // (std::exit) must not leave it behind.
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    m_replacement.reset();
    const std::string what = m_stream ? std::string{"standard output"} : in_quotes(m_target);
    throw WriteError("cannot write " + what + ": " + std::strerror(error));
}

void AtomicFile::write(BytesView bytes) {
    if (m_stream) {
        m_stream->write(reinterpret_cast<const char*>(bytes.data()),
                        static_cast<std::streamsize>(bytes.size()));
        if (!*m_stream) fail(errno ? errno : EIO);
        return;
    }
    if (m_replacement) {
        if (auto written = m_replacement->write(bytes); !written) fail(written.error().code);
        return;
    }
    if (m_fd < 0) fail(EBADF);
    while (!bytes.empty()) {
        const ssize_t n = ::write(m_fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail(n == 0 ? EIO : errno);
        bytes = bytes.subspan(static_cast<size_t>(n));
    }
}

void AtomicFile::finish() {
    if (m_stream) {
        if (!m_stream->flush()) fail(errno ? errno : EIO);
        return;
    }
    if (m_replacement) {
        if (auto finished = m_replacement->finish(); !finished) fail(finished.error().code);
        return;
    }
    // A pipe or a terminal cannot be synced (EINVAL), nor need be: nothing is renamed over it.
    if (m_fd >= 0 && ::close(std::exchange(m_fd, -1)) != 0) fail(errno);
}

void AtomicFile::commit() {
    finish();
    if (m_replacement) {
        if (auto committed = m_replacement->commit(); !committed) fail(committed.error().code);
        m_replacement.reset();
    }
}

// ---- ChainReader -----------------------------------------------------------------------------

Expected<ChainReader, FileError> ChainReader::open(const std::string& path,
                                                   size_t max_block_bytes) {
    auto f = open_for_reading(path);
    if (!f) return unexpected(f.error());
    return ChainReader{std::move(*f), path, max_block_bytes};
}

ChainReader::ChainReader(std::unique_ptr<std::istream> owned, std::string path,
                         size_t max_block_bytes) noexcept
    : m_owned{std::move(owned)},
      m_in{m_owned.get()},
      m_path{std::move(path)},
      m_max_block_bytes{max_block_bytes} {}

bool ChainReader::read_up_to(Bytes& out, size_t n) {
    const size_t got = append_from(*m_in, out, n);
    if (m_in->bad()) {
        m_read_errno = errno ? errno : EIO;
        return false;
    }
    return got == n;
}

std::optional<ChainReadError> ChainReader::read_error() const {
    if (m_read_errno == 0) return std::nullopt;
    return ChainReadError{std::nullopt,
                          "cannot read " + in_quotes(m_path) + ": " + std::strerror(m_read_errno)};
}

Expected<std::optional<Bytes>, ChainReadError> ChainReader::next() {
    if (m_ended) return std::optional<Bytes>{};
    Bytes block = std::move(m_ahead);
    m_ahead.clear();
    if (block.size() < kMaxPrefix) read_up_to(block, kMaxPrefix - block.size());
    if (auto e = read_error()) return unexpected(std::move(*e));
    if (block.empty()) return std::optional<Bytes>{};  // the end, at a block boundary
    const size_t index = m_index++;

    const auto length = rlp::item_length(block);
    if (length && *length > m_max_block_bytes)
        return unexpected(ChainReadError{index, over_limit(m_max_block_bytes)});
    if (!length || block[0] < 0xc0) {
        // Not a block: the last item, for the decoder to name what is wrong. An RLP string (a
        // transaction list inside one) is kept whole, with a bounded look past it, so that
        // trailing bytes are seen; anything else needs only its first bytes.
        m_ended = true;
        const size_t want = (length ? static_cast<size_t>(*length) : 0) + kUndelimitedPeekBytes;
        if (block.size() < want) read_up_to(block, want - block.size());
        if (auto e = read_error()) return unexpected(std::move(*e));
        return std::optional<Bytes>{std::move(block)};
    }
    if (*length < block.size()) {
        m_ahead.assign(block.begin() + static_cast<std::ptrdiff_t>(*length), block.end());
        block.resize(static_cast<size_t>(*length));
        return std::optional<Bytes>{std::move(block)};
    }
    read_up_to(block, static_cast<size_t>(*length) - block.size());  // short: handed on as it is
    if (auto e = read_error()) return unexpected(std::move(*e));
    return std::optional<Bytes>{std::move(block)};
}

}  // namespace barrel::io
