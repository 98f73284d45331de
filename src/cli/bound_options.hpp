#pragma once
// Internal to the cli module: options bound by CLI11 straight into a command's configuration
// (the library's own structs: pool::Config, seal::Config, rpc::HttpOptions, …). Each option's
// default is the member's value before binding, shown in its help; each range is stated once, in
// its binding. The dispatcher (cli.cpp) checks names and repeats against specs() as for any
// command; apply_file() then hands each key of a config file (`run --config`), and apply() each
// value given on the command line, to its CLI11 option, whose validator checks it and whose
// callback stores it: a flag given overrides the file. A required option may come from either,
// so check_required() names a missing one after both. dump() writes the settings as a file
// apply_file() reads back to the same settings.

#include "command.hpp"
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

namespace barrel::cli {

/// What a count may be: at least `low`, at most `high`.
struct Range {
    uint64_t low{1};
    uint64_t high{std::numeric_limits<uint64_t>::max()};
};

/// A century, the most any duration option may be: beyond it, time points overflow.
inline constexpr uint64_t kCenturySeconds = 3'153'600'000;

class BoundOptions {
public:
    /// What each bound option says about itself; `help_default` replaces the help's
    /// "(default X)" where the default is no constant (one per core, the genesis's coinbase).
    struct Help {
        std::string text;
        std::string default_text{};
    };

    /// `--name N`: a decimal or 0x-hex integer within `range`, into `target`.
    template <class T>
    void count(std::string name, Help help, T& target, Range range = {}) {
        count(std::move(name), "N", std::move(help), target, range);
    }
    /// The same, its value named otherwise in the help (`BYTES`).
    template <class T>
    void count(std::string name, std::string value_name, Help help, T& target, Range range = {}) {
        add(
            std::move(name), std::move(value_name), std::move(help), std::to_string(target), false,
            Kind::integer, [&target] { return std::to_string(target); },
            [&](const std::string& n, const std::string& h) {
                return m_app.add_option(n, target, h)->transform(in_range(range));
            });
    }

    /// `--name MS`, `--name S`: a count of `Duration`s (at most a century).
    template <class Duration>
    void duration(std::string name, std::string value_name, Help help, Duration& target,
                  uint64_t low = 1) {
        constexpr uint64_t most =
            kCenturySeconds * static_cast<uint64_t>(Duration::period::den / Duration::period::num);
        add(
            std::move(name), std::move(value_name), std::move(help), std::to_string(target.count()),
            false, Kind::integer, [&target] { return std::to_string(target.count()); },
            [&, low](const std::string& n, const std::string& h) {
                return m_app
                    .add_option_function<uint64_t>(
                        n, [&](const uint64_t& v) { target = Duration{static_cast<int64_t>(v)}; },
                        h)
                    ->transform(in_range({low, most}));
            });
    }

    /// Any other value: `parse` stores it or returns what is wrong with it.
    void value(std::string name, std::string value_name, Help help, std::string default_text,
               std::function<std::string(const std::string&)> parse, bool required = false);

    /// A flag without a value.
    void flag(std::string name, std::string help, bool& target);

    /// The options as the command table declares them (views into this object). None is
    /// required there: a required one may come from a config file (check_required).
    std::vector<OptionSpec> specs() const;

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
        Kind kind{Kind::string};
        /// The setting as a TOML value ("5120", "\"127.0.0.1:8545\"", "false"); "" for none.
        std::function<std::string()> shown;
        CLI::Option* option{nullptr};
        std::optional<std::string> given;  ///< the last value stored, as given
    };
    using Make = std::function<CLI::Option*(const std::string& name, const std::string& help)>;

    void add(std::string name, std::string value_name, Help help, const std::string& default_value,
             bool required, Kind kind, std::function<std::string()> shown, const Make& make);
    /// Hands `text` to the entry's option, which checks and stores it.
    static void store(Entry& e, const std::string& text);
    /// Checks a count and rewrites it in decimal for CLI11's conversion.
    static CLI::Validator in_range(Range range);

    CLI::App m_app;
    std::deque<Entry> m_entries;  // a deque: specs() hands out views of the strings
};

}  // namespace barrel::cli
