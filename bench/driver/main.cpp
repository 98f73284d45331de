// barrel-bench: times 2,500-transaction blocks through decode → verify → execute → commit with an
// embedded RocksDB, at 1 thread and all threads, cold and warm sender cache, one block at a time
// and streamed; and, in the same run, the ceiling set by secp256k1 recovery alone, and how far
// the machine itself scaled over 1 thread meanwhile.

#include <barrel/block/block.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/gen/workload.hpp>
#include <barrel/io/files.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/store/store.hpp>

#include "common/args.hpp"
#include "common/recover_loop.hpp"
#include "options/bound_options.hpp"
#include "report.hpp"
#include "store/testing.hpp"
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>

namespace fs = std::filesystem;
using namespace barrel;
using bench::Failure;
using bench::usage_error;
using options::BoundOptions;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
    size_t blocks{20};
    size_t txs{2500};
    size_t accounts{10'000};
    gen::Mix mix{gen::Mix::transfer};
    double hot_ratio{0};
    uint64_t seed{1};
    std::optional<size_t> threads;  ///< the "all threads" count (default: every core)
    std::string input, genesis, json_out, plot_out;
    bool quick{false};  ///< only the all-threads runs
};

/// The largest --input, in all: every block is held in memory, decoded, for the whole run
/// (docs/formats.md, "Limits").
constexpr size_t kMaxInputBytes = store::Options::kMaxBlockBytes;
static_assert(kMaxInputBytes == 1073741824 && io::kMaxGenesisBytes == 268435456,
              "--help names the limits");

/// A pipeline failure in a timed run: a bug for a generated workload; for --input, a chain
/// that does not belong to its --genesis.
struct ImportFailure {
    std::string message;
};

void bind_args(BoundOptions& o, Args& a) {
    o.count("--blocks", {"Blocks to generate"}, a.blocks, {1, gen::kMaxTotalTxs});
    o.count("--txs", {"Transactions per block"}, a.txs, {1, gen::kMaxTxsPerBlock});
    o.count("--accounts", {"Funded accounts"}, a.accounts, {2, gen::kMaxAccounts});
    o.value("--mix", "KIND", {"transfer, dag or mixed"}, std::string{gen::to_string(a.mix)},
            [&a](const std::string& text) {
                const auto m = gen::parse_mix(text);
                if (!m) return "expected transfer, dag or mixed, got \"" + text + "\"";
                a.mix = *m;
                return std::string{};
            });
    std::ostringstream hot_ratio;
    hot_ratio << a.hot_ratio;
    o.value("--hot-ratio", "R", {"Probability (0 to 1) that a transaction touches the hot set"},
            hot_ratio.str(), [&a](const std::string& text) {
                char* end = nullptr;
                const double r = std::strtod(text.c_str(), &end);
                if (end == text.c_str() || *end != '\0' || !(r >= 0 && r <= 1))
                    return "expected a number in [0, 1], got \"" + text + "\"";
                a.hot_ratio = r;
                return std::string{};
            });
    o.count("--seed", "S", {"Seed of the workload"}, a.seed, {0});
    o.count("--threads", "N", {"The 'all threads' count", "every core"}, a.threads, {1, 65536});
    o.text("--json", "FILE",
           {"Write the runs as JSON here ('-': stdout, and the table goes to stderr)"}, a.json_out);
    o.text("--plot", "FILE.svg",
           {"Draw the per-stage times as an SVG chart here ('-': stdout, as --json)"}, a.plot_out);
    o.text("--input", "FILE",
           {"A chain file (needs --genesis) or a plain RLP transaction list (decode + verify "
            "only); at most 1073741824 bytes in all, docs/formats.md \"Limits\""},
           a.input);
    o.text("--genesis", "G.json",
           {"The genesis of the --input chain file (at most 268435456 bytes)"}, a.genesis);
    o.flag("--quick", "Only the all-threads runs", a.quick);
}

Args parse_args(int argc, char** argv) {
    Args a;
    BoundOptions bound;
    bind_args(bound, a);
    CLI::App& app = bound.app();
    app.name("barrel-bench");
    app.description(
        "Times blocks through decode, verify, execute and commit (RocksDB in a temporary "
        "datadir)\nat 1 thread and N threads, cold and warm sender cache, one block at a time and "
        "streamed.");
    app.allow_extras();  // an unknown option is named by parse_command_line, in one line
    bench::parse_command_line(app, argc, argv);
    if (a.json_out == "-" && a.plot_out == "-")
        usage_error("--json and --plot cannot both write standard output");
    if (a.input.empty() && !a.genesis.empty())
        usage_error("--genesis: only with --input (a chain file)");
    return a;
}

