// barrel-node against hostile inputs and a hostile environment (issue 20): outputs through
// symbolic links, to descriptors and to standard output, an output inside a datadir, endless and
// huge inputs on every command that reads a file or standard input, and a full disk or a file
// size limit under an output. Each is exit 2 with one exact line, and leaves nothing behind.

#include <barrel/chain/genesis.hpp>
#include <barrel/cli/files.hpp>

#include "child_process.hpp"
#include "cli_run.hpp"
#include "store_dump.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

using namespace barrel;
using barrel::test::CliResult;
using barrel::test::dump_datadir;
using barrel::test::dump_diff;
using barrel::test::EndlessBuf;
using barrel::test::read_file;
using barrel::test::read_text;
using barrel::test::run_cli;
using barrel::test::ScratchDir;
using barrel::test::write_file;
using barrel::test::write_text;
namespace fs = std::filesystem;

namespace {

/// A small chain, its files, and a datadir holding all of it.
struct Fixture {
    ScratchDir dir;
    std::string genesis;
    std::string chain;
    std::string datadir;
    Bytes chain_bytes;

    Fixture() {
        const auto w =
            barrel::test::generate_or_throw({.seed = 5, .blocks = 4, .txs = 60, .accounts = 40});
        genesis = dir / "genesis.json";
        chain = dir / "chain.rlp";
        datadir = dir / "datadir";
        write_text(genesis, chain::to_json_text(w.genesis));
        for (const Bytes& b : w.blocks) chain_bytes.insert(chain_bytes.end(), b.begin(), b.end());
        write_file(chain, chain_bytes);
        expect_ok(run_cli({"init", "--datadir", datadir, "--genesis", genesis}));
        expect_ok(run_cli({"import", "--datadir", datadir, chain}));
    }
    static void expect_ok(const CliResult& r) {
        if (r.status != 0) throw std::runtime_error("fixture: " + r.err);
    }
};

const Fixture& fixture() {
    static const Fixture f;
    return f;
}

/// The entries of a directory, sorted.
std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
}

void expect_error(const CliResult& r, const std::string& line) {
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err, "error: " + line + "\n");
}

/// A 16 KiB tmpfs at `dir`, unmounted at scope exit; mounted() is false where mounting is not
/// allowed (the tests then skip).
class SmallFilesystem {
public:
    explicit SmallFilesystem(const std::string& dir) : m_dir{dir} {
        fs::create_directories(dir);
        m_mounted = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=16k") == 0;
    }
    ~SmallFilesystem() {
        if (m_mounted) ::umount(m_dir.c_str());
    }
    SmallFilesystem(const SmallFilesystem&) = delete;
    SmallFilesystem& operator=(const SmallFilesystem&) = delete;
    bool mounted() const noexcept { return m_mounted; }

private:
    std::string m_dir;
    bool m_mounted{false};
};

}  // namespace

// ---- Finding 2: outputs through links, to descriptors, to stdout; never into a datadir --------

TEST(cli_faults, export_and_gen_write_through_a_symbolic_link) {
    const Fixture& f = fixture();
    const ScratchDir scratch;
    fs::create_symlink("real.bin", scratch.path() / "link.bin");
    const std::string link = scratch / "link.bin";
    const auto r = run_cli({"export", "--datadir", f.datadir, "--out", link});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(read_file(scratch / "real.bin"), f.chain_bytes);

    fs::create_symlink("g-real.json", scratch.path() / "g.json");
    const auto g = run_cli({"gen", "--genesis", scratch / "g.json", "--out", scratch / "c.rlp",
                            "--blocks", "1", "--txs", "2", "--accounts", "4"});
    ASSERT_EQ(g.status, 0) << g.err;
    EXPECT_TRUE(fs::is_symlink(scratch.path() / "g.json"));
    EXPECT_TRUE(fs::is_regular_file(scratch.path() / "g-real.json"));
    EXPECT_EQ(entries(scratch.path()),
              (std::vector<std::string>{"c.rlp", "g-real.json", "g.json", "link.bin", "real.bin"}));
}

