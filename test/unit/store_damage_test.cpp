// A damaged datadir is refused, unchanged, with what it recovered to (issue 20, finding 5):
// RocksDB's point-in-time recovery passes over a damaged write-ahead log or MANIFEST silently,
// answering from an older state, and a writer's open then deleted the table files the intact
// MANIFEST still needed. Each kind of damage below is refused by a reader and by a writer with
// its exact message, every file of the datadir is byte for byte what it was, and
// Store::recover accepts the rollback only when asked.

#include <barrel/core/hex.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/store/store.hpp>

#include "child_process.hpp"
#include "store/committed.hpp"
#include "store/testing.hpp"
#include "store_commit.hpp"
#include "store_dump.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>

#include <fstream>
#include <map>

using namespace barrel;
using barrel::test::dump_datadir;
using barrel::test::dump_diff;
using barrel::test::generate_or_throw;
using barrel::test::ScratchDir;

namespace {

namespace fs = std::filesystem;

const gen::Workload& damage_workload() {
    static const gen::Workload w =
        generate_or_throw({.blocks = 5, .txs = 20, .accounts = 8, .mix = gen::Mix::mixed});
    return w;
}

void import(store::Store& s, size_t up_to) {
    const auto failed = test::commit_blocks(s, damage_workload(), up_to);
    EXPECT_FALSE(failed) << failed->message;
}

std::unique_ptr<store::Store> open_writer(const fs::path& dir) {
    auto s = store::Store::open(dir);
    EXPECT_TRUE(s) << s.error().message;
    return s ? std::move(s).value() : nullptr;
}

/// Every file of a datadir but the info logs and the lock, by name: what a refused open must
/// leave as it was.
std::map<std::string, std::string> files_of(const fs::path& dir) {
    std::map<std::string, std::string> files;
    for (const auto& e : fs::directory_iterator{dir}) {
        const std::string name = e.path().filename().string();
        if (name.starts_with("LOG") || name == "LOCK") continue;
        std::ifstream in{e.path(), std::ios::binary};
        files[name] = std::string{std::istreambuf_iterator<char>{in}, {}};
    }
    return files;
}

std::vector<fs::path> files_with(const fs::path& dir, std::string_view prefix,
                                 std::string_view extension = "") {
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator{dir}) {
        const std::string name = e.path().filename().string();
        if (name.starts_with(prefix) && e.path().extension() == extension)
            found.push_back(e.path());
    }
    std::sort(found.begin(), found.end());
    return found;
}

void resize(const fs::path& file, uintmax_t size) { fs::resize_file(file, size); }

void flip_byte(const fs::path& file, uintmax_t offset) {
    std::fstream f{file, std::ios::in | std::ios::out | std::ios::binary};
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(c ^ 0x40));
}

/// A datadir whose 5 blocks are all in table files (its writer closed cleanly).
struct Flushed {
    ScratchDir tmp;
    fs::path dir{tmp.path() / "data"};
    Flushed() {
        EXPECT_TRUE(store::Store::init(dir, damage_workload().genesis));
        import(*open_writer(dir), 5);
    }
};

/// A datadir with blocks 1-2 in table files and 3-5 only in the write-ahead log: a copy taken
/// while its writer had them committed, as a crash leaves it.
struct Unflushed {
    ScratchDir tmp;
    fs::path dir{tmp.path() / "data"};
    Unflushed() {
        const fs::path live = tmp.path() / "live";
        EXPECT_TRUE(store::Store::init(live, damage_workload().genesis));
        import(*open_writer(live), 2);
        auto s = open_writer(live);
        import(*s, 5);
        fs::copy(live, dir);
    }
};

/// Both opens refuse `dir` with `message`, and leave every file as it was.
void expect_refused(const fs::path& dir, const std::string& message) {
    const auto before = files_of(dir);
    for (const bool read_only : {true, false}) {
        SCOPED_TRACE(read_only ? "read-only open" : "writer's open");
        store::Options o;
        o.read_only = read_only;
        const auto s = store::Store::open(dir, o);
        ASSERT_FALSE(s) << "opened at block " << (*s)->head().number;
        EXPECT_EQ(store::to_string(s.error().code), "corruption");
        EXPECT_EQ(s.error().message, message);
        EXPECT_TRUE(files_of(dir) == before) << "a refused open changed the datadir's files";
    }
}

std::string recover_hint(const fs::path& dir, uint64_t n) {
    return "; nothing was changed; `barrel-node recover --datadir " + dir.string() +
           "` accepts block " + std::to_string(n) + " as the head";
}

}  // namespace

TEST(store_damage, a_flipped_byte_in_the_write_ahead_log_is_refused_with_the_block_recovered_to) {
    Unflushed d;
    const auto logs = files_with(d.dir, "", ".log");
    ASSERT_FALSE(logs.empty());
    const fs::path wal = logs.back();
    ASSERT_GT(fs::file_size(wal), 1000u);
    flip_byte(wal, fs::file_size(wal) / 3);
    expect_refused(d.dir, "datadir " + d.dir.string() +
                              " is damaged: it recovered to block 3 but block 5 had been "
                              "committed (write-ahead log damaged, RocksDB point-in-time "
                              "recovery)" +
                              recover_hint(d.dir, 3));
}

