#pragma once
// Internal to the cli module: what a command is, what its handler gets, and how it reports bad
// input. A command is one row of the table in cli.cpp; its spec (arguments, options, help) lives
// next to its handler in <topic>_commands.cpp. The dispatcher builds the CLI11 apps from the
// specs and parses the arguments before the handler runs, so handlers only interpret values.

#include <barrel/core/expected.hpp>

#include "options/args.hpp"

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::store {
class Store;
}  // namespace barrel::store

namespace barrel::cli {

// What a command line is made of (options/args.hpp). InputError: bad arguments or bad input,
// which run() prints as "error: <what>" and exits with kExitBadInput; any other exception a
// handler lets escape is an internal failure (kExitInternal).
using options::fail;
using options::InputError;
using options::OptionSpec;
using options::ParsedArgs;
using options::squote;

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

struct ArgSpec {
    std::string_view name;  ///< "HEX|-", as the usage line shows it
    std::string_view help;
    bool optional{false};  ///< optional arguments come after the required ones
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
