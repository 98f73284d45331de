// The datadir commands: `init`, `import`, `export` and `get account|user|block|tx|receipt`
// (barrel/store/store.hpp, barrel/pipeline/pipeline.hpp).
//
// - Every StoreError (not a datadir, locked by another process, already initialized, corruption)
//   is bad input: exit 2 with the store's one-line message.
// - `export` and `get` open the datadir read-only: RocksDB takes no lock for that, so they work
//   while an import in another process holds the datadir, and see the blocks committed when they
//   opened it.
// - `import` reads the chain file block by block (only the RLP prefix of each block tells where
//   it ends), so memory stays at the pipeline's blocks in flight whatever the file's size.

#include <barrel/block/block.hpp>
#include <barrel/block/sender_cache.hpp>
#include <barrel/chain/genesis.hpp>
#include <barrel/cli/cli.hpp>
#include <barrel/cli/files.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/store/store.hpp>

#include "command.hpp"
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <ostream>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace barrel::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string datadir_of(const ParsedArgs& args) { return std::string{*args.value("--datadir")}; }

/// A store error as the command's failure: exit 2 (the datadir, the disk or the input is at
/// fault: not a datadir, locked, damaged, no space, unwritable), except a RocksDB status barrel
/// never provokes, which is a bug in barrel (exit 1).
[[noreturn]] void fail_store(const store::StoreError& e) {
    if (e.code == store::StoreErrorCode::internal) throw std::runtime_error(e.message);
    fail(e.message);
}

std::unique_ptr<store::Store> open_store(const std::string& datadir,
                                         const store::Options& options) {
    auto s = store::Store::open(datadir, options);
    if (!s) fail_store(s.error());
    return std::move(s).value();
}

/// A query result or a store failure, which is bad input (a damaged datadir) like every other.
template <class T>
T or_fail(Expected<T, store::StoreError> v) {
    if (!v) fail(v.error().message);
    return std::move(v).value();
}

// ---- init ------------------------------------------------------------------------------------

int init_handler(Context& ctx, const ParsedArgs& args) {
    const std::string datadir = datadir_of(args);
    const std::string genesis_path{*args.value("--genesis")};
    // The genesis is checked completely before anything is created.
    const auto genesis = chain::parse_genesis(read_small_file(genesis_path, "genesis"));
    if (!genesis) fail("genesis " + squote(genesis_path) + ": " + genesis.error());
    auto s = store::Store::init(datadir, *genesis);
    if (!s) fail_store(s.error());
    const store::Head& head = (*s)->head();
    ctx.out << "initialized " << datadir << " for chain " << genesis->config.chain_id
            << ": genesis block " << to_hex(head.hash) << ", state root " << to_hex(head.state_root)
            << ", " << genesis->alloc.accounts.size() << " accounts, "
            << genesis->alloc.users.size() << " users\n";
    return kExitOk;
}

// ---- import ----------------------------------------------------------------------------------

/// The chain file's reader (files.hpp), standard input for "-", or the error line naming the
/// file. Blocks over `max_block_bytes` are refused as they are met, before they are read.
ChainReader open_chain_file(Context& ctx, const std::string& path, size_t max_block_bytes) {
    if (path == "-") return ChainReader{ctx.in, max_block_bytes};
    auto reader = ChainReader::open(path, max_block_bytes);
    if (!reader) {
        if (reader.error().directory) fail("chain file " + squote(path) + " is a directory");
        fail("cannot read chain file " + squote(path) + ": " + reader.error().reason);
    }
    return std::move(reader).value();
}

