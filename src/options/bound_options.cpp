#include "bound_options.hpp"

#include <barrel/core/uint256.hpp>

#include <toml++/toml.h>

#include <map>
#include <sstream>

namespace barrel::options {

void fail(const std::string& message) { throw InputError(message); }

std::string squote(std::string_view s) { return "'" + std::string{s} + "'"; }

namespace {

/// A string as a TOML basic string, in double quotes and escaped (toml++ would write a literal
/// string, in single quotes, where nothing needs escaping).
std::string toml_string(const std::string& text) {
    std::ostringstream out;
    out << toml::toml_formatter{toml::value<std::string>{text}, toml::format_flags::none};
    return out.str();
}

std::string_view toml_type_name(toml::node_type type) {
    switch (type) {
        case toml::node_type::string: return "a string";
        case toml::node_type::integer: return "an integer";
        case toml::node_type::floating_point: return "a floating-point number";
        case toml::node_type::boolean: return "a boolean";
        case toml::node_type::table: return "a table";
        case toml::node_type::array: return "an array";
        case toml::node_type::date:
        case toml::node_type::time:
        case toml::node_type::date_time: return "a date or time";
        case toml::node_type::none: break;
    }
    return "nothing";
}

/// "PATH:LINE: ", how a config file's errors begin.
std::string at_line(const std::string& path, const toml::source_region& where) {
    return path + ":" + std::to_string(where.begin.line) + ": ";
}

}  // namespace

std::string BoundOptions::range_text(Range range) {
    // A bound of 2^63 - 1 or more only keeps a count within its type: no user's limit.
    if (range.high >= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return "";
    return " (" + std::to_string(range.low) + " to " + std::to_string(range.high) + ")";
}

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

BoundOptions::Entry& BoundOptions::add(std::string name, std::string value_name, Help help,
                                       const std::string& default_value, Kind kind,
                                       std::function<std::string()> shown, const Make& make) {
    const std::string default_shown = help.default_text.empty() ? default_value : help.default_text;
    std::string text = help.text;
    if (!default_shown.empty() && !help.required) text += " (default " + default_shown + ")";
    if (help.required && m_sources == Sources::command_line_and_file)
        text += " (required: here or in the --config file)";
    CLI::Option* option = make(name, text);
    option->type_name(value_name);
    if (!m_group.empty()) option->group(m_group);
    m_entries.push_back(Entry{std::move(name), std::move(value_name), std::move(text),
                              help.required, false, kind, std::move(shown), option, std::nullopt});
    return m_entries.back();
}

void BoundOptions::value(std::string name, std::string value_name, Help help,
                         std::string default_text,
                         std::function<std::string(const std::string&)> parse) {
    Entry& e =
        add(std::move(name), std::move(value_name), std::move(help), default_text, Kind::string, {},
            [&](const std::string& n, const std::string& h) {
                return m_app.add_option(n)->description(h)->check(CLI::Validator(
                    [parse = std::move(parse)](std::string& text) { return parse(text); }, ""));
            });
    // What a value option holds is what was last given, else its default: only the parse
    // callback knows the member it fills. The deque keeps the entry where it is.
    e.shown = [&e, default_text = std::move(default_text)] {
        const std::string& text = e.given ? *e.given : default_text;
        return text.empty() ? std::string{} : toml_string(text);
    };
}

void BoundOptions::text(std::string name, std::string value_name, Help help, std::string& target) {
    value(std::move(name), std::move(value_name), std::move(help), target,
          [&target](const std::string& text) {
              target = text;
              return std::string{};
          });
}

void BoundOptions::text(std::string name, std::string value_name, Help help,
                        std::optional<std::string>& target) {
    value(std::move(name), std::move(value_name), std::move(help), "",
          [&target](const std::string& text) {
              target = text;
              return std::string{};
          });
}

void BoundOptions::repeated(std::string name, std::string value_name, std::string help,
                            std::vector<std::string>& target) {
    Entry& e = add(
        std::move(name), std::move(value_name), {std::move(help) + " (repeatable)"}, "",
        Kind::string, [] { return std::string{}; },
        [&](const std::string& n, const std::string& h) {
            return m_app.add_option(n, target, h)
                ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
        });
    e.repeatable = true;
}

void BoundOptions::flag(std::string name, std::string help, bool& target) {
    add(
        std::move(name), "", {std::move(help)}, "", Kind::boolean,
        [&target] { return std::string{target ? "true" : "false"}; },
        [&](const std::string& n, const std::string& h) { return m_app.add_flag(n, target, h); });
}

bool BoundOptions::given(std::string_view name) const {
    for (const Entry& e : m_entries)
        if (e.name == name) return e.option->count() > 0;
    return false;
}

std::vector<std::string> BoundOptions::given_in(std::string_view title) const {
    std::vector<std::string> out;
    for (const Entry& e : m_entries)
        if (e.option->get_group() == title && e.option->count() > 0) out.push_back(e.name);
    return out;
}

std::vector<OptionSpec> BoundOptions::specs() const {
    const bool file = m_sources == Sources::command_line_and_file;
    std::vector<OptionSpec> out;
    out.reserve(m_entries.size());
    for (const Entry& e : m_entries)
        out.push_back({e.name, e.value_name, e.help, e.required && !file, e.repeatable});
    return out;
}

void BoundOptions::store(Entry& e, const std::vector<std::string>& texts) {
    e.option->clear();  // a value given again (the file's, then the flag's) replaces the first
    for (const std::string& text : texts) e.option->add_result(text);
    e.option->run_callback();
    e.given = texts.back();
}

void BoundOptions::apply_file(const std::string& path, const std::string& text) {
    toml::table file;
    try {
        file = toml::parse(text, path);
    } catch (const toml::parse_error& error) {
        fail(at_line(path, error.source()) + "invalid TOML: " + std::string{error.description()});
    }
    std::map<std::string, Entry*, std::less<>> by_key;
    for (Entry& e : m_entries) by_key.emplace(e.name.substr(2), &e);
    for (const auto& [key, node] : file) {
        const std::string at = at_line(path, node.source());
        const auto it = by_key.find(key.str());
        if (it == by_key.end())
            fail(at + "unknown key " + squote(key.str()) + " (barrel-node run --help lists them)");
        Entry& e = *it->second;
        std::string value;
        if (e.kind == Kind::integer && node.is_integer())
            value = std::to_string(node.as_integer()->get());
        else if (e.kind == Kind::string && node.is_string())
            value = node.as_string()->get();
        else if (e.kind == Kind::boolean && node.is_boolean())
            value = node.as_boolean()->get() ? "true" : "false";
        else
            fail(at + std::string{key.str()} + ": expected " +
                 std::string{toml_type_name(e.kind == Kind::integer   ? toml::node_type::integer
                                            : e.kind == Kind::boolean ? toml::node_type::boolean
                                                                      : toml::node_type::string)} +
                 ", got " + std::string{toml_type_name(node.type())});
        try {
            store(e, {value});
        } catch (const CLI::Error& error) {
            // CLI11's "--name: what": the file names the key without its dashes.
            std::string what = error.what();
            if (what.starts_with(e.name + ": ")) what.erase(0, e.name.size() + 2);
            fail(at + std::string{key.str()} + ": " + what);
        }
    }
}

void BoundOptions::apply(const ParsedArgs& args) {
    for (Entry& e : m_entries) {
        std::vector<std::string> texts;
        if (e.repeatable) {
            for (std::string_view v : args.values(e.name)) texts.emplace_back(v);
        } else if (const auto given = args.value(e.name)) {
            texts.emplace_back(e.value_name.empty() ? "true" : std::string{*given});
        }
        if (texts.empty()) continue;
        try {
            store(e, texts);
        } catch (const CLI::Error& error) {
            fail(error.what());  // "--name: what", the validator's words
        }
    }
}

void BoundOptions::check_required(std::string_view command) const {
    for (const Entry& e : m_entries)
        if (e.required && !e.given)
            fail(std::string{command} + ": missing option " + e.name + " " + e.value_name);
}

std::string mismatch_message(const CLI::App& app, const CLI::ArgumentMismatch& e) {
    const std::string_view what = e.what();
    const std::string name{what.substr(0, what.find(':'))};
    const CLI::Option* option = app.get_option_no_throw(name);
    if (option == nullptr) return std::string{what};
    if (what.find("At Most 1 required") != std::string_view::npos)
        return "option " + name + " given twice";
    if (what.ends_with(" missing"))
        return "option " + name + " needs a value " + option->get_type_name();
    return std::string{what};
}

std::string BoundOptions::dump() const {
    std::string out;
    for (const Entry& e : m_entries) {
        const std::string key = e.name.substr(2);
        const std::string value = e.shown();
        out += "\n# " + e.help + "\n" +
               (value.empty() ? "# " + key + " = " + e.value_name : key + " = " + value) + "\n";
    }
    return out;
}

}  // namespace barrel::options
