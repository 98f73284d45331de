// `recover`: accepts the state a damaged datadir's RocksDB recovers to as its head, after the
// open of every other command refused it (barrel/store/store.hpp, Store::recover;
// docs/architecture.md, "Store").

#include <barrel/cli/cli.hpp>
#include <barrel/store/store.hpp>

#include "command.hpp"

#include <ostream>
#include <string>

namespace barrel::cli {

namespace {

int recover_handler(Context& ctx, const ParsedArgs& args) {
    const std::string datadir{*args.value("--datadir")};
    const auto r = store::Store::recover(datadir);
    if (!r) fail(r.error().message);
    const uint64_t head = r->head.number;
    if (!r->changed) {
        ctx.out << datadir << " needs no recovery: its head is block " << head << "\n";
        return kExitOk;
    }
    ctx.out << "recovered " << datadir << " to block " << head;
    if (r->committed_damaged) {
        ctx.out << " (its COMMITTED record was damaged and now names block " << head << ")\n";
    } else {
        const uint64_t lost = *r->committed;
        ctx.out << " (" << (lost == head + 1 ? "block " : "blocks ") << head + 1
                << (lost == head + 1 ? " was" : ".." + std::to_string(lost) + " were")
                << " lost: import them again)\n";
    }
    return kExitOk;
}

}  // namespace

Command recover_command() {
    return {
        .name = "recover",
        .summary = "Accept the older head a damaged datadir recovers to",
        .args = {},
        .options = {{"--datadir", "DIR", "The node's data directory", true}},
        .details =
            "Every other command refuses a datadir whose RocksDB recovers to an older block than\n"
            "had been committed (a damaged write-ahead log or MANIFEST), changing nothing. This\n"
            "accepts that block as the head and says which blocks were lost; import them again.\n"
            "On a datadir that needs nothing it says so and changes nothing.",
        .handler = recover_handler,
    };
}

}  // namespace barrel::cli
