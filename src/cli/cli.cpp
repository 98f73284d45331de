// The dispatcher: CLI11 parses the command line against the command table, then run() checks
// what CLI11 leaves to the caller, prints help, and maps outcomes to exit statuses.
//
// Conventions (every command follows them, so later commands only add a table row):
// - `barrel-node [GLOBAL OPTIONS] COMMAND [ARGS]`; a command is one or more words ("rlp decode"),
//   a word that only begins commands ("rlp") is a group (a CLI11 subcommand with subcommands).
// - Options are long (`--name VALUE` or `--name=VALUE`), may come anywhere among the command's
//   arguments, and may be given once (a repeatable one, any number of times). Global options
//   (--threads) are also accepted there.
//   `--` ends the options; `-` is an argument (standard input), and so is a word such as the
//   JSON `-1` or `-x` that is no option. `-h`/`--help` anywhere before `--` prints the help of
//   the command (or group) it follows and exits 0.
// - Usage mistakes are reported as "error: <command>: <what>" ("error: rlp decode: missing
//   argument HEX|-"); mistakes in the input itself name the kind of input ("error: invalid hex:
//   …", "error: invalid JSON: …", "error: tx: nonce: leading_zero").
//
// CLI11 is set up so that it never reports a usage mistake itself except a missing option value:
// every app allows extras (unknown options and words come back as `remaining()`), every option
// keeps all its values, and each leaf has one catch-all positional. run() then names the first
// mistake in the words of the command table (the messages tests and scripts rely on).

#include <barrel/cli/cli.hpp>
#include <barrel/cli/files.hpp>
#include <barrel/version/version.hpp>

#include "command.hpp"
#include "options/bound_options.hpp"
#include <CLI/CLI.hpp>
#include <tbb/global_control.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>
#include <memory>
#include <ostream>
#include <sstream>

