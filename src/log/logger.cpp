#include "log/logger.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

namespace barrel::log {

namespace {

constexpr std::string_view kLevelNames[] = {"error", "warn", "info", "debug"};
constexpr std::string_view kFormatNames[] = {"text", "json"};

/// RFC 3339 in UTC with milliseconds: "2026-11-28T23:34:17.123Z".
std::string now_utc() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
        1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[32];
    const size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
    std::snprintf(text + n, sizeof text - n, ".%03dZ", static_cast<int>(ms));
    return text;
}

std::string text_line(std::string_view time, Level level, std::string_view module,
                      std::string_view message) {
    std::string upper{name(level)};
    for (char& c : upper) c = static_cast<char>(c - 'a' + 'A');
    upper.resize(5, ' ');  // the messages line up: "INFO  ", "ERROR "
    std::string line;
    line.reserve(time.size() + module.size() + message.size() + 10);
    line.append(time).append(" ").append(upper).append(" ").append(module).append(": ");
    line.append(message).append("\n");
    return line;
}

std::string json_line(std::string_view time, Level level, std::string_view module,
                      std::string_view message, std::initializer_list<Field> fields) {
    nlohmann::ordered_json line{
        {"t", time}, {"lvl", name(level)}, {"module", module}, {"msg", message}};
    for (const Field& f : fields)
        std::visit([&](const auto& v) { line[std::string{f.key}] = v; }, f.value);
    // A message holding bytes that are no UTF-8 (a peer's text) must still be one JSON line.
    return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

std::optional<Level> parse_level(std::string_view text) {
    for (size_t i = 0; i < std::size(kLevelNames); ++i)
        if (text == kLevelNames[i]) return static_cast<Level>(i);
    return std::nullopt;
}

std::optional<Format> parse_format(std::string_view text) {
    for (size_t i = 0; i < std::size(kFormatNames); ++i)
        if (text == kFormatNames[i]) return static_cast<Format>(i);
    return std::nullopt;
}

std::string_view name(Level level) { return kLevelNames[static_cast<size_t>(level)]; }
std::string_view name(Format format) { return kFormatNames[static_cast<size_t>(format)]; }

Logger::Logger(std::ostream& out, Level level, Format format) noexcept
    : m_out{out}, m_level{level}, m_format{format} {}

bool Logger::enabled(Level level) const noexcept { return level <= m_level.load(); }

void Logger::write(Level level, std::string_view module, std::string_view message,
                   std::initializer_list<Field> fields) noexcept {
    if (!enabled(level)) return;
    try {
        const std::string time = now_utc();
        const std::string line = m_format.load() == Format::json
                                     ? json_line(time, level, module, message, fields)
                                     : text_line(time, level, module, message);
        std::lock_guard lock{m_mutex};
        m_out << line << std::flush;
    } catch (...) {
    }
}

Logger& standard_error() noexcept {
    static Logger logger{std::cerr};
    return logger;
}

}  // namespace barrel::log