/// The --genesis file, whole.
Bytes read_genesis_file(const std::string& path) {
    auto bytes = io::read_file(path, io::kMaxGenesisBytes);
    if (!bytes && bytes.error().too_large)
        usage_error("--genesis: '" + path + "' is " + bytes.error().reason);
    if (!bytes) usage_error("--genesis: cannot read '" + path + "': " + bytes.error().reason);
    return std::move(bytes).value();
}

/// The next item of the --input file (the chain-file reader, io/files.hpp), nothing at its
/// end; `total` bytes so far, bounded by kMaxInputBytes.
std::optional<Bytes> next_input_item(io::ChainReader& reader, const std::string& path,
                                     size_t& total) {
    auto item = reader.next();
    if (!item) {
        const io::ChainReadError& e = item.error();
        usage_error("--input: " + (e.block ? "'" + path + "': block " +
                                                 std::to_string(*e.block + 1) + ": " + e.reason
                                           : e.reason));
    }
    if (*item) {
        total += (*item)->size();
        if (total > kMaxInputBytes)
            usage_error("--input: '" + path + "' is " + io::over_limit(kMaxInputBytes));
    }
    return std::move(*item);
}

/// One import of all blocks into its own fresh datadir, at a fixed thread count.
class Import {
public:
    Import(const chain::Genesis& genesis, const std::vector<block::Block>& decoded, size_t threads,
           bool warm, bool streamed, const fs::path& tmp_root)
        : m_dir{tmp_root /
                ("run-" + std::to_string(threads) + (warm ? "w" : "c") + (streamed ? "s" : "o"))},
          m_cache{cache_capacity(decoded)} {
        fs::remove_all(m_dir);
        auto store = store::Store::init(m_dir, genesis);
        if (!store) throw Failure{1, store.error().message};
        m_store = std::move(store).value();
        if (warm) {
            // What a transaction pool does when it admits a transaction: remember its sender.
            for (const auto& b : decoded)
                for (size_t i = 0; i < b.size(); ++i) m_cache.insert(b.tx_hashes[i], b.senders[i]);
        }
        pipeline::Config config;
        config.parallel = threads > 1;
        config.sender_cache = &m_cache;
        config.max_in_flight = streamed ? 4 : 1;
        m_pipeline.emplace(*m_store, config);
        run.threads = threads;
        run.warm = warm;
        run.streamed = streamed;
        run.txs_per_block = decoded.empty() ? 0 : decoded.front().size();
    }
    ~Import() {
        m_pipeline.reset();
        m_store.reset();
        fs::remove_all(m_dir);
    }
    Import(const Import&) = delete;
    Import& operator=(const Import&) = delete;

    /// Imports one block under this import's thread limit, adding its wall time and stage times.
    void import_one(const Bytes& wire) {
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, run.threads);
        const auto t0 = Clock::now();
        auto r = m_pipeline->import_block(wire);
        run.wall_ms += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (!r) fail(r.error());
        record(*r);
    }

    /// Imports every block through the streaming pipeline.
    void import_stream(const std::vector<Bytes>& wires) {
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, run.threads);
        size_t next = 0;
        const auto t0 = Clock::now();
        auto result = m_pipeline->import_stream(
            [&]() -> std::optional<Bytes> {
                if (next == wires.size()) return std::nullopt;
                return wires[next++];
            },
            [this](const pipeline::BlockResult& r) { record(r); });
        run.wall_ms += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (!result) fail(result.error());
    }

    /// Waits until this datadir's flushes and compactions are done.
    void settle() const { store::testing::wait_for_background_work(*m_store); }

    bench::Run run;

