// The pool's journal (barrel/pool/pool.hpp): a stream of RLP strings, written whole or not at all.

#include <barrel/pool/pool.hpp>
#include <barrel/rlp/decode.hpp>
#include <barrel/rlp/encode.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace barrel::pool {

namespace {

std::string failure(const std::string& what, const std::string& path) {
    return "cannot " + what + " '" + path + "': " + std::strerror(errno);
}

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
    return {};
}

Expected<Journal, std::string> read_journal(const std::string& path) {
    std::ifstream in{path, std::ios::binary};
    if (!in) {
        if (errno == ENOENT) return Journal{};
        return unexpected(failure("read", path));
    }
    const Bytes bytes{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
    if (in.bad()) return unexpected(failure("read", path));
    Journal journal;
    BytesView rest = bytes;
    while (!rest.empty()) {
        auto one = rlp::decode_string(rest);
        if (!one) {
            journal.damaged = true;
            break;
        }
        journal.transactions.emplace_back(one->begin(), one->end());
    }
    return journal;
}

}  // namespace barrel::pool
