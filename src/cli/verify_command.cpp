// `verify`: recomputes the state commitment from every stored entry and compares it with the
// head's state root (store::verify_state; docs/formats.md, "State commitment").

#include <barrel/cli/cli.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/store/store.hpp>

#include "command.hpp"

#include <chrono>
#include <cstdio>
#include <ostream>
#include <string>

namespace barrel::cli {

/// Exit status of `verify` when the entries do not sum to the head's root: 1, as cmp and diff
/// answer "different", apart from 2 (the datadir could not be read at all).
constexpr int kExitStateMismatch = 1;

Expected<std::string, StateCheckFailure> check_state(const store::Store& store,
                                                     const std::string& datadir) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto checked = store::verify_state(store);
    if (!checked) return unexpected(StateCheckFailure{false, checked.error().message});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string block = "block " + std::to_string(checked->head.number);
    if (!checked->matches())
        return unexpected(StateCheckFailure{
            true, "state mismatch in " + datadir + ": its " + std::to_string(checked->entries) +
                      " entries sum to state root " + to_hex(checked->recomputed_root) +
                      ", but its head, " + block + ", commits to " +
                      to_hex(checked->head.state_root)});
    char timing[32];
    std::snprintf(timing, sizeof timing, "%.2f", seconds);
    return "verified " + datadir + ": " + std::to_string(checked->entries) +
           " entries sum to the state root of its head, " + block + ", " +
           to_hex(checked->head.state_root) + " (" + timing + " s)";
}

namespace {

int verify_handler(Context& ctx, const ParsedArgs& args) {
    const std::string datadir{*args.value("--datadir")};
    store::Options options;
    options.read_only = true;
    auto opened = store::Store::open(datadir, options);
    if (!opened) fail(opened.error().message);
    const auto checked = check_state(**opened, datadir);
    if (!checked) {
        // A read that failed is the datadir's fault like any other (exit 2); a sum that does not
        // match is what this command is for (exit 1).
        if (!checked.error().mismatch) fail(checked.error().message);
        ctx.err << "error: " << checked.error().message << "\n";
        return kExitStateMismatch;
    }
    ctx.out << *checked << "\n";
    return kExitOk;
}

}  // namespace

Command verify_command() {
    return {
        .name = "verify",
        .summary = "Check that the stored state is the state its head commits to",
        .args = {},
        .options = {{"--datadir", "DIR", "The node's data directory", true}},
        .details =
            "Sums the lattice of every stored account and DagTransfer user afresh, on every\n"
            "thread, and compares its root with the head's state root (docs/formats.md, \"State\n"
            "commitment\"). Read-only: a running node's datadir can be checked beside it.\n"
            "Exit 0: it matches; 1: it does not (the line names both roots); 2: the datadir\n"
            "could not be read.",
        .handler = verify_handler,
    };
}

}  // namespace barrel::cli