/// The single updating line of `import` on a terminal. Cleared when the import ends, however
/// it ends, so the error line or the summary starts on a clean line.
class ProgressLine {
public:
    ProgressLine(std::ostream& err, bool enabled) : m_err{err}, m_enabled{enabled} {}
    ~ProgressLine() {
        if (m_enabled && m_shown) m_err << "\r\x1b[K" << std::flush;
    }
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    void update(uint64_t number, size_t imported, size_t skipped, size_t transactions,
                double elapsed_s) {
        if (!m_enabled) return;
        const auto now = Clock::now();
        if (m_shown && now - m_last < std::chrono::milliseconds(100)) return;
        m_last = now;
        m_shown = true;
        std::ostringstream line;
        line << "\r\x1b[Kimport: block " << number << ", " << imported << " imported, " << skipped
             << " skipped, " << std::fixed << std::setprecision(0)
             << (elapsed_s > 0 ? static_cast<double>(transactions) / elapsed_s : 0.0) << " TPS";
        m_err << line.str() << std::flush;
    }

private:
    std::ostream& m_err;
    bool m_enabled;
    bool m_shown{false};
    Clock::time_point m_last{};
};

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

struct ImportTally {
    size_t imported{0};
    size_t skipped{0};
    size_t transactions{0};
    std::vector<double> decode, verify, execute, commit;

    void add(const pipeline::BlockResult& r) {
        if (r.skipped) {
            ++skipped;
            return;
        }
        ++imported;
        transactions += r.transactions;
        decode.push_back(r.times.decode_ms);
        verify.push_back(r.times.verify_ms);
        execute.push_back(r.times.execute_ms);
        commit.push_back(r.times.commit_ms);
    }
};

void print_summary(std::ostream& out, const ImportTally& t, double wall_s, const store::Head& head,
                   const block::SenderCache& cache) {
    auto sum = [](const std::vector<double>& v) {
        double s = 0;
        for (double x : v) s += x;
        return s;
    };
    out << std::fixed << std::setprecision(1);
    out << "imported " << t.imported << (t.imported == 1 ? " block" : " blocks") << " ("
        << t.transactions << (t.transactions == 1 ? " transaction" : " transactions") << ") in "
        << wall_s * 1000 << " ms, " << std::setprecision(0)
        << (wall_s > 0 ? static_cast<double>(t.transactions) / wall_s : 0.0) << " TPS; skipped "
        << t.skipped << " already stored\n";
    out << "head: block " << head.number << " " << to_hex(head.hash) << "\n";
    out << std::setprecision(2);
    out << "stage      total ms   median ms/block\n";
    const std::pair<const char*, const std::vector<double>*> rows[] = {{"decode", &t.decode},
                                                                       {"verify", &t.verify},
                                                                       {"execute", &t.execute},
                                                                       {"commit", &t.commit}};
    for (const auto& [name, v] : rows)
        out << std::left << std::setw(8) << name << std::right << std::setw(11) << sum(*v)
            << std::setw(18) << median(*v) << "\n";
    const auto stats = cache.stats();
    out << "sender cache: " << stats.hits << " hits, " << stats.misses << " misses\n";
    out.unsetf(std::ios::floatfield | std::ios::adjustfield);
}

int import_handler(Context& ctx, const ParsedArgs& args) {
    const std::string datadir = datadir_of(args);
    store::Options options;
    options.sync = args.has("--sync");
    ChainReader reader =
        open_chain_file(ctx, std::string{args.positionals[0]}, options.max_block_bytes);
    auto store = open_store(datadir, options);

    // Imported transactions are not seen again, so the cache only needs to span the blocks in
    // flight plus a margin (a node with a transaction pool sizes it to the pool): ~26 blocks of
    // 2,500, 8 MiB of table, so that a long import's memory stays flat.
    block::SenderCache cache{block::SenderCache::kDefaultCapacity};
    pipeline::Config config;
    config.sender_cache = &cache;
    if (args.has("--serial")) config.max_in_flight = 1;  // one block at a time, no overlap
    pipeline::Pipeline pipe{*store, config};

    ImportTally tally;
    const bool on_terminal = &ctx.err == &std::cerr && ::isatty(STDERR_FILENO) == 1;
    ProgressLine progress{ctx.err, on_terminal};
    const auto t0 = Clock::now();
    auto elapsed_s = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
    // A block the reader cannot hand on ends the stream there: the blocks before it are
    // committed, as before an invalid block, and the reader's error is the import's.
    std::optional<ChainReadError> read_error;
    auto next_block = [&]() -> std::optional<Bytes> {
        auto block = reader.next();
        if (block) return std::move(*block);
        read_error = std::move(block.error());
        return std::nullopt;
    };
    const auto result = pipe.import_stream(next_block, [&](const pipeline::BlockResult& r) {
        tally.add(r);
        progress.update(r.number, tally.imported, tally.skipped, tally.transactions, elapsed_s());
    });
    const double wall_s = elapsed_s();
    print_summary(ctx.out, tally, wall_s, store->head(), cache);
    if (!result) fail(pipeline::describe(result.error()));
    if (read_error) {
        // A block not read has no number: it is named by its place in the input, as the
        // pipeline names a block that does not decode.
        if (read_error->block)
            fail("block at position " + std::to_string(*read_error->block) + ": " +
                 read_error->reason);
        fail(read_error->reason);
    }
    return kExitOk;
}

