// The pool's journal (barrel/pool/pool.hpp): a stream of RLP strings, appended as the pool admits
// and rewritten whole (beside it, then renamed) at a stop and a compaction.

#include <barrel/pool/pool.hpp>
#include <barrel/rlp/decode.hpp>
#include <barrel/rlp/encode.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <mutex>

namespace barrel::pool {

namespace {

std::string failure(const std::string& what, const std::string& path) {
    return "cannot " + what + " '" + path + "': " + std::strerror(errno);
}

/// Makes a rename in `file`'s directory durable: without it a crash soon after a clean stop can
/// bring back the old journal (or none) although the new one's bytes were synced.
bool sync_parent(const std::string& file) {
    const std::filesystem::path dir = std::filesystem::path{file}.parent_path();
    const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool synced = ::fsync(fd) == 0;
    ::close(fd);
    return synced;
}

/// Buffered reads of a file descriptor that remember the first error (errno), which a stream
/// would turn into an end of file.
class Reader {
public:
    explicit Reader(int fd) : m_fd{fd} {}
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;
    ~Reader() { ::close(m_fd); }

    /// Exactly `n` bytes into `out`, or false at the end of the file or on an error.
    bool read(uint8_t* out, size_t n) {
        while (n > 0) {
            if (m_begin == m_end && !fill()) return false;
            const size_t take = std::min(n, static_cast<size_t>(m_end - m_begin));
            std::memcpy(out, m_buffer.data() + m_begin, take);
            m_begin += take;
            out += take;
            n -= take;
        }
        return true;
    }
    bool at_end() { return m_begin == m_end && !fill(); }
    int error() const noexcept { return m_error; }

private:
    bool fill() {
        if (m_error != 0) return false;
        while (true) {
            const ssize_t n = ::read(m_fd, m_buffer.data(), m_buffer.size());
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) m_error = errno;
            m_begin = 0;
            m_end = n > 0 ? static_cast<size_t>(n) : 0;
            return n > 0;
        }
    }

    int m_fd;
    std::array<uint8_t, 1 << 16> m_buffer{};
    size_t m_begin{0}, m_end{0};
    int m_error{0};
};

}  // namespace

namespace {

/// The journal's bytes for `txs`: one RLP string each.
Bytes encode_all(std::span<const TxPtr> txs) {
    Bytes out;
    for (const TxPtr& t : txs) rlp::encode(out, BytesView{t->encoding});
    return out;
}

/// All of `bytes` to `fd`; false (errno set) on an error.
bool write_all(int fd, BytesView bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = EIO;
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

/// Refuses anything but a regular file at an open descriptor (a FIFO or a device would block or
/// never end): "not a regular file" as the error, the descriptor closed.
bool regular_or_close(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int e = errno;
        ::close(fd);
        errno = e;
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        errno = EINVAL;
        return false;
    }
    // Reads and writes of a regular file never wait: back to blocking mode for plain loops.
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return true;
}

std::string not_regular(const std::string& what, const std::string& path) {
    return errno == EINVAL ? "cannot " + what + " '" + path + "': not a regular file"
                           : failure(what, path);
}

}  // namespace

size_t journal_capacity(const Config& config) noexcept {
    return 2 * (config.max_pending + config.max_queued);
}

Expected<void, std::string> write_journal(const std::string& path, std::span<const TxPtr> txs,
                                          bool sync) {
    const Bytes out = encode_all(txs);
    const std::string temp = path + ".tmp";
    // Whatever is at the temporary path (a leftover, a FIFO) goes: a new file of our own.
    ::unlink(temp.c_str());
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) return unexpected(failure("write", temp));
    if (!write_all(fd, out)) {
        const std::string message = failure("write", temp);
        ::close(fd);
        ::unlink(temp.c_str());
        return unexpected(message);
    }
    if ((sync && ::fsync(fd) != 0) || ::close(fd) != 0) {
        const std::string message = failure("write", temp);
        ::unlink(temp.c_str());
        return unexpected(message);
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        const std::string message = failure("rename", temp);
        ::unlink(temp.c_str());
        return unexpected(message);
    }
    if (sync && !sync_parent(path)) return unexpected(failure("sync the directory of", path));
    return {};
}

struct JournalWriter::State {
    std::string path;
    int fd{-1};
    std::mutex mutex;
    std::condition_variable turn;
    uint64_t next_ticket{0};           ///< the ticket whose turn it is
    std::atomic<uint64_t> tickets{0};  ///< tickets taken
    std::string error;
};

uint64_t JournalWriter::take_ticket() noexcept {
    return m_state->tickets.fetch_add(1, std::memory_order_relaxed);
}