TEST(cli_faults, export_and_gen_write_standard_output_for_a_dash) {
    const Fixture& f = fixture();
    const auto r = run_cli({"export", "--datadir", f.datadir, "--out", "-"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, std::string{as_chars(f.chain_bytes)});
    EXPECT_EQ(r.err,
              "exported 4 blocks (" + std::to_string(f.chain_bytes.size()) + " bytes) to -\n");

    const ScratchDir scratch;
    const auto g = run_cli({"gen", "--genesis", "-", "--out", scratch / "c.rlp", "--blocks", "1",
                            "--txs", "2", "--accounts", "4"});
    ASSERT_EQ(g.status, 0) << g.err;
    EXPECT_TRUE(g.out.starts_with("{")) << g.out;
    EXPECT_TRUE(g.err.starts_with("wrote 1 block of 2 transactions")) << g.err;
    expect_error(run_cli({"gen", "--genesis", "-", "--out", "-", "--blocks", "1"}),
                 "--genesis and --out name the same file '-'");
}

TEST(cli_faults, export_writes_a_descriptor_in_place) {
    // What `--out /dev/stdout | cmd` meets: /proc/self/fd/N leading to a pipe.
    const Fixture& f = fixture();
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    // The pipe holds the whole chain: the export writes it before anything reads.
    ASSERT_GE(::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20), static_cast<int>(f.chain_bytes.size()));
    const auto r = run_cli(
        {"export", "--datadir", f.datadir, "--out", "/proc/self/fd/" + std::to_string(fds[1])});
    ::close(fds[1]);
    EXPECT_EQ(r.status, 0) << r.err;
    Bytes got;
    uint8_t buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) got.insert(got.end(), buf, buf + n);
    ::close(fds[0]);
    EXPECT_EQ(got, f.chain_bytes);
}

TEST(cli_faults, an_output_inside_a_datadir_is_refused_and_the_datadir_unchanged) {
    const Fixture& f = fixture();
    const auto before = dump_datadir(f.datadir);
    const auto files_before = entries(f.datadir);
    const std::string canonical = fs::canonical(f.datadir).string();
    const std::string current = f.datadir + "/CURRENT";
    expect_error(run_cli({"export", "--datadir", f.datadir, "--out", current}),
                 "--out: '" + current + "' is inside the datadir '" + canonical + "'");
    const ScratchDir scratch;
    fs::create_symlink(current, scratch.path() / "to-current");
    expect_error(
        run_cli({"gen", "--genesis", scratch / "to-current", "--out", scratch / "c.rlp", "--blocks",
                 "1"}),
        "--genesis: '" + (scratch / "to-current") + "' is inside the datadir '" + canonical + "'");
    EXPECT_EQ(entries(f.datadir), files_before);
    EXPECT_EQ(dump_diff(before, dump_datadir(f.datadir)), "");
    EXPECT_EQ(entries(scratch.path()), std::vector<std::string>{"to-current"});
}

// ---- Finding 9: import reads standard input ---------------------------------------------------

TEST(cli_faults, import_reads_standard_input) {
    const Fixture& f = fixture();
    const ScratchDir scratch;
    const std::string datadir = scratch / "d";
    ASSERT_EQ(run_cli({"init", "--datadir", datadir, "--genesis", f.genesis}).status, 0);
    const auto r =
        run_cli({"import", "--datadir", datadir, "-"}, std::string{as_chars(f.chain_bytes)});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.out.starts_with("imported 4 blocks (240 transactions)")) << r.out;
    EXPECT_EQ(dump_diff(dump_datadir(f.datadir), dump_datadir(datadir)), "");
}

// ---- Finding 4: endless and huge inputs -------------------------------------------------------