private:
    [[noreturn]] static void fail(const pipeline::PipelineError& e) {
        throw ImportFailure{pipeline::describe(e)};
    }
    void record(const pipeline::BlockResult& r) {
        ++run.blocks;
        run.stages.decode.push_back(r.times.decode_ms);
        run.stages.verify.push_back(r.times.verify_ms);
        run.stages.execute.push_back(r.times.execute_ms);
        run.stages.commit.push_back(r.times.commit_ms);
    }

    /// A pool-sized cache (the default), or more when the warm runs' pool holds more than that:
    /// FIFO eviction would otherwise turn the first blocks' hits into misses.
    static size_t cache_capacity(const std::vector<block::Block>& decoded) {
        size_t txs = 0;
        for (const auto& b : decoded) txs += b.size();
        return std::max(txs, block::SenderCache::kDefaultCapacity);
    }

    fs::path m_dir;
    std::unique_ptr<store::Store> m_store;
    block::SenderCache m_cache;
    std::optional<pipeline::Pipeline> m_pipeline;
};

/// One block at a time at 1 thread and at `threads`, in lockstep: each block is imported into
/// both datadirs back to back, the order alternating, so that the per-stage speedups compare
/// times taken in the same few milliseconds rather than minutes apart on a machine whose speed
/// drifts. Before each import both datadirs' background flushes and compactions are let finish:
/// the import's own as well as the other's, since a flush left running beside a 1-thread import
/// has a core to itself but takes one from an all-thread import. These rows are the stages' own
/// costs; RocksDB's background work shows in the streamed rows only.
std::pair<bench::Run, bench::Run> measure_paired(const chain::Genesis& genesis,
                                                 const std::vector<Bytes>& wires,
                                                 const std::vector<block::Block>& decoded,
                                                 size_t threads, bool warm,
                                                 const fs::path& tmp_root) {
    Import one{genesis, decoded, 1, warm, false, tmp_root};
    Import all{genesis, decoded, threads, warm, false, tmp_root};
    for (size_t i = 0; i < wires.size(); ++i) {
        Import& first = i % 2 == 0 ? one : all;
        Import& second = i % 2 == 0 ? all : one;
        one.settle();
        all.settle();
        first.import_one(wires[i]);
        first.settle();
        second.import_one(wires[i]);
    }
    return {std::move(one.run), std::move(all.run)};
}

/// A streamed import of all blocks into a fresh datadir.
bench::Run measure_streamed(const chain::Genesis& genesis, const std::vector<Bytes>& wires,
                            const std::vector<block::Block>& decoded, size_t threads, bool warm,
                            const fs::path& tmp_root) {
    Import import{genesis, decoded, threads, warm, true, tmp_root};
    import.import_stream(wires);
    return std::move(import.run);
}

/// --input with a plain transaction list: decode and verify only.
int bench_tx_list(const Bytes& bytes, size_t tx_count, size_t all_threads) {
    std::cout << "input: plain transaction list, " << bytes.size() << " bytes\n";
    for (size_t threads : {size_t{1}, all_threads}) {
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
        std::vector<double> dec, ver, warm;
        block::SenderCache cache{
            std::max(tx_count, block::SenderCache::kDefaultCapacity)};  // the warm pass must hit
        for (int rep = 0; rep < 7; ++rep) {
            auto t0 = Clock::now();
            auto b = block::decode_tx_list(bytes, threads > 1);
            dec.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
            if (!b) {
                std::cerr << "error: " << block::describe(b.error()) << "\n";
                return 2;
            }
            const uint64_t chain_id =
                !b->txs.empty() && b->txs[0].chain_id ? *b->txs[0].chain_id : 1;
            cache.clear();
            t0 = Clock::now();
            auto v = block::recover_senders(*b, chain_id, &cache, threads > 1);
            ver.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
            if (!v) {
                std::cerr << "error: " << block::describe(v.error()) << "\n";
                return 2;
            }
            t0 = Clock::now();
            (void)block::recover_senders(*b, chain_id, &cache, threads > 1);
            warm.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
        std::printf(
            "%zu thread(s): decode median %.3f ms, verify cold median %.3f ms, verify warm median "
            "%.3f ms\n",
            threads, bench::summarise(dec).median_ms, bench::summarise(ver).median_ms,
            bench::summarise(warm).median_ms);
    }
    return 0;
}

}  // namespace