namespace barrel::cli {

namespace {

constexpr std::string_view kProgram = "barrel-node";
constexpr size_t kMaxThreads = 65536;
/// The group CLI11 files a leaf's copy of the global options under; help leaves it out there.
constexpr std::string_view kGlobalGroup = "Global options";

/// Every command barrel-node has, in the order `--help` lists them. A new command is a function
/// returning its Command (beside its handler) and one line here.
const std::vector<Command>& command_table() {
    static const std::vector<Command> table = {
        rlp_decode_command(),    rlp_encode_command(),   tx_decode_command(),
        block_inspect_command(), gen_command(),          init_command(),
        import_command(),        export_command(),       get_account_command(),
        get_user_command(),      get_block_command(),    get_tx_command(),
        get_receipt_command(),   recover_command(),      verify_command(),
        run_command(),           testnet_init_command(), testnet_start_command(),
        testnet_stop_command(),  testnet_join_command(),
    };
    return table;
}

const OptionSpec kThreadsOption{
    "--threads", "N",
    "Use at most N threads for parallel work (a positive integer; default: all cores)"};

std::string in_quotes(std::string_view s) {
    constexpr size_t kMax = 40;  // keep the one error line readable
    std::string out = "'";
    out += s.size() > kMax ? std::string{s.substr(0, kMax)} + "..." : std::string{s};
    out += "'";
    return out;
}

// ---- The CLI11 model of the command table ----------------------------------------------------

/// A leaf app and the command it runs. Option values are read off the CLI11 options
/// (`results()`: every occurrence, so that "given twice" is run()'s error, not CLI11's).
struct Leaf {
    const Command* command{nullptr};
    std::vector<std::pair<const OptionSpec*, const CLI::Option*>> options;
    const CLI::Option* threads{nullptr};  ///< the leaf's copy of --threads
    std::vector<std::string> words;       ///< the positional words
};

struct Model {
    CLI::App root{"", std::string{kProgram}};
    const CLI::Option* threads{nullptr};  ///< --threads before the command
    std::map<const CLI::App*, std::unique_ptr<Leaf>> leaves;
};

/// A `--name VALUE` option: one value per occurrence (`--name=` gives an empty one), all kept.
CLI::Option* add_value_option(CLI::App& app, const OptionSpec& spec) {
    return app.add_option(std::string{spec.name})
        ->description(std::string{spec.help})
        ->type_name(std::string{spec.value_name})
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->expected(1)
        ->allow_extra_args(false);
}

/// The app of a word that begins commands ("rlp"), or of the program itself: at most one
/// subcommand; anything else comes back in remaining() for run() to name.
void setup_group(CLI::App& app) {
    app.allow_extras();
    app.require_subcommand(0, 1);
}

void add_leaf(Model& model, CLI::App& parent, const Command& cmd, const std::string& word) {
    CLI::App* app = parent.add_subcommand(word, std::string{cmd.summary});
    app->allow_extras();
    app->footer(std::string{cmd.details});
    auto leaf = std::make_unique<Leaf>();
    leaf->command = &cmd;
    for (const auto& o : cmd.options) {
        CLI::Option* opt =
            o.value_name.empty()
                ? app->add_flag(std::string{o.name})->description(std::string{o.help})
                : add_value_option(*app, o);
        if (o.required) opt->required();  // for help; run() names a missing one itself
        leaf->options.emplace_back(&o, opt);
    }
    leaf->threads = add_value_option(*app, kThreadsOption)->group(std::string{kGlobalGroup});
    // The positional takes the required arguments; the words after them come back in
    // remaining() and run() counts them against the spec. Its minimum is the spec's required
    // count: CLI11 hands the words after a `--` to the parent app once a subcommand's positionals
    // have their minimum. No extra arguments: CLI11 would split a word like `[1,2]` at commas.
    size_t required = 0;
    for (const auto& a : cmd.args) required += a.optional ? 0 : 1;
    app->add_option("args", leaf->words, cmd.args.empty() ? "" : std::string{cmd.args[0].help})
        ->type_name(cmd.args.empty() ? "" : std::string{cmd.args[0].name})
        ->expected(static_cast<int>(required), -1)
        ->allow_extra_args(false);
    model.leaves.emplace(app, std::move(leaf));
}

// ---- Help: generated from the CLI11 apps --------------------------------------------------------

/// "rlp decode" for the app of `rlp decode`, "" for the program.
std::string command_name(const CLI::App* app) {
    std::string name;
    for (; app->get_parent() != nullptr; app = app->get_parent())
        name = name.empty() ? app->get_name() : app->get_name() + " " + name;
    return name;
}

const CLI::Option* positional_of(const CLI::App* app) {
    for (const CLI::Option* o : app->get_options())
        if (o->get_positional()) return o;
    return nullptr;
}

/// " HEX|-" or " [FILE]" or "": the leaf's argument as usage lines show it.
std::string argument_synopsis(const CLI::App* leaf) {
    const CLI::Option* p = positional_of(leaf);
    if (p == nullptr || p->get_type_name().empty()) return "";
    return p->get_items_expected_min() > 0 ? " " + p->get_type_name()
                                           : " [" + p->get_type_name() + "]";
}

/// The options help lists for `app`: its own (not the help flag, the positional or the leaf's
/// copies of the global options).
std::vector<const CLI::Option*> own_options(const CLI::App* app) {
    return app->get_options([&](const CLI::Option* o) {
        return !o->get_positional() && o != app->get_help_ptr() && o->get_group() != kGlobalGroup;
    });
}

/// Two columns, the left padded to the widest entry.
void print_table(std::ostream& out, const std::vector<std::pair<std::string, std::string>>& rows) {
    size_t width = 0;
    for (const auto& [left, right] : rows) width = std::max(width, left.size());
    for (const auto& [left, right] : rows)
        out << "  " << left << std::string(width - left.size() + 3, ' ') << right << "\n";
}

/// What the help flags say; the program's help also lists --version (run() answers it).
enum class HelpFlags { none, help, help_and_version };

void print_options(std::ostream& out, std::string_view title,
                   const std::vector<const CLI::Option*>& opts, HelpFlags flags) {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const CLI::Option* o : opts) {
        const std::string& value = o->get_type_name();
        rows.emplace_back(o->get_name() + (value.empty() ? "" : " " + value), o->get_description());
    }
    if (flags != HelpFlags::none) rows.emplace_back("-h, --help", "Show this help and exit");
    if (flags == HelpFlags::help_and_version)
        rows.emplace_back("--version",
                          "Print the version, git commit, compiler and build type and exit "
                          "(alone)");
    if (rows.empty()) return;
    out << "\n" << title << ":\n";
    print_table(out, rows);
}

/// Every command under `app` (a group or the program): name, argument and summary.
void collect_commands(const CLI::App* app, std::vector<std::pair<std::string, std::string>>& rows) {
    for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_subcommands([](const CLI::App*) { return true; }).empty())
            rows.emplace_back(command_name(sub) + argument_synopsis(sub), sub->get_description());
        else
            collect_commands(sub, rows);
    }
}