TEST(cli_faults, every_command_stops_an_endless_input_with_exit_2) {
    const Fixture& f = fixture();
    const ScratchDir scratch;
    const std::string datadir = scratch / "d";
    ASSERT_EQ(run_cli({"init", "--datadir", datadir, "--genesis", f.genesis}).status, 0);
    const auto before = dump_datadir(datadir);
    const std::string text_limit = "larger than the limit of 268435456 bytes";
    const std::string block_limit = "larger than the limit of 1073741824 bytes";
    // A block whose prefix declares 4 GiB, then endless bytes; and /dev/zero.
    const Bytes huge{0xfb, 0xff, 0xff, 0xff, 0xff};
    struct Case {
        std::vector<std::string> args;
        Bytes head;
        char fill;
        std::string error;
    };
    const std::vector<Case> cases{
        {{"rlp", "decode", "-"}, {}, '0', "standard input is " + text_limit},
        {{"rlp", "encode", "-"}, {}, ' ', "standard input is " + text_limit},
        {{"tx", "decode", "-"}, {}, 'a', "standard input is " + text_limit},
        {{"block", "inspect", "-"}, huge, '\x01', "block 0: " + block_limit},
        {{"block", "inspect", "-"},
         {},
         '\0',
         "not a block, chain file or transaction list; as a block: malformed_block: "
         "unexpected_string"},
        {{"import", "--datadir", datadir, "-"},
         huge,
         '\x01',
         "block at position 0: " + block_limit},
        {{"import", "--datadir", datadir, "-"},
         {},
         '\0',
         "block at position 0: decode: malformed_block: unexpected_string"},
    };
    for (const Case& c : cases) {
        EndlessBuf endless{c.head, c.fill};
        std::istream in{&endless};
        const auto r = run_cli(c.args, in);
        EXPECT_EQ(r.status, 2) << c.args[0] << " " << c.args[1];
        EXPECT_TRUE(r.err.ends_with("error: " + c.error + "\n")) << r.err;
        EXPECT_LE(endless.taken(), (size_t{256} << 20) + (size_t{1} << 20)) << r.err;
    }
    // A file: /dev/zero has no size, so the read stops one byte past the limit.
    expect_error(run_cli({"init", "--datadir", scratch / "d2", "--genesis", "/dev/zero"}),
                 "genesis '/dev/zero' is " + text_limit);
    EXPECT_FALSE(fs::exists(scratch / "d2"));
    // A block over the limit after good ones: those are imported, nothing of it is read.
    Bytes chain = f.chain_bytes;
    chain.insert(chain.end(), huge.begin(), huge.end());
    const auto r = run_cli({"import", "--datadir", datadir, "-"}, std::string{as_chars(chain)});
    expect_error(r, "block at position 4: " + block_limit);
    EXPECT_EQ(dump_diff(dump_datadir(f.datadir), dump_datadir(datadir)), "");
    (void)before;
}

// ---- Finding 6: a full disk, a file size limit ------------------------------------------------

TEST(cli_faults, a_full_disk_is_exit_2_and_leaves_no_temporary_file) {
    const Fixture& f = fixture();
    ASSERT_GT(f.chain_bytes.size(), size_t{16} << 10);
    const ScratchDir scratch;
    const SmallFilesystem small{scratch / "small"};
    if (!small.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here";
    const std::string out = scratch / "small/chain.rlp";
    expect_error(run_cli({"export", "--datadir", f.datadir, "--out", out}),
                 "cannot write '" + out + "': No space left on device");
    expect_error(run_cli({"gen", "--genesis", scratch / "g.json", "--out", out, "--blocks", "4",
                          "--txs", "60", "--accounts", "40"}),
                 "cannot write '" + out + "': No space left on device");
    EXPECT_TRUE(fs::is_empty(scratch / "small"));
    EXPECT_EQ(entries(scratch.path()), std::vector<std::string>{"small"});
}

TEST(cli_faults, a_file_size_limit_is_exit_2_and_leaves_no_temporary_file) {
    // `ulimit -f`: past it write() fails with EFBIG once SIGXFSZ is ignored, as run() does.
    const ScratchDir scratch;
    const std::string out = scratch / "chain.rlp";
    const std::string err = scratch / "stderr";
    rlimit old{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
    rlimit limited{8 << 10, old.rlim_max};
    // The child inherits the limit; this process has it only for the fork.
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
    const pid_t pid = barrel::test::spawn_cli({"gen", "--genesis", scratch / "g.json", "--out", out,
                                               "--blocks", "4", "--txs", "60", "--accounts", "40"},
                                              err);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old), 0);
    ASSERT_GT(pid, 0);
    EXPECT_EQ(barrel::test::wait_child(pid), 2);
    EXPECT_EQ(read_text(err), "error: cannot write '" + out + "': File too large\n");
    EXPECT_EQ(entries(scratch.path()), std::vector<std::string>{"stderr"});
}