static_assert(store::Options::kMaxBlockBytes == 1073741824, "import --help names the limit");

// ---- export ----------------------------------------------------------------------------------

int export_handler(Context& ctx, const ParsedArgs& args) {
    const std::string out_path{*args.value("--out")};
    store::Options options;
    options.read_only = true;
    const auto store = open_store(datadir_of(args), options);
    auto created = AtomicFile::create(out_path, ctx.out);
    if (!created) fail("--out: " + created.error());
    AtomicFile file = std::move(created).value();
    const uint64_t head = store->head().number;
    uint64_t bytes = 0;
    for (uint64_t n = 1; n <= head; ++n) {
        const auto raw = or_fail(store->raw_block(n));
        if (!raw)
            fail("datadir is damaged: block " + std::to_string(n) + " is missing (head is " +
                 std::to_string(head) + ")");
        file.write(*raw);
        bytes += raw->size();
    }
    file.commit();
    // With --out -, the chain file is standard output: the report goes beside the errors.
    std::ostream& report = file.is_standard_output() ? ctx.err : ctx.out;
    report << "exported " << head << (head == 1 ? " block" : " blocks") << " (" << bytes
           << " bytes) to " << out_path << "\n";
    return kExitOk;
}

// ---- get -------------------------------------------------------------------------------------

std::unique_ptr<store::Store> open_for_query(const ParsedArgs& args) {
    store::Options options;
    options.read_only = true;
    return open_store(datadir_of(args), options);
}

void print_document(Context& ctx, const nlohmann::json& doc) { ctx.out << doc.dump(2) << "\n"; }

Hash parse_hash_argument(std::string_view what, std::string_view text) {
    const auto h = hash_from_hex(text);
    if (!h)
        fail("invalid " + std::string{what} + " hash " + squote(text) + ": " +
             std::string{to_string(h.error())});
    return *h;
}

int get_account_handler(Context& ctx, const ParsedArgs& args) {
    const std::string_view text = args.positionals[0];
    const auto address = address_from_hex(text);
    if (!address)
        fail("invalid address " + squote(text) + ": " + std::string{to_string(address.error())});
    const auto store = open_for_query(args);
    const auto doc = or_fail(store->account_document(*address));
    if (!doc) fail("account " + to_hex(*address) + " not found");
    print_document(ctx, *doc);
    return kExitOk;
}

int get_user_handler(Context& ctx, const ParsedArgs& args) {
    const std::string_view name = args.positionals[0];
    const auto store = open_for_query(args);
    const auto doc = or_fail(store->user_document(name));
    if (!doc) fail("user " + squote(name) + " not found");
    print_document(ctx, *doc);
    return kExitOk;
}

/// What a pruned datadir adds to "not found": which blocks it holds.
std::string held_blocks_note(const store::Store& store) {
    if (store.earliest() == 0) return "";
    return " (this datadir holds blocks " + std::to_string(store.earliest()) + " to " +
           std::to_string(store.head().number) + " and the genesis; older ones are pruned)";
}

/// "block N not found", or for a block below the datadir's earliest, that it is pruned.
[[noreturn]] void block_not_found(const store::Store& store, uint64_t number) {
    if (number > 0 && number < store.earliest())
        fail("block " + std::to_string(number) + " is pruned: this datadir holds blocks " +
             std::to_string(store.earliest()) + " to " + std::to_string(store.head().number) +
             " and the genesis");
    fail("block " + std::to_string(number) + " not found");
}