TEST(store_damage, a_manifest_truncated_to_half_is_refused_and_its_table_files_kept) {
    Flushed d;
    const auto manifests = files_with(d.dir, "MANIFEST-");
    ASSERT_EQ(manifests.size(), 1u);
    resize(manifests[0], fs::file_size(manifests[0]) / 2);
    expect_refused(d.dir, "datadir " + d.dir.string() +
                              " is damaged: it recovered to block 0 but block 5 had been "
                              "committed (MANIFEST or table files damaged)" +
                              recover_hint(d.dir, 0));
}

TEST(store_damage, a_missing_table_file_is_refused) {
    Flushed d;
    const auto tables = files_with(d.dir, "", ".sst");
    ASSERT_FALSE(tables.empty());
    const std::string name = tables.back().filename().string();
    fs::remove(tables.back());
    // RocksDB names it by the older extension it tries last.
    const std::string ldb = (d.dir / (name.substr(0, name.size() - 4) + ".ldb")).string();
    expect_refused(d.dir, "datadir " + d.dir.string() +
                              " is damaged: Corruption: Corruption: IO error: No such file or "
                              "directory: While open a file for random read: " +
                              ldb + ": No such file or directory in file " +
                              files_with(d.dir, "MANIFEST-").at(0).string() +
                              "; nothing was changed");
}

TEST(store_damage, a_damaged_committed_record_is_refused) {
    Flushed d;
    flip_byte(d.dir / "COMMITTED", 20);
    expect_refused(d.dir, "datadir " + d.dir.string() +
                              " is damaged: its COMMITTED record does not check out; nothing was "
                              "changed; `barrel-node recover --datadir " +
                              d.dir.string() + "` rewrites it from what the datadir holds");
    fs::resize_file(d.dir / "COMMITTED", 30);
    expect_refused(d.dir, "datadir " + d.dir.string() +
                              " is damaged: its COMMITTED record does not check out; nothing was "
                              "changed; `barrel-node recover --datadir " +
                              d.dir.string() + "` rewrites it from what the datadir holds");
}

TEST(store_damage, a_damaged_current_file_is_refused) {
    Flushed d;
    std::ofstream{d.dir / "CURRENT", std::ios::trunc} << "MANIFEST-999999\n";
    expect_refused(d.dir, "datadir " + d.dir.string() +
                              " is damaged: IO error: No such file or directory: While opening a "
                              "file for sequentially reading: " +
                              (d.dir / "MANIFEST-999999").string() +
                              ": No such file or directory; nothing was changed");
}

// RocksDB writes an OPTIONS file at every open and never reads one back (barrel passes its
// options in): a damaged one is no damage to the data, and the next writer replaces it.
TEST(store_damage, a_damaged_options_file_is_no_damage_and_the_next_writer_replaces_it) {
    Flushed d;
    const auto options = files_with(d.dir, "OPTIONS-");
    ASSERT_FALSE(options.empty());
    for (const auto& f : options) resize(f, fs::file_size(f) / 2);
    store::Options read_only;
    read_only.read_only = true;
    const auto reader = store::Store::open(d.dir, read_only);
    ASSERT_TRUE(reader) << reader.error().message;
    EXPECT_EQ((*reader)->head().number, 5u);
    open_writer(d.dir).reset();
    const auto now = files_with(d.dir, "OPTIONS-");
    EXPECT_GT(now.back(), options.back()) << "no new OPTIONS file";
}

TEST(store_damage, recover_accepts_the_rollback_and_the_import_goes_on_to_the_same_datadir) {
    const Flushed whole;
    Unflushed d;
    const auto logs = files_with(d.dir, "", ".log");
    flip_byte(logs.back(), fs::file_size(logs.back()) / 3);
    const auto r = store::Store::recover(d.dir);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->head.number, 3u);
    EXPECT_EQ(r->committed, std::optional<uint64_t>{5});
    EXPECT_FALSE(r->committed_damaged);
    EXPECT_TRUE(r->changed);
    auto s = open_writer(d.dir);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->head().number, 3u);
    import(*s, 5);
    s.reset();
    EXPECT_EQ(dump_diff(dump_datadir(whole.dir), dump_datadir(d.dir)), "");
}

TEST(store_damage, recover_after_a_truncated_manifest_goes_back_to_what_the_tables_hold) {
    const Flushed whole;
    Flushed d;
    const auto manifest = files_with(d.dir, "MANIFEST-").at(0);
    resize(manifest, fs::file_size(manifest) / 2);
    const auto r = store::Store::recover(d.dir);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->head.number, 0u);
    EXPECT_TRUE(r->changed);
    auto s = open_writer(d.dir);
    ASSERT_TRUE(s);
    import(*s, 5);
    s.reset();
    EXPECT_EQ(dump_diff(dump_datadir(whole.dir), dump_datadir(d.dir)), "");
}

