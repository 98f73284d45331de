// The pool's journal (barrel/pool/pool.hpp): a stream of RLP strings, written whole or not at all.

#include <barrel/pool/pool.hpp>
#include <barrel/rlp/decode.hpp>
#include <barrel/rlp/encode.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>

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

Expected<void, std::string> write_journal(const std::string& path, std::span<const TxPtr> txs) {
    Bytes out;
    for (const TxPtr& t : txs) rlp::encode(out, BytesView{t->encoding});
    const std::string temp = path + ".tmp";
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return unexpected(failure("write", temp));
    size_t done = 0;
    while (done < out.size()) {
        const ssize_t n = ::write(fd, out.data() + done, out.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const std::string message = failure("write", temp);
            ::close(fd);
            ::unlink(temp.c_str());
            return unexpected(message);
        }
        done += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const std::string message = failure("write", temp);
        ::unlink(temp.c_str());
        return unexpected(message);
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        const std::string message = failure("rename", temp);
        ::unlink(temp.c_str());
        return unexpected(message);
    }
    if (!sync_parent(path)) return unexpected(failure("sync the directory of", path));
    return {};
}

Expected<Journal, std::string> read_journal(const std::string& path, const Config& config) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return Journal{};
        return unexpected(failure("read", path));
    }
    Reader in{fd};
    // One string at a time, its length from its head before anything is allocated, so what is
    // read is bounded by what the pool can hold, whatever the file is (a huge one, a device):
    // at most max_transactions strings of at most max_transaction_bytes each.
    Journal journal;
    Bytes item;
    while (!in.at_end()) {
        if (journal.transactions.size() == config.max_transactions) {
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