/// The block `text` names in `store`: a number (decimal or 0x), a 32-byte 0x hash, or a tag as
/// go-ethereum and `cast` take it: `earliest` is the first block held (the genesis unless the
/// datadir is pruned); `latest`, and on a single sealer also `pending`, `safe` and `finalized`,
/// the head.
uint64_t block_number_argument(const store::Store& store, std::string_view text) {
    if (text == "earliest") return store.earliest();
    if (text == "latest" || text == "pending" || text == "safe" || text == "finalized")
        return store.head().number;
    // 32 bytes of hex is a hash (no block number is that large); anything else is a number.
    const bool by_hash = text.size() == 66 && (text.starts_with("0x") || text.starts_with("0X"));
    if (by_hash) {
        const Hash hash = parse_hash_argument("block", text);
        const auto n = or_fail(store.block_number(hash));
        if (!n) fail("block " + to_hex(hash) + " not found" + held_blocks_note(store));
        return *n;
    }
    const auto n = parse_u64(text);
    if (!n)
        fail("invalid block " + squote(text) +
             ": expected a number, a 32-byte 0x hash, or latest, earliest, pending, safe or "
             "finalized");
    return *n;
}

int get_block_handler(Context& ctx, const ParsedArgs& args) {
    const auto store = open_for_query(args);
    const uint64_t number = block_number_argument(*store, args.positionals[0]);
    if (args.has("--raw")) {
        if (number == 0) fail("block 0 (the genesis) has no wire form");
        const auto raw = or_fail(store->raw_block(number));
        if (!raw) block_not_found(*store, number);
        ctx.out << to_hex(*raw) << "\n";
        return kExitOk;
    }
    auto doc = or_fail(store->header(number));
    if (!doc) block_not_found(*store, number);
    // A block CometBFT decided: its hash there too, beside barrel's (the Ethereum block hash).
    if (const auto consensus = or_fail(store->consensus_hash(number)))
        (*doc)["cometbft_hash"] = to_hex(*consensus);
    print_document(ctx, *doc);
    return kExitOk;
}

int get_tx_handler(Context& ctx, const ParsedArgs& args) {
    const Hash hash = parse_hash_argument("transaction", args.positionals[0]);
    const auto store = open_for_query(args);
    const auto doc = or_fail(store->transaction(hash));
    if (!doc) fail("transaction " + to_hex(hash) + " not found" + held_blocks_note(*store));
    print_document(ctx, *doc);
    return kExitOk;
}

int get_receipt_handler(Context& ctx, const ParsedArgs& args) {
    const Hash hash = parse_hash_argument("transaction", args.positionals[0]);
    const auto store = open_for_query(args);
    const auto doc = or_fail(store->receipt(hash));
    if (!doc)
        fail("receipt of transaction " + to_hex(hash) + " not found" + held_blocks_note(*store));
    print_document(ctx, *doc);
    return kExitOk;
}

constexpr OptionSpec kDatadirOption{"--datadir", "DIR", "The node's data directory", true};
constexpr std::string_view kQueryDetails =
    "Prints the JSON document as the datadir stores it (docs/formats.md, \"Storage\"). The\n"
    "datadir is opened read-only, so this works while an import holds it. Something that is\n"
    "not there is an error: 'error: ... not found', exit status 2.";
/// `get block`'s: kQueryDetails, and the one member a header document does not hold.
constexpr std::string_view kBlockQueryDetails =
    "Prints the JSON document as the datadir stores it (docs/formats.md, \"Storage\"). The\n"
    "datadir is opened read-only, so this works while an import holds it. Something that is\n"
    "not there is an error: 'error: ... not found', exit status 2.\n"
    "A block a CometBFT network decided (run --abci) also shows 'cometbft_hash', CometBFT's\n"
    "hash of it ('hash' is barrel's, the Ethereum block hash).";

}  // namespace