void print_main_help(std::ostream& out, const CLI::App* root) {
    out << kProgram << ": a blockchain node that decodes, verifies, executes and commits blocks\n"
        << "in parallel.\n\n"
        << "Usage: " << kProgram << " [GLOBAL OPTIONS] COMMAND [ARGS]\n\n"
        << "Commands:\n";
    std::vector<std::pair<std::string, std::string>> rows;
    collect_commands(root, rows);
    print_table(out, rows);
    print_options(out, "Global options (also accepted after the command)", own_options(root),
                  HelpFlags::help_and_version);
    out << "\n'" << kProgram << " COMMAND --help' describes a command.\n"
        << "Exit status: 0 success; 2 bad arguments or input, with one line 'error: ...' on\n"
        << "stderr naming what was wrong; 1 internal failure.\n";
}

void print_group_help(std::ostream& out, const CLI::App* group) {
    const std::string name = command_name(group);
    out << "Usage: " << kProgram << " " << name << " SUBCOMMAND [ARGS]\n\nSubcommands:\n";
    std::vector<std::pair<std::string, std::string>> rows;
    collect_commands(group, rows);
    print_table(out, rows);
    out << "\n'" << kProgram << " " << name << " SUBCOMMAND --help' describes a subcommand.\n";
}

void print_command_help(std::ostream& out, const CLI::App* leaf) {
    std::string usage = std::string{kProgram} + " " + command_name(leaf);
    bool optional_options = false;
    for (const CLI::Option* o : own_options(leaf)) {
        if (o->get_required())
            usage += " " + o->get_name() + " " + o->get_type_name();
        else
            optional_options = true;
    }
    if (optional_options) usage += " [OPTIONS]";
    usage += argument_synopsis(leaf);
    out << "Usage: " << usage << "\n\n" << leaf->get_description() << "\n";
    if (!leaf->get_footer().empty()) out << "\n" << leaf->get_footer() << "\n";
    if (const CLI::Option* p = positional_of(leaf); p != nullptr && !p->get_type_name().empty()) {
        out << "\nArguments:\n";
        print_table(out, {{p->get_type_name(), p->get_description()}});
    }
    print_options(out, "Options", own_options(leaf), HelpFlags::help);
    const CLI::App* root = leaf;
    while (root->get_parent() != nullptr) root = root->get_parent();
    print_options(out, "Global options", own_options(root), HelpFlags::none);
}

/// CLI11's help() for any app: the layouts above.
class HelpFormatter : public CLI::FormatterBase {
public:
    std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
        std::ostringstream out;
        if (app->get_parent() == nullptr)
            print_main_help(out, app);
        else if (!app->get_subcommands([](const CLI::App*) { return true; }).empty())
            print_group_help(out, app);
        else
            print_command_help(out, app);
        return out.str();
    }
};

/// The CLI11 apps of the command table: one per word, the last word of a command its leaf.
std::unique_ptr<Model> build_model() {
    auto model = std::make_unique<Model>();
    CLI::App& root = model->root;
    root.formatter(std::make_shared<HelpFormatter>());
    setup_group(root);
    model->threads = add_value_option(root, kThreadsOption);
    for (const auto& cmd : command_table()) {
        CLI::App* parent = &root;
        std::string_view rest = cmd.name;
        for (auto space = rest.find(' '); space != std::string_view::npos; space = rest.find(' ')) {
            const std::string word{rest.substr(0, space)};
            CLI::App* group = nullptr;
            for (CLI::App* sub :
                 parent->get_subcommands([&](CLI::App* a) { return a->get_name() == word; }))
                group = sub;
            if (group == nullptr) {
                group = parent->add_subcommand(word, "");
                setup_group(*group);
            }
            parent = group;
            rest.remove_prefix(space + 1);
        }
        add_leaf(*model, *parent, cmd, std::string{rest});
    }
    return model;
}

// ---- What CLI11 leaves to run() --------------------------------------------------------------

/// The app CLI11 got furthest into: the last subcommand chosen.
const CLI::App* deepest(const CLI::App& root) {
    const CLI::App* app = &root;
    for (auto chosen = app->get_subcommands(); !chosen.empty(); chosen = app->get_subcommands())
        app = chosen.front();
    return app;
}