JournalWriter::JournalWriter(std::string path, int fd) : m_state{std::make_unique<State>()} {
    m_state->path = std::move(path);
    m_state->fd = fd;
}

JournalWriter::~JournalWriter() {
    if (m_state->fd >= 0) ::close(m_state->fd);
}

Expected<std::unique_ptr<JournalWriter>, std::string> JournalWriter::open(std::string path) {
    // O_NONBLOCK: a FIFO at the path without a reader fails at once instead of waiting forever.
    const int fd =
        ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) return unexpected(failure("write", path));
    if (!regular_or_close(fd)) return unexpected(not_regular("write", path));
    return std::unique_ptr<JournalWriter>{new JournalWriter{std::move(path), fd}};
}

void JournalWriter::write(uint64_t ticket, std::span<const TxPtr> txs, bool rewrite) {
    const Bytes bytes = rewrite ? Bytes{} : encode_all(txs);  // encoded before the wait
    State& st = *m_state;
    std::unique_lock lock{st.mutex};
    st.turn.wait(lock, [&] { return st.next_ticket == ticket; });
    auto remember = [&](std::string message) {
        if (st.error.empty()) st.error = std::move(message);
    };
    if (rewrite) {
        if (auto written = write_journal(st.path, txs, false); !written) {
            remember(written.error());
        } else {
            // The old descriptor is the replaced file's: append to the new one from now on.
            const int fd = ::open(st.path.c_str(), O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0 || !regular_or_close(fd)) {
                remember(not_regular("write", st.path));
            } else {
                if (st.fd >= 0) ::close(st.fd);
                st.fd = fd;
            }
        }
    } else if (st.fd >= 0) {
        const off_t end = ::lseek(st.fd, 0, SEEK_END);
        if (!write_all(st.fd, bytes)) {
            remember(failure("write", st.path));
            // A batch cut short (a full disk) would hide every later batch from the reader,
            // which stops at a damaged string: the file goes back to where the batch began.
            if (end >= 0) (void)::ftruncate(st.fd, end);
        }
    }
    ++st.next_ticket;
    st.turn.notify_all();
}

std::string JournalWriter::error() const {
    std::lock_guard lock{m_state->mutex};
    return m_state->error;
}

Expected<Journal, std::string> read_journal(const std::string& path, const Config& config) {
    // O_NONBLOCK: opening a FIFO would wait for a writer (a node deaf to SIGTERM before it
    // serves); it is refused instead, as is anything else that is not a regular file.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return Journal{};
        return unexpected(failure("read", path));
    }
    if (!regular_or_close(fd)) return unexpected(not_regular("read", path));
    Reader in{fd};
    // One string at a time, its length from its head before anything is allocated, so what is
    // read is bounded by what the pool can hold, whatever the file is (a huge one, a device):
    // at most journal_capacity strings of at most max_transaction_bytes each.
    Journal journal;
    Bytes item;
    while (!in.at_end()) {
        if (journal.transactions.size() == journal_capacity(config)) {
            journal.truncated = true;
            break;
        }
        item.resize(1);
        (void)in.read(item.data(), 1);
        const uint8_t first = item[0];
        size_t payload = 0;
        if (first >= 0xb8 && first <= 0xbf) {  // a long string: its length's bytes first
            const size_t length_bytes = first - 0xb7u;
            item.resize(1 + length_bytes);
            if (!in.read(item.data() + 1, length_bytes)) {
                journal.damaged = true;
                break;
            }
            for (size_t i = 0; i < length_bytes; ++i)
                payload = payload > (SIZE_MAX >> 8) ? SIZE_MAX : (payload << 8) | item[1 + i];
        } else if (first >= 0x80 && first <= 0xb7) {
            payload = first - 0x80u;
        } else if (first >= 0xc0) {  // a list: never written here
            journal.damaged = true;
            break;
        }
        if (payload > config.max_transaction_bytes) {  // no pool took such a transaction
            journal.damaged = true;
            break;
        }
        const size_t head = item.size();
        item.resize(head + payload);
        if (!in.read(item.data() + head, payload)) {
            journal.damaged = true;  // cut short by a crash while an old version wrote it
            break;
        }
        BytesView rest = item;
        auto one = rlp::decode_string(rest);  // the canonical-form rules
        if (!one || !rest.empty()) {
            journal.damaged = true;
            break;
        }
        journal.transactions.emplace_back(one->begin(), one->end());
    }
    if (in.error() != 0) {
        errno = in.error();
        return unexpected(failure("read", path));
    }
    return journal;
}

}  // namespace barrel::pool
