#pragma once
// Internal to the cli module: what a command is, what its handler gets, and how it reports bad
// input. A command is one row of the table in cli.cpp; its spec (arguments, options, help) lives
// next to its handler in <topic>_commands.cpp. The dispatcher builds the CLI11 apps from the
// specs and parses the arguments before the handler runs, so handlers only interpret values.

#include <barrel/core/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::store {
class Store;
}  // namespace barrel::store

namespace barrel::cli {

/// Bad arguments or bad input: run() prints "error: <what>" and exits with kExitBadInput. The
/// message names what was wrong in one line ("invalid hex: odd number of hex digits").
/// Any other exception a handler lets escape is an internal failure (kExitInternal).
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& message);

/// `s` in single quotes, as errors name what the user gave: 'g.json'.
std::string squote(std::string_view s);

/// The whole of a small text file (a genesis, a node's config), at most `limit` bytes (io's
/// kMaxGenesisBytes by default); `what` names it in the error ("genesis 'g.json' is a
/// directory", "cannot read genesis 'g.json': No such file or directory").
std::string read_small_file(const std::string& path, std::string_view what,
                            size_t limit = size_t{256} << 20);

/// Options that apply to every command; given before the command or among its options.
struct GlobalOptions {
    /// --threads N: at most N threads for parallel work. run() caps oneTBB with a
    /// tbb::global_control for the handler's lifetime; code that starts its own threads must
    /// also respect it.
    std::optional<size_t> threads;
};

/// What a handler may use: the options and the three streams (never std::cin/cout/cerr).
struct Context {
    GlobalOptions options;
    std::istream& in;
    std::ostream& out;
    std::ostream& err;
};

struct OptionSpec {
    std::string_view name;        ///< "--chain-id"
    std::string_view value_name;  ///< "N"; empty for a flag, which takes no value
    std::string_view help;
    bool required{false};
    /// May be given more than once (`--node-arg A --node-arg B`): ParsedArgs::values has each
    /// value in order. Its value is the next word whatever it is, `--x` included.
    bool repeatable{false};
};

struct ArgSpec {
    std::string_view name;  ///< "HEX|-", as the usage line shows it
    std::string_view help;
    bool optional{false};  ///< optional arguments come after the required ones
};

/// A command's arguments as the dispatcher parsed them against its spec: every option is one
/// the command (or the global table) declares, given at most once (a repeatable one: any number
/// of times), with a value if it takes one; the number of positionals is within the spec.
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

using Handler = int (*)(Context& ctx, const ParsedArgs& args);

struct Command {
    std::string_view name;     ///< words separated by single spaces: "rlp decode"
    std::string_view summary;  ///< one line, for the command list of `barrel-node --help`
    std::vector<ArgSpec> args;
    std::vector<OptionSpec> options;
    std::string_view details;  ///< paragraphs for `--help` after the usage line
    Handler handler;
};

// ---- The commands (one function per table row, defined beside its handler) -----------------
Command rlp_decode_command();
Command rlp_encode_command();
Command tx_decode_command();
Command block_inspect_command();  // block_commands.cpp
Command gen_command();
Command init_command();  // node_commands.cpp: init, import, export, get …
Command import_command();
Command export_command();
Command get_account_command();
Command get_user_command();
Command get_block_command();
Command get_tx_command();
Command get_receipt_command();
Command recover_command();       // recover_command.cpp
Command verify_command();        // verify_command.cpp
Command run_command();           // run_command.cpp: the node service
Command testnet_init_command();  // testnet_command.cpp: a local network on CometBFT
Command testnet_start_command();
Command testnet_stop_command();
Command testnet_join_command();

/// Why check_state did not verify: the entries sum to another root (`mismatch`), or the
/// datadir could not be read; `message` is the one line for the user either way.
struct StateCheckFailure {
    bool mismatch{false};
    std::string message;
};
/// Recomputes the state commitment of `store` (store::verify_state): the line to print when it
/// matches its head's state root, else why not. `verify` and `run --verify-state`
/// (verify_command.cpp).
Expected<std::string, StateCheckFailure> check_state(const store::Store& store,
                                                     const std::string& datadir);

// ---- Helpers for handlers (input.cpp) --------------------------------------------------------

/// The text of a `VALUE|-` argument: the argument itself, or all of ctx.in for "-"; surrounding
/// whitespace removed.
std::string read_text_argument(Context& ctx, std::string_view arg);

/// The bytes of a `HEX|-` argument (optional 0x). Fails with "empty input" if there are none and
/// with "invalid hex: <reason>" on bad hex.
std::vector<uint8_t> read_hex_argument(Context& ctx, std::string_view arg);

/// A --name N option value: a decimal or 0x-hex integer that fits 64 bits.
uint64_t parse_u64_option(std::string_view name, std::string_view value);

}  // namespace barrel::cli