/// "rlp decode: " for an app below the program, "" for the program itself.
std::string where(const CLI::App* app) {
    return app->get_parent() == nullptr ? std::string{} : command_name(app) + ": ";
}

/// "--foo" of "--foo=1".
std::string option_name(std::string_view word) {
    return std::string{word.substr(0, word.find('='))};
}

/// The words that may follow `group` ("decode, encode" for "rlp").
std::string subcommand_words(const CLI::App* group) {
    std::string out;
    for (const CLI::App* sub : group->get_subcommands([](const CLI::App*) { return true; }))
        out += (out.empty() ? "" : ", ") + sub->get_name();
    return out;
}

/// --threads N, from the program's option or the leaf's copy (not both).
void apply_threads(GlobalOptions& options, const CLI::Option* before, const CLI::Option* after,
                   const std::string& leaf_where) {
    const size_t after_count = after != nullptr ? after->count() : 0;
    if (before->count() > 1) fail("option --threads given twice");
    if (after_count > 1) fail(leaf_where + "option --threads given twice");
    if (before->count() + after_count > 1) fail("option --threads given twice");
    const CLI::Option* given = before->count() == 1 ? before : after_count == 1 ? after : nullptr;
    if (given == nullptr) return;
    const std::string& value = given->results().front();
    size_t n = 0;
    bool ok = !value.empty() && value.size() <= 6;
    for (char c : value) {
        if (c < '0' || c > '9') ok = false;
        if (ok) n = n * 10 + static_cast<size_t>(c - '0');
    }
    if (!ok || n == 0 || n > kMaxThreads)
        fail("--threads: expected a positive integer up to " + std::to_string(kMaxThreads) +
             ", got " + in_quotes(value));
    options.threads = n;
}

/// The leaf's arguments as the handler sees them, after every check CLI11 left to us.
ParsedArgs check_leaf(const CLI::App* app, Leaf& leaf) {
    const Command& cmd = *leaf.command;
    const std::string at = where(app);
    ParsedArgs parsed;
    // A word CLI11 took for an option it does not know is an unknown option if it begins with
    // "--"; any other ("-x", "-abc") is an argument like every word that is no option.
    bool options_ended = false;
    for (const std::string& word : app->remaining()) {
        if (word == "--" && !options_ended) {
            options_ended = true;
            continue;
        }
        if (!options_ended && word.starts_with("--"))
            fail(at + "unknown option " + in_quotes(option_name(word)));
        leaf.words.push_back(word);
    }
    for (const auto& [spec, opt] : leaf.options) {
        if (spec->repeatable) {
            for (const std::string& v : opt->results()) parsed.repeated[spec->name].push_back(v);
            continue;
        }
        if (opt->count() > 1) fail(at + "option " + std::string{spec->name} + " given twice");
        if (opt->count() == 1)
            parsed.options.emplace(spec->name, spec->value_name.empty()
                                                   ? std::string_view{}
                                                   : std::string_view{opt->results().front()});
    }
    for (const auto& o : cmd.options)
        if (o.required && !parsed.has(o.name))
            fail(at + "missing option " + std::string{o.name} + " " + std::string{o.value_name});
    const size_t required = static_cast<size_t>(std::count_if(
        cmd.args.begin(), cmd.args.end(), [](const ArgSpec& a) { return !a.optional; }));
    if (leaf.words.size() < required)
        fail(at + "missing argument " + std::string{cmd.args[leaf.words.size()].name});
    if (leaf.words.size() > cmd.args.size())
        fail(at + "unexpected argument " + in_quotes(leaf.words[cmd.args.size()]));
    parsed.positionals.assign(leaf.words.begin(), leaf.words.end());
    return parsed;
}

