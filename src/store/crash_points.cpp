#include "crash_points.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace barrel::store {

namespace {

struct Chosen {
    CrashPoint point;
    uint64_t n;
};

std::optional<Chosen> parse(std::string_view text) {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const std::string_view name = text.substr(0, colon), number = text.substr(colon + 1);
    Chosen c{};
    if (name == "built")
        c.point = CrashPoint::built;
    else if (name == "written")
        c.point = CrashPoint::written;
    else if (name == "marked")
        c.point = CrashPoint::marked;
    else if (name == "wal")
        c.point = CrashPoint::wal;
    else
        return std::nullopt;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), c.n);
    if (ec != std::errc{} || end != number.data() + number.size() || number.empty())
        return std::nullopt;
    return c;
}

/// Read once per process.
const std::optional<Chosen>& chosen() {
    static const std::optional<Chosen> c = []() -> std::optional<Chosen> {
        const char* text = std::getenv("BARREL_TEST_CRASH_AT");
        if (text == nullptr || *text == '\0') return std::nullopt;
        auto parsed = parse(text);
        if (!parsed) {
            std::fprintf(stderr,
                         "BARREL_TEST_CRASH_AT=%s: expected built:N, written:N, marked:N or "
                         "wal:K\n",
                         text);
            std::abort();
        }
        return parsed;
    }();
    return c;
}

[[noreturn]] void die() {
    ::kill(::getpid(), SIGKILL);
    ::_exit(137);  // not reached
}

/// Counts the writes that reach a write-ahead log file (`NNNNNN.log`): RocksDB calls it after
/// each append of a WritableFileWriter, whose buffer holds a whole record unless it is longer
/// than the buffer (1 MiB at most).
class WalCrash final : public rocksdb::EventListener {
public:
    explicit WalCrash(uint64_t k) : m_k{k} {}
    bool ShouldBeNotifiedOnFileIO() override { return true; }
    void OnFileWriteFinish(const rocksdb::FileOperationInfo& info) override {
        if (!info.path.ends_with(".log")) return;
        if (g_wal_writes.fetch_add(1) + 1 == m_k) die();
    }

private:
    uint64_t m_k;
    static inline std::atomic<uint64_t> g_wal_writes{0};  // over every store this process opens
};

}  // namespace

bool commit_crash_points_armed() { return chosen() && chosen()->point != CrashPoint::wal; }

void crash_at(CrashPoint point, uint64_t number) {
    const auto& c = chosen();
    if (c && c->point == point && c->n == number) die();
}

std::shared_ptr<rocksdb::EventListener> wal_crash_listener() {
    const auto& c = chosen();
    if (!c || c->point != CrashPoint::wal) return nullptr;
    return std::make_shared<WalCrash>(c->n);
}

}  // namespace barrel::store
