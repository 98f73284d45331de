#pragma once
// Internal to the node's binaries: its log lines, each with a time, a level and a module, as text
// for people or as one JSON object per line for a log shipper (go-ethereum's `--log.format json`
// shape: "t", "lvl", "msg", then the record's own members). `run --log-level` and
// `--log-format` choose (docs/rpc.md, "Logs").
//
// text: 2026-11-28T23:34:17.123Z INFO  node: sealed block 3: 2 txs, …
// json: {"t":"2026-11-28T23:34:17.123Z","lvl":"info","module":"node","msg":"sealed block 3: …",
//        "height":3,"txs":2,…}
//
// The text line ends in the message as the node has always written it, so what reads the
// node's stderr (tests, barrel-load, scripts) finds the same words; a record's fields are
// written only as JSON members.

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace barrel::log {

/// From the most to the least severe; a logger writes its level and those before it.
enum class Level : uint8_t { error, warn, info, debug };
enum class Format : uint8_t { text, json };

/// "error", "warn", "info", "debug"; none for anything else.
std::optional<Level> parse_level(std::string_view text);
/// "text", "json"; none for anything else.
std::optional<Format> parse_format(std::string_view text);
std::string_view name(Level level);
std::string_view name(Format format);

/// One member of a JSON line besides the message: a count, a measure or a text.
struct Field {
    std::string_view key;
    std::variant<uint64_t, double, std::string> value;
};

class Logger {
public:
    explicit Logger(std::ostream& out, Level level = Level::info,
                    Format format = Format::text) noexcept;

    /// Whether a record of `level` would be written (to skip composing one that would not).
    bool enabled(Level level) const noexcept;

    /// One line, whole: lines of concurrent writers never interleave. Never throws (a line that
    /// cannot be written is lost, as a full disk loses it).
    void write(Level level, std::string_view module, std::string_view message,
               std::initializer_list<Field> fields = {}) noexcept;

    void set_level(Level level) noexcept { m_level.store(level); }
    void set_format(Format format) noexcept { m_format.store(format); }

private:
    std::ostream& m_out;
    std::atomic<Level> m_level;
    std::atomic<Format> m_format;
    std::mutex m_mutex;
};

/// The process's standard error, for code that has no logger of its own to be handed (the rpc
/// module's "method handler crashed" lines); `run` sets its level and format to its own.
Logger& standard_error() noexcept;

}  // namespace barrel::log
