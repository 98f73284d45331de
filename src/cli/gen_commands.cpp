// `gen`: a deterministic, sealed workload (gen/workload.hpp) written as a genesis file and
// a chain file. Both files appear whole or not at all: each is written to a temporary file beside
// its target and renamed over it only once everything has been generated and written.

#include <barrel/cli/cli.hpp>
#include <barrel/cli/files.hpp>
#include <barrel/gen/workload.hpp>

#include "command.hpp"
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>

namespace barrel::cli {

namespace {

namespace fs = std::filesystem;

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

/// The target of `option`, created now (files.hpp) so that a path that cannot be written is
/// found before the work starts.
AtomicFile create_target(Context& ctx, std::string_view option, const std::string& target) {
    auto file = AtomicFile::create(target, ctx.out);
    if (!file) fail(std::string{option} + ": " + file.error());
    return std::move(file).value();
}

/// Whether two paths name one file, whether or not it exists yet ("a", "./a", "d/../a", links).
bool same_file(const std::string& a, const std::string& b) {
    auto normal = [](const std::string& p) {
        std::error_code ec;
        fs::path path = fs::weakly_canonical(fs::absolute(p, ec), ec);
        return ec ? fs::path{p}.lexically_normal() : path;
    };
    std::error_code ec;
    return a == b || normal(a) == normal(b) || fs::equivalent(a, b, ec);
}

size_t parse_count_option(const ParsedArgs& args, std::string_view name, size_t fallback) {
    const auto v = args.value(name);
    return v ? static_cast<size_t>(parse_u64_option(name, *v)) : fallback;
}

double parse_ratio_option(std::string_view name, std::string_view value) {
    double ratio = 0;
    const auto [end, ec] =
        std::from_chars(value.data(), value.data() + value.size(), ratio, std::chars_format::fixed);
    if (value.empty() || ec != std::errc{} || end != value.data() + value.size())
        fail(std::string{name} + ": expected a number between 0 and 1, got '" + std::string{value} +
             "'");
    return ratio;
}

int gen_command_handler(Context& ctx, const ParsedArgs& args) {
    gen::Options o;
    o.blocks = parse_count_option(args, "--blocks", o.blocks);
    o.txs = parse_count_option(args, "--txs", o.txs);
    o.accounts = parse_count_option(args, "--accounts", o.accounts);
    // The default hot set shrinks with a tiny account set instead of making it an error.
    o.hot_accounts =
        parse_count_option(args, "--hot-accounts", std::min(o.hot_accounts, o.accounts));
    if (const auto v = args.value("--hot-ratio"))
        o.hot_ratio = parse_ratio_option("--hot-ratio", *v);
    if (const auto v = args.value("--mix")) {
        const auto mix = gen::parse_mix(*v);
        if (!mix) fail("--mix: expected transfer, dag or mixed, got '" + std::string{*v} + "'");
        o.mix = *mix;
    }
    if (const auto v = args.value("--seed")) o.seed = parse_u64_option("--seed", *v);
    if (const auto v = args.value("--chain-id")) o.chain_id = parse_u64_option("--chain-id", *v);
    if (const auto valid = gen::validate(o); !valid) fail(valid.error());

    const std::string genesis_path{*args.value("--genesis")};
    const std::string chain_path{*args.value("--out")};
    if (same_file(genesis_path, chain_path))
        fail("--genesis and --out name the same file " + in_quotes(chain_path));

    // Both targets are checked (by creating their temporary files) before the work starts.
    AtomicFile genesis_file = create_target(ctx, "--genesis", genesis_path);
    AtomicFile chain_file = create_target(ctx, "--out", chain_path);

    auto workload = gen::generate(o);
    if (!workload) throw std::runtime_error(workload.error());  // options were valid: a bug

    genesis_file.write(chain::to_json_text(workload->genesis));
    size_t chain_bytes = 0;
    for (const Bytes& b : workload->blocks) {
        chain_file.write(b);
        chain_bytes += b.size();
    }
    // Both on disk before either is renamed: a failure leaves the old pair.
    genesis_file.finish();
    chain_file.finish();
    chain_file.commit();
    genesis_file.commit();

    // An output on standard output ("-") has it to itself: the report goes beside the errors.
    std::ostream& report =
        genesis_file.is_standard_output() || chain_file.is_standard_output() ? ctx.err : ctx.out;
    report << "wrote " << o.blocks << (o.blocks == 1 ? " block" : " blocks") << " of " << o.txs
           << (o.txs == 1 ? " transaction" : " transactions") << " (" << gen::to_string(o.mix)
           << ", seed " << o.seed << ") to " << chain_path << " (" << chain_bytes
           << " bytes) and the genesis of chain " << o.chain_id << " to " << genesis_path << "\n";
    return kExitOk;
}

}  // namespace

Command gen_command() {
    return {
        .name = "gen",
        .summary = "Generate a deterministic signed workload, sealed by executing it",
        .args = {},
        .options =
            {
                {"--genesis", "FILE", "Write the genesis (JSON) here ('-': stdout)", true},
                {"--out", "FILE",
                 "Write the chain file (the blocks concatenated) here ('-': stdout)", true},
                {"--blocks", "N", "Number of blocks (at least 1)", true},
                {"--txs", "N", "Transactions per block (1 to 1000000; default 2500)"},
                {"--accounts", "N",
                 "Funded accounts, and DagTransfer users for dag/mixed (2 to 1000000; default "
                 "10000)"},
                {"--mix", "KIND", "transfer, dag or mixed (default transfer)"},
                {"--hot-ratio", "R",
                 "Probability (0 to 1) that a transaction touches the hot set (default 0)"},
                {"--hot-accounts", "K",
                 "Size of the hot set of accounts/users (default 4, or --accounts if fewer)"},
                {"--seed", "S", "Seed of every random choice and of the account keys (default 1)"},
                {"--chain-id", "N", "Chain id of the genesis and the signatures (default 1)"},
            },
        .details =
            "The same options give byte-identical files whatever --threads is. Every block is\n"
            "valid against the genesis and its predecessors, and its header (gas used, roots) is\n"
            "filled in by executing it. Mixes: 'transfer' is EIP-155 value transfers; 'dag' is\n"
            "DagTransfer precompile calls, mostly userTransfer, some returning FISCO error codes;\n"
            "'mixed' is both in every transaction type, plus malformed precompile calls and at\n"
            "most one contract creation per block. --hot-ratio makes transactions contend for\n"
            "the first --hot-accounts accounts/users (1 and 1 make every block one chain). The\n"
            "files are written whole or not at all; a symbolic link is followed and its target\n"
            "replaced; a device, fifo or /dev/stdout is written in place; a file inside a\n"
            "datadir is refused. With '-' for one of them, the report goes to stderr.\n"
            "Example: barrel-node gen --genesis g.json --out chain.rlp --blocks 10 --mix dag",
        .handler = gen_command_handler,
    };
}

}  // namespace barrel::cli
