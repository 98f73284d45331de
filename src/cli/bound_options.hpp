#pragma once
// Internal to the cli module: options bound by CLI11 straight into a command's configuration
// (the library's own structs: pool::Config, seal::Config, rpc::HttpOptions, …). Each option's
// default is the member's value before binding, shown in its help; each range is stated once, in
// its binding. The dispatcher (cli.cpp) checks names, repeats and required options against
// specs() as for any command; apply() then hands each given value to its CLI11 option, whose
// validator checks it and whose callback stores it.

#include "command.hpp"
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <string>
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
        add(std::move(name), std::move(value_name), std::move(help), std::to_string(target), false,
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
        add(std::move(name), std::move(value_name), std::move(help), std::to_string(target.count()),
            false, [&, low](const std::string& n, const std::string& h) {
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

    /// The options as the command table declares them (views into this object).
    std::vector<OptionSpec> specs() const;

    /// Stores every value given, in binding order; a bad one fails with "--name: what".
    void apply(const ParsedArgs& args);

private:
    struct Entry {
        std::string name;
        std::string value_name;
        std::string help;
        bool required{false};
        CLI::Option* option{nullptr};
    };
    using Make = std::function<CLI::Option*(const std::string& name, const std::string& help)>;

    void add(std::string name, std::string value_name, Help help, const std::string& default_value,
             bool required, const Make& make);
    /// Checks a count and rewrites it in decimal for CLI11's conversion.
    static CLI::Validator in_range(Range range);

    CLI::App m_app;
    std::deque<Entry> m_entries;  // a deque: specs() hands out views of the strings
};

}  // namespace barrel::cli
