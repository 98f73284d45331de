#include "metrics_text.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace barrel::load {

namespace {

bool name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

/// The name at the front of `s` (metric or label), consumed; empty if there is none.
std::string_view take_name(std::string_view& s) {
    if (s.empty() || !name_start(s.front())) return {};
    size_t n = 1;
    while (n < s.size() && name_char(s[n])) ++n;
    const std::string_view name = s.substr(0, n);
    s.remove_prefix(n);
    return name;
}

void skip_blanks(std::string_view& s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
}

/// A quoted label value at the front of `s` (the opening quote included), unescaped.
std::optional<std::string> take_quoted(std::string_view& s) {
    if (s.empty() || s.front() != '"') return std::nullopt;
    std::string out;
    for (size_t i = 1; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '"') {
            s.remove_prefix(i + 1);
            return out;
        }
        if (c != '\\') {
            out += c;
            continue;
        }
        if (++i == s.size()) return std::nullopt;
        out += s[i] == 'n' ? '\n' : s[i];  // \\ and \" stand for themselves
    }
    return std::nullopt;
}

std::optional<double> parse_value(std::string_view v) {
    if (v == "+Inf" || v == "Inf") return std::numeric_limits<double>::infinity();
    if (v == "-Inf") return -std::numeric_limits<double>::infinity();
    if (v == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (!v.empty() && v.front() == '+') v.remove_prefix(1);
    double d = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
    if (ec != std::errc{} || end != v.data() + v.size()) return std::nullopt;
    return d;
}

}  // namespace

std::optional<Sample> parse_sample_line(std::string_view s) {
    skip_blanks(s);
    if (s.empty() || s.front() == '#') return std::nullopt;
    Sample out;
    out.name = std::string{take_name(s)};
    if (out.name.empty()) return std::nullopt;
    if (!s.empty() && s.front() == '{') {
        s.remove_prefix(1);
        for (;;) {
            skip_blanks(s);
            if (!s.empty() && s.front() == '}') break;
            const std::string_view label = take_name(s);
            skip_blanks(s);
            if (label.empty() || s.empty() || s.front() != '=') return std::nullopt;
            s.remove_prefix(1);
            skip_blanks(s);
            auto value = take_quoted(s);
            if (!value) return std::nullopt;
            out.labels.emplace_back(std::string{label}, std::move(*value));
            skip_blanks(s);
            if (!s.empty() && s.front() == ',')
                s.remove_prefix(1);
            else if (s.empty() || s.front() != '}')
                return std::nullopt;
        }
        s.remove_prefix(1);  // '}'
    }
    if (s.empty() || (s.front() != ' ' && s.front() != '\t')) return std::nullopt;
    skip_blanks(s);
    const size_t end = s.find_first_of(" \t\r");
    auto value = parse_value(s.substr(0, end));
    if (!value) return std::nullopt;
    out.value = *value;
    // An optional timestamp (an integer) may follow; it is not needed here.
    return out;
}

MetricsText MetricsText::parse(std::string_view text) {
    MetricsText m;
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (auto sample = parse_sample_line(line)) {
            m.m_samples.push_back(std::move(*sample));
            continue;
        }
        size_t first = line.find_first_not_of(" \t");
        if (first != std::string_view::npos && line[first] != '#') ++m.m_malformed;
    }
    return m;
}

std::optional<double> MetricsText::value(
    std::string_view name,
    const std::vector<std::pair<std::string_view, std::string_view>>& labels) const {
    for (const Sample& s : m_samples) {
        if (s.name != name) continue;
        bool all = true;
        for (const auto& [k, v] : labels) {
            bool found = false;
            for (const auto& [sk, sv] : s.labels) found = found || (sk == k && sv == v);
            all = all && found;
        }
        if (all) return s.value;
    }
    return std::nullopt;
}

}  // namespace barrel::load
