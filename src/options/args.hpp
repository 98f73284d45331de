#pragma once
// Internal to the programs, never installed: what a command line is made of, for barrel-node's
// dispatcher (src/cli/cli.cpp) and the options bound into a program's settings
// (bound_options.hpp). Standard library only: every file of a command may include it.

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::options {

/// Bad arguments or bad input: barrel-node prints "error: <what>" and exits with status 2. The
/// message names what was wrong in one line ("invalid hex: odd number of hex digits").
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Throws InputError(message).
[[noreturn]] void fail(const std::string& message);

/// `s` in single quotes, as errors name what the user gave: 'g.json'.
std::string squote(std::string_view s);

struct OptionSpec {
    std::string_view name;        ///< "--chain-id"
    std::string_view value_name;  ///< "N"; empty for a flag, which takes no value
    std::string_view help;
    bool required{false};
    /// May be given more than once (`--node-arg A --node-arg B`): ParsedArgs::values has each
    /// value in order. Its value is the next word whatever it is, `--x` included.
    bool repeatable{false};
};

/// A command's arguments as barrel-node's dispatcher parsed them against its spec: every option
/// is one the command (or the global table) declares, given at most once (a repeatable one: any
/// number of times), with a value if it takes one; the number of positionals is within the spec.
struct ParsedArgs {
    std::vector<std::string_view> positionals;
    /// Option name ("--chain-id") → value ("" for a flag). Global options are not in here, nor
    /// repeatable ones.
    std::map<std::string_view, std::string_view, std::less<>> options;
    /// A repeatable option's name → its values in the order given (absent if not given).
    std::map<std::string_view, std::vector<std::string_view>, std::less<>> repeated;

    bool has(std::string_view name) const { return options.find(name) != options.end(); }
    std::optional<std::string_view> value(std::string_view name) const {
        const auto it = options.find(name);
        if (it == options.end()) return std::nullopt;
        return it->second;
    }
    std::vector<std::string_view> values(std::string_view name) const {
        const auto it = repeated.find(name);
        return it == repeated.end() ? std::vector<std::string_view>{} : it->second;
    }
};

}  // namespace barrel::options
