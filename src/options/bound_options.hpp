#pragma once
// Internal to the programs (barrel-node's commands, barrel-load), never installed: options bound
// by CLI11 straight into a program's configuration (the library's own structs: pool::Config,
// seal::Config, rpc::HttpOptions, load::Config, …). Each option's default is the member's value
// before binding, shown in its help; each range is stated once, in its binding.
//
// Two ways to parse:
// - barrel-node's dispatcher (cli.cpp) checks names and repeats against specs() as for any
//   command; apply_file() then hands each key of a config file (`run --config`), and apply() each
//   value given on the command line, to its CLI11 option, whose validator checks it and whose
//   callback stores it: a flag given overrides the file. A required option may come from either,
//   so check_required() names a missing one after both. dump() writes the settings as a file
//   apply_file() reads back to the same settings.
// - A program of its own (barrel-load) parses its argv with app() itself: the same validators
//   check and store each value, and CLI11's help lists each option with its default.

#include "args.hpp"
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::options {

/// What a count may be: at least `low`, at most `high`.
struct Range {
    uint64_t low{1};
    uint64_t high{std::numeric_limits<uint64_t>::max()};
};

/// A century, the most any duration option may be: beyond it, time points overflow.
inline constexpr uint64_t kCenturySeconds = 3'153'600'000;

/// Where a program's settings come from: its command line, or also a config file (`run
/// --config`), where a required option may be given instead.
enum class Sources { command_line, command_line_and_file };

class BoundOptions {
public:
    explicit BoundOptions(Sources sources = Sources::command_line) : m_sources{sources} {}

    /// What each bound option says about itself; `default_text` replaces the help's
    /// "(default X)" where the default is no constant (one per core, the genesis's coinbase,
    /// another program's); a required option has no default.
    struct Help {
        std::string text;
        std::string default_text{};
        bool required{false};
    };

    /// `--name N`: a decimal or 0x-hex integer within `range`, into `target`.
    template <class T>
    void count(std::string name, Help help, T& target, Range range = {}) {
        count(std::move(name), "N", std::move(help), target, range);
    }
    /// The same, its value named otherwise in the help (`BYTES`).
    template <class T>
    void count(std::string name, std::string value_name, Help help, T& target, Range range = {}) {
        help.text += range_text(range);
        add(
            std::move(name), std::move(value_name), std::move(help), std::to_string(target),
            Kind::integer, [&target] { return std::to_string(target); },
            [&](const std::string& n, const std::string& h) {
                return m_app.add_option(n, target, h)->transform(in_range(range));
            });
    }
    /// A count with no value until given (the default is another's: `help.default_text`).
    template <class T>
    void count(std::string name, std::string value_name, Help help, std::optional<T>& target,
               Range range = {}) {
        help.text += range_text(range);
        add(
            std::move(name), std::move(value_name), std::move(help), "", Kind::integer,
            [&target] { return target ? std::to_string(*target) : std::string{}; },
            [&](const std::string& n, const std::string& h) {
                return m_app
                    .add_option_function<uint64_t>(
                        n, [&target](const uint64_t& v) { target = static_cast<T>(v); }, h)
                    ->transform(in_range(range));
            });
    }

    /// `--name MS`, `--name S`: a count of `Duration`s within `range` (at most a century).
    template <class Duration>
    void duration(std::string name, std::string value_name, Help help, Duration& target,
                  Range range = {}) {
        constexpr uint64_t most =
            kCenturySeconds * static_cast<uint64_t>(Duration::period::den / Duration::period::num);
        if (range.high < most) help.text += range_text(range);
        range.high = std::min(range.high, most);
        add(
            std::move(name), std::move(value_name), std::move(help), std::to_string(target.count()),
            Kind::integer, [&target] { return std::to_string(target.count()); },
            [&, range](const std::string& n, const std::string& h) {
                return m_app
                    .add_option_function<uint64_t>(
                        n, [&](const uint64_t& v) { target = Duration{static_cast<int64_t>(v)}; },
                        h)
                    ->transform(in_range(range));
            });
    }

    /// Any other value: `parse` stores it or returns what is wrong with it.
    void value(std::string name, std::string value_name, Help help, std::string default_text,
               std::function<std::string(const std::string&)> parse);

    /// `--name VALUE`: the text as given, into `target` (its value before binding: the default).
    void text(std::string name, std::string value_name, Help help, std::string& target);
    /// The same, with no value until given (the default is `help.default_text`).
    void text(std::string name, std::string value_name, Help help,
              std::optional<std::string>& target);

    /// `--name VALUE`, given any number of times: each value, in order, into `target`.
    void repeated(std::string name, std::string value_name, std::string help,
                  std::vector<std::string>& target);

    /// A flag without a value.
    void flag(std::string name, std::string help, bool& target);

    /// The options bound after this call are listed under `title` in app()'s help (until the
    /// next call); given_in(title) names those given.
    void group(std::string title) { m_group = std::move(title); }

    /// Whether option `name` was given (on the command line, or in a config file).
    bool given(std::string_view name) const;
    /// The options of group `title` that were given, in binding order.
    std::vector<std::string> given_in(std::string_view title) const;

    /// The options as a command table declares them (views into this object). A required one
    /// is not required there when a config file may give it (check_required).
    std::vector<OptionSpec> specs() const;

    /// The CLI11 app the options are bound in, for a program that parses its argv with it.
    CLI::App& app() { return m_app; }

    /// Stores every key of the TOML file `path` whose text is `text`: each key an option's name
    /// without "--" (`txpool-max-pending = 5000`), a count an integer, a flag a boolean, any other
    /// value a string. A key that is no option, a value of another type, a value its option
    /// refuses and a file that is no TOML fail with "PATH:LINE: …".
    void apply_file(const std::string& path, const std::string& text);

    /// Stores every value given, in binding order; a bad one fails with "--name: what".
    void apply(const ParsedArgs& args);

    /// Fails with "COMMAND: missing option --name VALUE" for a required option set by neither
    /// the file nor the command line.
    void check_required(std::string_view command) const;

    /// The settings as a TOML file, in binding order, each key after its help as a comment; an
    /// option with no value (no default, none given) is a comment.
    std::string dump() const;

private:
    /// A value's TOML type in a config file.
    enum class Kind { integer, string, boolean };
    struct Entry {
        std::string name;
        std::string value_name;
        std::string help;
        bool required{false};
        bool repeatable{false};
        Kind kind{Kind::string};
        /// The setting as a TOML value ("5120", "\"127.0.0.1:8545\"", "false"); "" for none.
        std::function<std::string()> shown;
        CLI::Option* option{nullptr};
        std::optional<std::string> given;  ///< the last value stored, as given
    };
    using Make = std::function<CLI::Option*(const std::string& name, const std::string& help)>;

    Entry& add(std::string name, std::string value_name, Help help,
               const std::string& default_value, Kind kind, std::function<std::string()> shown,
               const Make& make);
    /// Hands `texts` to the entry's option, which checks and stores them.
    static void store(Entry& e, const std::vector<std::string>& texts);
    /// " (LOW to HIGH)" for the help of a count with a highest value a user may meet, else "".
    static std::string range_text(Range range);
    /// Checks a count and rewrites it in decimal for CLI11's conversion.
    static CLI::Validator in_range(Range range);

    Sources m_sources;
    std::string m_group;
    CLI::App m_app;
    std::deque<Entry> m_entries;  // a deque: specs() hands out views of the strings
};

/// The specs of the options `bind` binds into a `Config`, for a command table: bound once, to a
/// default `Config`, kept for the program's life (the specs view their strings).
template <class Config, void (*bind)(BoundOptions&, Config&),
          Sources sources = Sources::command_line>
const std::vector<OptionSpec>& bound_specs() {
    static Config defaults;
    static BoundOptions bound{sources};
    static const std::vector<OptionSpec> specs = [] {
        bind(bound, defaults);
        return bound.specs();
    }();
    return specs;
}

/// The mistake CLI11 reports itself, an option given without its value or more than once
/// ("--txs: 1 required N missing", "--txs: At Most 1 required but received 2"), in the
/// programs' words: "option --txs needs a value N", "option --txs given twice". Any other
/// mismatch as CLI11 says it. `app`: the (sub)command whose option it is.
std::string mismatch_message(const CLI::App& app, const CLI::ArgumentMismatch& e);

/// A `Config` with the values of `args` bound by `bind` stored in it (each checked).
template <class Config, void (*bind)(BoundOptions&, Config&)>
Config bound_from(const ParsedArgs& args) {
    Config config;
    BoundOptions bound;
    bind(bound, config);
    bound.apply(args);
    return config;
}

}  // namespace barrel::options
