// The dispatcher: the command table, argument parsing against each command's spec, --help, and
// the mapping of outcomes to exit statuses.
//
// Conventions (every command follows them, so later commands only add a table row):
// - `barrel-node [GLOBAL OPTIONS] COMMAND [ARGS]`; a command is one or more words ("rlp decode"),
//   a word that only begins commands ("rlp") is a group.
// - Options are long (`--name VALUE` or `--name=VALUE`), may come anywhere among the command's
//   arguments, and may be given once. Global options (--threads) are also accepted there.
//   `--` ends the options; `-` is an argument (standard input) and so is anything else that
//   does not start with `--` (e.g. the JSON `-1`). `-h`/`--help` anywhere before `--` prints
//   the help of what precedes it and exits 0.
// - Usage mistakes are reported as "error: <command>: <what>" ("error: rlp decode: missing
//   argument HEX|-"); mistakes in the input itself name the kind of input ("error: invalid hex:
//   …", "error: invalid JSON: …", "error: tx: nonce: leading_zero").

#include <barrel/cli/cli.hpp>

#include "command.hpp"

#include <tbb/global_control.h>

#include <algorithm>
#include <exception>
#include <ostream>
#include <sstream>

namespace barrel::cli {

namespace {

constexpr std::string_view kProgram = "barrel-node";
constexpr size_t kMaxThreads = 65536;

/// Every command barrel-node has, in the order `--help` lists them. A new command is a function
/// returning its Command (beside its handler) and one line here.
const std::vector<Command>& command_table() {
    static const std::vector<Command> table = {
        rlp_decode_command(),
        rlp_encode_command(),
        tx_decode_command(),
        block_inspect_command(),
        gen_command(),
        init_command(),
        import_command(),
        export_command(),
        get_account_command(),
        get_user_command(),
        get_block_command(),
        get_tx_command(),
        get_receipt_command(),
    };
    return table;
}

const std::vector<OptionSpec>& global_option_table() {
    static const std::vector<OptionSpec> table = {
        {"--threads", "N",
         "Use at most N threads for parallel work (a positive integer; default: all cores)"},
    };
    return table;
}

const OptionSpec* find_option(const std::vector<OptionSpec>& table, std::string_view name) {
    const auto it = std::find_if(table.begin(), table.end(),
                                 [&](const OptionSpec& o) { return o.name == name; });
    return it == table.end() ? nullptr : &*it;
}

bool is_help(std::string_view arg) { return arg == "--help" || arg == "-h"; }

std::string quoted(std::string_view s) {
    constexpr size_t kMax = 40;  // keep the one error line readable
    std::string out = "'";
    out += s.size() > kMax ? std::string{s.substr(0, kMax)} + "..." : std::string{s};
    out += "'";
    return out;
}

// ---- Global options --------------------------------------------------------------------------

void apply_global_option(GlobalOptions& options, std::string_view name, std::string_view value) {
    if (name == "--threads") {
        if (options.threads) fail("option --threads given twice");
        size_t n = 0;
        bool ok = !value.empty() && value.size() <= 6;
        for (char c : value) {
            if (c < '0' || c > '9') ok = false;
            if (ok) n = n * 10 + static_cast<size_t>(c - '0');
        }
        if (!ok || n == 0 || n > kMaxThreads)
            fail("--threads: expected a positive integer up to " + std::to_string(kMaxThreads) +
                 ", got " + quoted(value));
        options.threads = n;
    }
}

// ---- Parsing ---------------------------------------------------------------------------------

/// Reads an option at args[i] (which starts with "--") into (name, value), advancing i past a
/// separate value. `where` prefixes usage errors ("rlp decode: ").
struct OptionArg {
    const OptionSpec* spec;
    bool global;
    std::string_view name;
    std::string_view value;
};

OptionArg read_option(std::span<const std::string_view> args, size_t& i,
                      const std::vector<OptionSpec>* command_options, const std::string& where) {
    const std::string_view arg = args[i];
    const auto eq = arg.find('=');
    const std::string_view name = arg.substr(0, eq);
    const OptionSpec* spec = command_options ? find_option(*command_options, name) : nullptr;
    const bool global = spec == nullptr;
    if (!spec) spec = find_option(global_option_table(), name);
    if (!spec) fail(where + "unknown option " + quoted(name));

    std::string_view value;
    if (spec->value_name.empty()) {
        if (eq != std::string_view::npos)
            fail(where + "option " + std::string{name} + " takes no value");
    } else if (eq != std::string_view::npos) {
        value = arg.substr(eq + 1);
    } else {
        if (i + 1 >= args.size())
            fail(where + "option " + std::string{name} + " needs a value " +
                 std::string{spec->value_name});
        value = args[++i];
    }
    return {spec, global, name, value};
}

/// Parses a command's arguments against its spec (help has been handled before).
ParsedArgs parse_command_args(const Command& cmd, std::span<const std::string_view> args,
                              GlobalOptions& globals) {
    const std::string where = std::string{cmd.name} + ": ";
    ParsedArgs parsed;
    std::vector<std::string_view> seen;
    bool options_ended = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        if (options_ended || !arg.starts_with("--")) {
            parsed.positionals.push_back(arg);
            continue;
        }
        if (arg == "--") {
            options_ended = true;
            continue;
        }
        const OptionArg opt = read_option(args, i, &cmd.options, where);
        if (std::find(seen.begin(), seen.end(), opt.name) != seen.end())
            fail(where + "option " + std::string{opt.name} + " given twice");
        seen.push_back(opt.name);
        if (opt.global)
            apply_global_option(globals, opt.name, opt.value);
        else
            parsed.options.emplace(opt.spec->name, opt.value);
    }

