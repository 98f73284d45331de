#include "info_log.hpp"

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <ctime>

namespace barrel::store {

namespace {

class FdLogger final : public rocksdb::Logger {
public:
    explicit FdLogger(int fd) : m_fd{fd} {}
    ~FdLogger() override { ::close(m_fd); }
    FdLogger(const FdLogger&) = delete;
    FdLogger& operator=(const FdLogger&) = delete;

    using rocksdb::Logger::Logv;
    // RocksDB's own printf-style format (its declaration lacks the attribute; this one lets
    // -Wformat-nonliteral see the forwarding).
    __attribute__((format(printf, 2, 0))) void Logv(const char* format, va_list ap) override {
        char line[4096];
        timeval now{};
        ::gettimeofday(&now, nullptr);
        tm t{};
        ::localtime_r(&now.tv_sec, &t);
        int n = std::snprintf(line, sizeof line, "%04d/%02d/%02d-%02d:%02d:%02d.%06ld ",
                              t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min,
                              t.tm_sec, static_cast<long>(now.tv_usec));
        va_list copy;
        va_copy(copy, ap);
        const int m = std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n), format, copy);
        va_end(copy);
        if (m < 0) return;
        n = std::min<int>(n + m, static_cast<int>(sizeof line) - 1);
        if (line[n - 1] != '\n') line[n++] = '\n';
        // One write per line (O_APPEND), so that lines from RocksDB's threads do not interleave;
        // a failed or short write is dropped (see the header).
        (void)!::write(m_fd, line, static_cast<size_t>(n));
    }

private:
    int m_fd;
};

class NullLogger final : public rocksdb::Logger {
public:
    using rocksdb::Logger::Logv;
    void Logv(const char*, va_list) override {}
};

}  // namespace

std::shared_ptr<rocksdb::Logger> open_info_log(const std::filesystem::path& dir) {
    const std::string log = (dir / "LOG").string();
    (void)std::rename(log.c_str(), (dir / "LOG.old").c_str());
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return null_info_log();
    return std::make_shared<FdLogger>(fd);
}

std::shared_ptr<rocksdb::Logger> null_info_log() { return std::make_shared<NullLogger>(); }

}  // namespace barrel::store
