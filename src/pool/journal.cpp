// The pool's journal (barrel/pool/pool.hpp): a stream of RLP strings, appended as the pool admits
// and rewritten whole (beside it, then renamed) at a stop and a compaction.

#include <barrel/io/files.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/rlp/decode.hpp>
#include <barrel/rlp/encode.hpp>
#include <barrel/rlp/stream.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace barrel::pool {

namespace {

std::string failure(const std::string& what, const std::string& path) {
    return "cannot " + what + " '" + path + "': " + std::strerror(errno);
}

/// Closes a descriptor at scope exit.
struct ClosedAtExit {
    explicit ClosedAtExit(int descriptor) : fd{descriptor} {}
    ClosedAtExit(const ClosedAtExit&) = delete;
    ClosedAtExit& operator=(const ClosedAtExit&) = delete;
    ~ClosedAtExit() { ::close(fd); }
    int fd;
};

/// read(2) of `fd` as a stream reader's source: errno on an error, EINTR retried.
rlp::ReadSome read_some(int fd) {
    return [fd](std::span<uint8_t> out) -> Expected<size_t, int> {
        while (true) {
            const ssize_t n = ::read(fd, out.data(), out.size());
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return unexpected(errno);
            return static_cast<size_t>(n);
        }
    };
}

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
    auto written = io::replace_file(path, encode_all(txs), sync);
    if (!written) return unexpected(std::move(written.error().message));
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
    const ClosedAtExit closed{fd};
    // One string at a time, its length from its prefix before anything is allocated, so what is
    // read is bounded by what the pool can hold, whatever the file is (a huge one, a device): at
    // most journal_capacity strings of at most max_transaction_bytes each.
    constexpr size_t kMaxPrefix = 9;
    rlp::StreamReader in{read_some(fd), config.max_transaction_bytes + kMaxPrefix};
    Journal journal;
    while (true) {
        auto item = in.next();
        if (!item && item.error().code == rlp::StreamErrorCode::read_error) {
            errno = item.error().read_errno;
            return unexpected(failure("read", path));
        }
        if (item && !*item) break;  // the end
        if (journal.transactions.size() == journal_capacity(config)) {
            journal.truncated = true;  // more is there, whatever it is
            break;
        }
        if (!item) {
            // Cut short by a crash while an old version wrote it, or not a journal a pool wrote
            // (no pool took a transaction over max_transaction_bytes).
            journal.damaged = true;
            break;
        }
        BytesView rest = **item;
        auto one = rlp::decode_string(rest);  // the canonical-form rules; a list is never written
        if (!one || !rest.empty() || one->size() > config.max_transaction_bytes) {
            journal.damaged = true;
            break;
        }
        journal.transactions.emplace_back(one->begin(), one->end());
    }
    return journal;
}

}  // namespace barrel::pool