Command init_command() {
    return {
        .name = "init",
        .summary = "Create a datadir holding a genesis state and block 0",
        .args = {},
        .options = {kDatadirOption,
                    {"--genesis", "FILE",
                     "The genesis (JSON; its members: docs/formats.md, \"Genesis\")", true}},
        .details =
            "DIR must not exist or be an empty directory. The genesis is checked completely\n"
            "before anything is created. Example: barrel-node init --datadir d --genesis g.json",
        .handler = init_handler,
    };
}

Command import_command() {
    return {
        .name = "import",
        .summary = "Import a chain file (blocks concatenated) into a datadir",
        .args = {{"CHAIN", "The chain file, e.g. from 'gen' or 'export'; '-' reads stdin"}},
        .options =
            {
                kDatadirOption,
                {"--sync", "", "fsync the write-ahead log at every block (survives power loss)"},
                {"--serial", "",
                 "One block at a time, no overlap between blocks (stages stay parallel)"},
            },
        .details =
            "Each block is decoded, verified, executed and committed (one atomic write per "
            "block);\n"
            "by default later blocks are decoded and verified while earlier ones execute and\n"
            "commit. Blocks the datadir already has are skipped. The import stops at the first\n"
            "invalid block with 'error: block N: STAGE: REASON' (exit status 2); the blocks\n"
            "before it stay committed and nothing of it is written. On a terminal, progress is\n"
            "shown on stderr; a per-stage timing summary goes to stdout.\n"
            "A block larger than the limit of 1073741824 bytes (the store's max_block_bytes,\n"
            "docs/formats.md \"Limits\") is refused from its RLP prefix, before it is read:\n"
            "'error: block at position N: larger than the limit of 1073741824 bytes', N counted\n"
            "from 0 in the input.",
        .handler = import_handler,
    };
}

Command export_command() {
    return {
        .name = "export",
        .summary = "Write blocks 1..head of a datadir as a chain file",
        .args = {},
        .options = {kDatadirOption,
                    {"--out", "FILE", "The chain file to write; '-' writes stdout", true}},
        .details =
            "The blocks are written exactly as they were imported, so exporting what was\n"
            "imported gives the same bytes. FILE is replaced whole or not at all; a symbolic\n"
            "link is followed and its target replaced; a device, fifo or /dev/stdout is written\n"
            "in place. FILE inside a datadir is refused. With --out -, the report goes to\n"
            "stderr.",
        .handler = export_handler,
    };
}

Command get_account_command() {
    return {.name = "get account",
            .summary = "Print an account (nonce, balance)",
            .args = {{"ADDRESS", "20-byte 0x address"}},
            .options = {kDatadirOption},
            .details = kQueryDetails,
            .handler = get_account_handler};
}

Command get_user_command() {
    return {.name = "get user",
            .summary = "Print a DagTransfer user (name, balance)",
            .args = {{"NAME", "The user name"}},
            .options = {kDatadirOption},
            .details = kQueryDetails,
            .handler = get_user_handler};
}

Command get_block_command() {
    return {.name = "get block",
            .summary = "Print a block header",
            .args = {{"NUMBER|HASH|TAG",
                      "Block number (decimal or 0x), 32-byte 0x block hash, or latest, earliest, "
                      "pending, safe, finalized (the last three: the head)"}},
            .options = {kDatadirOption, {"--raw", "", "Print the wire block as hex instead"}},
            .details = kBlockQueryDetails,
            .handler = get_block_handler};
}

Command get_tx_command() {
    return {.name = "get tx",
            .summary = "Print a transaction with its block number, block hash and index",
            .args = {{"HASH", "32-byte 0x transaction hash"}},
            .options = {kDatadirOption},
            .details = kQueryDetails,
            .handler = get_tx_handler};
}

Command get_receipt_command() {
    return {.name = "get receipt",
            .summary = "Print the receipt of a transaction",
            .args = {{"HASH", "32-byte 0x transaction hash"}},
            .options = {kDatadirOption},
            .details = kQueryDetails,
            .handler = get_receipt_handler};
}

}  // namespace barrel::cli