/// Parses `args` against the apps; false if help was asked for (and printed). The mistakes CLI11
/// reports itself are named here; the rest run() names from what CLI11 leaves.
bool parse(CLI::App& root, std::span<const std::string_view> args, Context& ctx) {
    // CLI11 takes the arguments last first. It reads `--name=` as `--name` and takes the next
    // word as its value; given as two words, the value is the empty string it was meant to be.
    std::vector<std::string> reversed;
    for (auto it = args.rbegin(); it != args.rend(); ++it) {
        if (it->starts_with("--") && it->size() > 3 && it->ends_with("=")) {
            reversed.emplace_back();
            reversed.emplace_back(it->substr(0, it->size() - 1));
        } else {
            reversed.emplace_back(*it);
        }
    }
    try {
        root.parse(reversed);
    } catch (const CLI::RequiredError&) {
        // A required option is missing: named later, after the mistakes that come before it.
    } catch (const CLI::CallForHelp&) {
        ctx.out << deepest(root)->help();
        return false;
    } catch (const CLI::ArgumentMismatch& e) {
        // The one mistake CLI11 reports itself: "--threads: 1 required N missing".
        const CLI::App* app = deepest(root);
        fail(where(app) + options::mismatch_message(*app, e));
    } catch (const CLI::ParseError& e) {
        fail(where(deepest(root)) + e.what());
    }
    return true;
}

int dispatch(std::span<const std::string_view> args, Context& ctx) {
    if (args.size() == 1 && args.front() == "--version") {
        ctx.out << version::describe(kProgram);
        return kExitOk;
    }
    const auto model = build_model();
    CLI::App& root = model->root;
    if (!parse(root, args, ctx)) return kExitOk;

    // Walk down from the program to the command, naming the first thing that is wrong.
    const CLI::App* app = &root;
    for (;;) {
        const auto rest = app->remaining();
        const auto chosen = app->get_subcommands();
        if (app == &root) {
            if (!rest.empty()) {
                if (rest.front().starts_with("-"))
                    fail("unknown option " + in_quotes(option_name(rest.front())));
                fail("unknown command " + in_quotes(rest.front()) + " (see '" +
                     std::string{kProgram} + " --help')");
            }
            apply_threads(ctx.options, model->threads, nullptr, "");
            if (chosen.empty())
                fail("missing command (see '" + std::string{kProgram} + " --help')");
        } else if (!rest.empty()) {
            fail(command_name(app) + ": unknown subcommand " + in_quotes(rest.front()) +
                 " (expected " + subcommand_words(app) + ")");
        } else if (chosen.empty()) {
            fail(command_name(app) + ": missing subcommand (" + subcommand_words(app) + ")");
        }
        app = chosen.front();
        if (const auto it = model->leaves.find(app); it != model->leaves.end()) {
            Leaf& leaf = *it->second;
            const ParsedArgs parsed = check_leaf(app, leaf);
            apply_threads(ctx.options, model->threads, leaf.threads, where(app));

            std::optional<tbb::global_control> thread_limit;
            if (ctx.options.threads)
                thread_limit.emplace(tbb::global_control::max_allowed_parallelism,
                                     *ctx.options.threads);
            return leaf.command->handler(ctx, parsed);
        }
    }
}

/// One line, whatever the message holds.
std::string one_line(std::string_view message) {
    std::string s{message};
    std::replace_if(
        s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    return s;
}

}  // namespace

int run(std::span<const std::string_view> args, std::istream& in, std::ostream& out,
        std::ostream& err) noexcept {
    // Past a file size limit (ulimit -f) a write fails with EFBIG, which is reported, and the
    // temporary file removed, instead of the process dying of SIGXFSZ mid-write.
    std::signal(SIGXFSZ, SIG_IGN);
    try {
        Context ctx{{}, in, out, err};
        int status = kExitOk;
        try {
            status = dispatch(args, ctx);
        } catch (const InputError& e) {
            err << "error: " << one_line(e.what()) << "\n";
            return kExitBadInput;
        } catch (const WriteError& e) {
            // A full disk or a file size limit: the environment, which the user can fix.
            err << "error: " << one_line(e.what()) << "\n";
            return kExitBadInput;
        } catch (const std::exception& e) {
            err << "error: internal: " << one_line(e.what()) << "\n";
            return kExitInternal;
        } catch (...) {
            err << "error: internal: unknown exception\n";
            return kExitInternal;
        }
        // Standard output that cannot take the results (a full disk under a redirection, a
        // closed pipe) is the environment's fault, like any output. errno names the reason only
        // when this flush is what failed.
        const bool was_good = out.good();
        errno = 0;
        out.flush();
        if (!out) {
            const int reason = was_good ? errno : 0;
            err << "error: cannot write standard output"
                << (reason != 0 ? std::string{": "} + std::strerror(reason) : std::string{})
                << "\n";
            return kExitBadInput;
        }
        return status;
    } catch (...) {
        return kExitInternal;  // writing to err itself failed
    }
}

}  // namespace barrel::cli