    for (const auto& o : cmd.options)
        if (o.required && !parsed.has(o.name))
            fail(where + "missing option " + std::string{o.name} + " " + std::string{o.value_name});
    const size_t required = static_cast<size_t>(
        std::count_if(cmd.args.begin(), cmd.args.end(), [](const ArgSpec& a) { return !a.optional; }));
    if (parsed.positionals.size() < required)
        fail(where + "missing argument " + std::string{cmd.args[parsed.positionals.size()].name});
    if (parsed.positionals.size() > cmd.args.size())
        fail(where + "unexpected argument " + quoted(parsed.positionals[cmd.args.size()]));
    return parsed;
}

// ---- Help ------------------------------------------------------------------------------------

std::string usage_line(const Command& cmd) {
    std::string s = std::string{kProgram} + " " + std::string{cmd.name};
    bool optional_options = false;
    for (const auto& o : cmd.options) {
        if (o.required)
            s += " " + std::string{o.name} + " " + std::string{o.value_name};
        else
            optional_options = true;
    }
    if (optional_options) s += " [OPTIONS]";
    for (const auto& a : cmd.args)
        s += a.optional ? " [" + std::string{a.name} + "]" : " " + std::string{a.name};
    return s;
}

/// The command as the command list shows it: name and arguments.
std::string synopsis(const Command& cmd) {
    std::string s{cmd.name};
    for (const auto& a : cmd.args)
        s += a.optional ? " [" + std::string{a.name} + "]" : " " + std::string{a.name};
    return s;
}

/// Two columns, the left padded to the widest entry.
void print_table(std::ostream& out, const std::vector<std::pair<std::string, std::string>>& rows) {
    size_t width = 0;
    for (const auto& [left, right] : rows) width = std::max(width, left.size());
    for (const auto& [left, right] : rows)
        out << "  " << left << std::string(width - left.size() + 3, ' ') << right << "\n";
}

void print_options(std::ostream& out, std::string_view title, const std::vector<OptionSpec>& opts,
                   bool with_help_flag) {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto& o : opts)
        rows.emplace_back(o.value_name.empty() ? std::string{o.name}
                                               : std::string{o.name} + " " + std::string{o.value_name},
                          std::string{o.help});
    if (with_help_flag) rows.emplace_back("-h, --help", "Show this help and exit");
    if (rows.empty()) return;
    out << "\n" << title << ":\n";
    print_table(out, rows);
}

/// The command list of everything under `group` ("" for all).
void print_command_list(std::ostream& out, std::string_view group) {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto& cmd : command_table())
        if (group.empty() || cmd.name.starts_with(std::string{group} + " "))
            rows.emplace_back(synopsis(cmd), std::string{cmd.summary});
    print_table(out, rows);
}

void print_main_help(std::ostream& out) {
    out << kProgram << ": a blockchain node that decodes, verifies, executes and commits blocks\n"
        << "in parallel.\n\n"
        << "Usage: " << kProgram << " [GLOBAL OPTIONS] COMMAND [ARGS]\n\n"
        << "Commands:\n";
    print_command_list(out, "");
    print_options(out, "Global options (also accepted after the command)", global_option_table(),
                  true);
    out << "\n'" << kProgram << " COMMAND --help' describes a command.\n"
        << "Exit status: 0 success; 2 bad arguments or input, with one line 'error: ...' on\n"
        << "stderr naming what was wrong; 1 internal failure.\n";
}

void print_group_help(std::ostream& out, std::string_view group) {
    out << "Usage: " << kProgram << " " << group << " SUBCOMMAND [ARGS]\n\nSubcommands:\n";
    print_command_list(out, group);
    out << "\n'" << kProgram << " " << group << " SUBCOMMAND --help' describes a subcommand.\n";
}