TEST(store_damage, recover_rewrites_a_damaged_committed_record) {
    Flushed d;
    flip_byte(d.dir / "COMMITTED", 20);
    const auto r = store::Store::recover(d.dir);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->head.number, 5u);
    EXPECT_TRUE(r->committed_damaged);
    EXPECT_TRUE(r->changed);
    EXPECT_TRUE(open_writer(d.dir));
}

TEST(store_damage, recover_changes_nothing_on_a_whole_datadir) {
    Flushed d;
    const auto before = files_of(d.dir);
    const auto r = store::Store::recover(d.dir);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->head.number, 5u);
    EXPECT_EQ(r->committed, std::optional<uint64_t>{5});
    EXPECT_FALSE(r->changed);
    EXPECT_TRUE(files_of(d.dir) == before);
}

TEST(store_damage, a_datadir_without_the_record_opens_and_its_first_writer_adds_it) {
    Flushed d;
    fs::remove(d.dir / "COMMITTED");
    store::Options read_only;
    read_only.read_only = true;
    const auto reader = store::Store::open(d.dir, read_only);
    ASSERT_TRUE(reader) << reader.error().message;
    EXPECT_EQ((*reader)->head().number, 5u);
    EXPECT_FALSE(fs::exists(d.dir / "COMMITTED"));
    open_writer(d.dir).reset();
    EXPECT_EQ(fs::file_size(d.dir / "COMMITTED"), 56u);
    // An empty record is one a writer created before it failed to open: absent, not damage.
    fs::resize_file(d.dir / "COMMITTED", 0);
    EXPECT_TRUE(store::Store::open(d.dir, read_only));
    open_writer(d.dir).reset();
    EXPECT_EQ(fs::file_size(d.dir / "COMMITTED"), 56u);
    // And it now guards the datadir: a truncated MANIFEST is refused.
    const auto manifest = files_with(d.dir, "MANIFEST-").at(0);
    resize(manifest, fs::file_size(manifest) / 2);
    EXPECT_FALSE(store::Store::open(d.dir, read_only));
}

// A read-only open in another process can race a writer's flush and recover to a head older
// than the record the writer wrote: while a writer holds the datadir, a reader takes what it
// sees and a second writer is refused as locked; once no writer holds it, the same state is
// damage. The race is forced by a record naming a block the datadir does not have.
TEST(store_damage, a_head_older_than_the_record_under_a_live_writer_is_a_race_not_damage) {
    Flushed d;
    auto writer = open_writer(d.dir);
    ASSERT_TRUE(writer);
    auto record = store::CommittedFile::open(d.dir);
    ASSERT_TRUE(record);
    store::Head ahead = writer->head();
    ahead.number = 7;
    ASSERT_TRUE(record->write(ahead, false));
    const std::string err = (d.tmp.path() / "stderr").string();
    const auto child_stderr = [&err] {
        std::ifstream in{err};
        return std::string{std::istreambuf_iterator<char>{in}, {}};
    };
    const pid_t get = test::spawn_cli({"get", "block", "5", "--datadir", d.dir.string()}, err);
    EXPECT_EQ(test::wait_child(get), 0) << child_stderr();
    const fs::path empty = d.tmp.path() / "empty.rlp";
    std::ofstream{empty}.flush();
    const pid_t import =
        test::spawn_cli({"import", "--datadir", d.dir.string(), empty.string()}, err);
    EXPECT_EQ(test::wait_child(import), 2);
    EXPECT_EQ(child_stderr(),
              "error: datadir " + d.dir.string() + " is in use by another process\n");
    writer.reset();
    expect_refused(d.dir, "datadir " + d.dir.string() +
                              " is damaged: it recovered to block 5 but block 7 had been "
                              "committed (MANIFEST or table files damaged)" +
                              recover_hint(d.dir, 5));
}

// The head names a block whose parts must all be there: a block is one atomic batch, so a part
// missing means lost files, whatever RocksDB recovered.
TEST(store_damage, a_head_whose_block_is_not_whole_is_refused) {
    const auto& w = damage_workload();
    auto head_block = block::decode_block(w.blocks[4]);
    ASSERT_TRUE(head_block);
    const std::string five{"\0\0\0\0\0\0\0\x05", 8};
    const Hash last_tx = head_block->tx_hashes.back();
    const std::string tx_key{reinterpret_cast<const char*>(last_tx.data()), Hash::size()};
    const struct {
        std::string family, key, missing;
    } cases[] = {
        {"headers", five, "the block's header"},
        {"blocks", five, "the raw block"},
        {"meta",
         "hash:" +
             std::string{reinterpret_cast<const char*>(head_block->hash.data()), Hash::size()},
         "the block's hash index entry"},
        {"transactions", tx_key, "transaction " + to_hex(last_tx) + " or its receipt"},
        {"receipts", tx_key, "transaction " + to_hex(last_tx) + " or its receipt"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.family);
        Flushed d;
        test::write_raw(d.dir, c.family, c.key, std::nullopt);
        expect_refused(d.dir, "datadir " + d.dir.string() +
                                  " is damaged: its head is block 5 but " + c.missing +
                                  " is missing; nothing was changed");
    }
}
