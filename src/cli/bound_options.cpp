#include "bound_options.hpp"

#include <barrel/core/uint256.hpp>

namespace barrel::cli {

CLI::Validator BoundOptions::in_range(Range range) {
    return CLI::Validator(
        [range](std::string& text) -> std::string {
            const auto v = parse_u64(text);
            if (!v) return "expected an unsigned 64-bit integer, got '" + text + "'";
            if (*v < range.low) return "must be at least " + std::to_string(range.low);
            if (*v > range.high)
                return "must be at most " + std::to_string(range.high) + ", got " +
                       std::to_string(*v);
            text = std::to_string(*v);
            return {};
        },
        "");
}

void BoundOptions::add(std::string name, std::string value_name, Help help,
                       const std::string& default_value, bool required, const Make& make) {
    const std::string shown = help.default_text.empty() ? default_value : help.default_text;
    std::string text = help.text;
    if (!shown.empty()) text += " (default " + shown + ")";
    CLI::Option* option = make(name, text);
    m_entries.push_back(
        Entry{std::move(name), std::move(value_name), std::move(text), required, option});
}

void BoundOptions::value(std::string name, std::string value_name, Help help,
                         std::string default_text,
                         std::function<std::string(const std::string&)> parse, bool required) {
    add(std::move(name), std::move(value_name), std::move(help), default_text, required,
        [&](const std::string& n, const std::string& h) {
            return m_app.add_option(n)->description(h)->check(CLI::Validator(
                [parse = std::move(parse)](std::string& text) { return parse(text); }, ""));
        });
}

void BoundOptions::flag(std::string name, std::string help, bool& target) {
    add(std::move(name), "", {std::move(help)}, "", false,
        [&](const std::string& n, const std::string& h) { return m_app.add_flag(n, target, h); });
}

std::vector<OptionSpec> BoundOptions::specs() const {
    std::vector<OptionSpec> out;
    out.reserve(m_entries.size());
    for (const Entry& e : m_entries) out.push_back({e.name, e.value_name, e.help, e.required});
    return out;
}

void BoundOptions::apply(const ParsedArgs& args) {
    for (const Entry& e : m_entries) {
        const auto given = args.value(e.name);
        if (!given) continue;
        try {
            e.option->add_result(e.value_name.empty() ? "true" : std::string{*given});
            e.option->run_callback();
        } catch (const CLI::Error& error) {
            fail(error.what());  // "--name: what", the validator's words
        }
    }
}

}  // namespace barrel::cli