void print_command_help(std::ostream& out, const Command& cmd) {
    out << "Usage: " << usage_line(cmd) << "\n\n" << cmd.summary << "\n";
    if (!cmd.details.empty()) out << "\n" << cmd.details << "\n";
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto& a : cmd.args) rows.emplace_back(std::string{a.name}, std::string{a.help});
    if (!rows.empty()) {
        out << "\nArguments:\n";
        print_table(out, rows);
    }
    print_options(out, "Options", cmd.options, true);
    print_options(out, "Global options", global_option_table(), false);
}

// ---- Dispatch --------------------------------------------------------------------------------

const Command* find_command(std::string_view name) {
    for (const auto& cmd : command_table())
        if (cmd.name == name) return &cmd;
    return nullptr;
}

/// The words that may follow `group` ("decode, encode" for "rlp").
std::string subcommand_words(std::string_view group) {
    std::vector<std::string> words;
    const std::string prefix = std::string{group} + " ";
    for (const auto& cmd : command_table()) {
        if (!cmd.name.starts_with(prefix)) continue;
        const std::string_view rest = cmd.name.substr(prefix.size());
        std::string word{rest.substr(0, rest.find(' '))};
        if (std::find(words.begin(), words.end(), word) == words.end()) words.push_back(word);
    }
    std::string out;
    for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
    return out;
}

bool is_group(std::string_view words) {
    const std::string prefix = std::string{words} + " ";
    return std::any_of(command_table().begin(), command_table().end(),
                       [&](const Command& c) { return c.name.starts_with(prefix); });
}

int dispatch(std::span<const std::string_view> args, Context& ctx) {
    // Global options before the command.
    size_t i = 0;
    for (; i < args.size() && args[i].starts_with("-") && args[i] != "-"; ++i) {
        if (is_help(args[i])) {
            print_main_help(ctx.out);
            return kExitOk;
        }
        if (!args[i].starts_with("--") || args[i] == "--")
            fail("unknown option " + quoted(args[i]));
        const OptionArg opt = read_option(args, i, nullptr, "");
        apply_global_option(ctx.options, opt.name, opt.value);
    }
    if (i == args.size())
        fail("missing command (see '" + std::string{kProgram} + " --help')");

    // The longest run of words that names a command.
    std::string words;
    for (;; ++i) {
        if (i == args.size())
            fail(words + ": missing subcommand (" + subcommand_words(words) + ")");
        const std::string_view arg = args[i];
        if (!words.empty() && is_help(arg)) {
            print_group_help(ctx.out, words);
            return kExitOk;
        }
        const std::string candidate = words.empty() ? std::string{arg} : words + " " + std::string{arg};
        if (const Command* cmd = find_command(candidate)) {
            const auto rest = args.subspan(i + 1);
            for (const auto& a : rest) {
                if (a == "--") break;
                if (is_help(a)) {
                    print_command_help(ctx.out, *cmd);
                    return kExitOk;
                }
            }
            const ParsedArgs parsed = parse_command_args(*cmd, rest, ctx.options);

            std::optional<tbb::global_control> thread_limit;
            if (ctx.options.threads)
                thread_limit.emplace(tbb::global_control::max_allowed_parallelism,
                                     *ctx.options.threads);
            return cmd->handler(ctx, parsed);
        }
        if (!is_group(candidate)) {
            if (words.empty())
                fail("unknown command " + quoted(arg) + " (see '" + std::string{kProgram} +
                     " --help')");
            fail(words + ": unknown subcommand " + quoted(arg) + " (expected " +
                 subcommand_words(words) + ")");
        }
        words = candidate;
    }
}

/// One line, whatever the message holds.
std::string one_line(std::string_view message) {
    std::string s{message};
    std::replace_if(s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    return s;
}

}  // namespace

int run(std::span<const std::string_view> args, std::istream& in, std::ostream& out,
        std::ostream& err) noexcept {
    try {
        Context ctx{{}, in, out, err};
        int status = kExitOk;
        try {
            status = dispatch(args, ctx);
        } catch (const InputError& e) {
            err << "error: " << one_line(e.what()) << "\n";
            return kExitBadInput;
        } catch (const std::exception& e) {
            err << "error: internal: " << one_line(e.what()) << "\n";
            return kExitInternal;
        } catch (...) {
            err << "error: internal: unknown exception\n";
            return kExitInternal;
        }
        out.flush();
        if (!out) {
            err << "error: internal: cannot write the output\n";
            return kExitInternal;
        }
        return status;
    } catch (...) {
        return kExitInternal;  // writing to err itself failed
    }
}

}  // namespace barrel::cli