namespace {

/// Removes the scratch datadirs' root however the run ends.
struct ScratchRoot {
    fs::path path;
    explicit ScratchRoot(fs::path p) : path{std::move(p)} { fs::create_directories(path); }
    ~ScratchRoot() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    ScratchRoot(const ScratchRoot&) = delete;
    ScratchRoot& operator=(const ScratchRoot&) = delete;
};

/// The benchmark of `args`: the input read or generated, the runs measured and reported.
int measure(const Args& args) {
    const size_t all_threads =
        args.threads.value_or(std::max(1u, std::thread::hardware_concurrency()));

    // Both outputs are created (and so known to be writable) before anything is measured.
    std::optional<io::AtomicFile> json_file = bench::create_output("--json", args.json_out);
    std::optional<io::AtomicFile> plot_file = bench::create_output("--plot", args.plot_out);

    chain::Genesis genesis;
    std::vector<Bytes> wires;
    if (!args.input.empty()) {
        // A chain file if its first item is a block (the chain-file reader, io/files.hpp), else
        // a plain transaction list.
        auto reader = io::ChainReader::open(args.input, store::Options::kMaxBlockBytes);
        if (!reader)
            usage_error("--input: cannot read '" + args.input + "': " + reader.error().reason);
        size_t total = 0;
        auto first = next_input_item(*reader, args.input, total);
        if (!first) usage_error("--input: '" + args.input + "' is empty");
        const auto first_block = block::decode_block(*first);
        if (!first_block) {
            // A transaction list is the first item; one more shows the decoder any trailing
            // bytes (the reader keeps no more than a look past what is not a list).
            Bytes bytes = std::move(*first);
            if (auto more = next_input_item(*reader, args.input, total))
                bytes.insert(bytes.end(), more->begin(), more->end());
            auto as_list = block::decode_tx_list(bytes, true);
            if (!as_list)
                usage_error("--input: '" + args.input + "' is neither a chain file (block 1: " +
                            block::describe(first_block.error()) + ") nor a transaction list (" +
                            block::describe(as_list.error()) + ")");
            // A transaction list is timed for decode and verify only: there are no block runs
            // to save or draw.
            if (json_file || plot_file)
                usage_error(
                    std::string{json_file ? "--json" : "--plot"} + ": '" + args.input +
                    "' is a transaction list, timed for decode and verify only; --json and --plot "
                    "need blocks");
            return bench_tx_list(bytes, as_list->txs.size(), all_threads);
        }
        if (args.genesis.empty())
            usage_error("--input: '" + args.input + "' is a chain file, which needs --genesis");
        const Bytes genesis_text = read_genesis_file(args.genesis);
        auto g = chain::parse_genesis(std::string{as_chars(genesis_text)});
        if (!g) usage_error("--genesis: " + g.error());
        genesis = *g;
        wires.push_back(std::move(*first));
        while (auto wire = next_input_item(*reader, args.input, total))
            wires.push_back(std::move(*wire));
    } else {
        gen::Options o;
        o.blocks = args.blocks;
        o.txs = args.txs;
        o.accounts = std::max(args.accounts, args.txs * 2 > 10'000 ? args.txs * 2 : args.accounts);
        o.mix = args.mix;
        o.hot_ratio = args.hot_ratio;
        o.seed = args.seed;
        std::cerr << "generating " << o.blocks << " blocks x " << o.txs << " transactions ("
                  << gen::to_string(o.mix) << ")...\n";
        auto w = gen::generate(o);
        if (!w) usage_error(w.error());
        genesis = w->genesis;
        wires = std::move(w->blocks);
    }

    // Decoded and verified once, outside the timings: the warm cache's content and the ceiling's
    // signatures.
    std::vector<block::Block> decoded;
    for (const auto& w : wires) {
        auto b = block::decode_block(w);
        if (!b)
            usage_error("block " + std::to_string(decoded.size() + 1) + ": " +
                        block::describe(b.error()));
        if (auto v = block::recover_senders(*b, genesis.config.chain_id, nullptr); !v)
            usage_error("block " + std::to_string(decoded.size() + 1) + ": " +
                        block::describe(v.error()));
        decoded.push_back(std::move(b).value());
    }

    const ScratchRoot scratch{fs::temp_directory_path() /
                              ("barrel-bench-" + std::to_string(getpid()))};
    const fs::path& tmp_root = scratch.path;
    std::vector<size_t> thread_counts{1, all_threads};
    if (args.quick || all_threads == 1) thread_counts = {all_threads};
    // The ceiling is measured before and after the runs, and its median taken over both, so that
    // a drift in the machine's speed during the runs moves it as it moves them.
    bench::RecoverLoop recover_loop;
    for (const auto& b : decoded)
        for (const auto& t : b.txs)
            if (!recover_loop.add(t)) break;
    bench::RecoverRates recover_rates;
    recover_rates.sample(recover_loop, all_threads);
    std::vector<bench::Run> runs;
    for (bool warm : {false, true}) {
        const char* cache = warm ? "warm" : "cold";
        if (args.quick || all_threads == 1) {
            std::cerr << "run: " << all_threads << " thread(s), " << cache
                      << " cache, one block at a time\n";
            Import import{genesis, decoded, all_threads, warm, false, tmp_root};
            for (const auto& w : wires) import.import_one(w);
            runs.push_back(std::move(import.run));
        } else {
            std::cerr << "run: 1 and " << all_threads << " thread(s) in lockstep, " << cache
                      << " cache, one block at a time\n";
            auto [one, all] = measure_paired(genesis, wires, decoded, all_threads, warm, tmp_root);
            runs.push_back(std::move(one));
            runs.push_back(std::move(all));
        }
        for (size_t threads : thread_counts) {
            std::cerr << "run: " << threads << " thread(s), " << cache << " cache, streamed\n";
            runs.push_back(measure_streamed(genesis, wires, decoded, threads, warm, tmp_root));
        }
    }
    // Rows in the table's order: by thread count, then cache, then one-by-one before streamed.
    std::stable_sort(runs.begin(), runs.end(), [](const bench::Run& a, const bench::Run& b) {
        return std::tie(a.threads, a.warm, a.streamed) < std::tie(b.threads, b.warm, b.streamed);
    });
    recover_rates.sample(recover_loop, all_threads);
    // Medians, though not of milliseconds.
    const double ceiling = bench::summarise(recover_rates.all_threads).median_ms;
    const double one_thread = bench::summarise(recover_rates.one_thread).median_ms;

    // With --json - or --plot -, standard output is that document's: the table goes to stderr.
    const bool stdout_taken = (json_file && json_file->is_standard_output()) ||
                              (plot_file && plot_file->is_standard_output());
    std::ostream& report = stdout_taken ? std::cerr : std::cout;
    report << "barrel-bench: " << wires.size() << " blocks x "
           << (decoded.empty() ? 0 : decoded[0].size()) << " transactions, " << all_threads
           << " threads max\n";
    report << "recovery ceiling (bare secp256k1_ecdsa_recover on " << all_threads
           << " threads): " << static_cast<long>(ceiling) << " TPS\n";
    char line[256];
    if (one_thread > 0) {
        std::snprintf(line, sizeof line,
                      "the same loop on 1 thread: %ld TPS, so this machine scaled %.2fx over 1 "
                      "thread during the run (no stage can beat that)\n",
                      static_cast<long>(one_thread), ceiling / one_thread);
        report << line;
    }
    report << "\n";
    report << bench::table(runs, ceiling);
    std::snprintf(line, sizeof line, "\npeak RSS: %.0f MiB\n", bench::peak_rss_mib());
    report << line << std::flush;

    if (json_file) {
        auto doc = bench::to_json(runs, ceiling, bench::machine_info(all_threads));
        doc["peak_rss_mib"] = bench::peak_rss_mib();
        if (one_thread > 0) {
            doc["recover_1_thread_tps"] = one_thread;
            doc["machine_scaling"] = ceiling / one_thread;
        }
        json_file->write(doc.dump(2) + "\n");
        json_file->commit();
    }
    if (plot_file) {
        plot_file->write(bench::svg_chart(
            runs, "barrel: per-stage time of a block (" +
                      std::to_string(decoded.empty() ? 0 : decoded[0].size()) + " transactions)"));
        plot_file->commit();
    }
    return 0;
}

int run(int argc, char** argv) {
    const Args args = parse_args(argc, argv);
    try {
        return measure(args);
    } catch (const ImportFailure& e) {
        // The first run applies every block to the genesis: a failure there is the input's (a
        // chain of another genesis, an invalid block), or a bug for a generated workload.
        if (args.input.empty()) throw Failure{1, e.message};
        usage_error("--input: '" + args.input + "' does not apply to --genesis '" + args.genesis +
                    "': " + e.message);
    }
}

}  // namespace

int main(int argc, char** argv) {
    return bench::guarded_main([&] { return run(argc, argv); });
}
