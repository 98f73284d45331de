// The file I/O of the binaries (barrel/io/files.hpp): the chain-file reader's split of its
// input into blocks and its limits, the bounded whole-file read, and the atomic writer: its
// all-or-nothing, its way through symbolic links and to descriptors, its refusal of a datadir,
// and its write errors.

#include <barrel/io/files.hpp>

#include "cli_run.hpp"
#include "rlp_build.hpp"
#include "test_files.hpp"
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace barrel;
using barrel::test::cat;
using barrel::test::EndlessBuf;
using barrel::test::read_text;
using barrel::test::ScratchDir;
using barrel::test::write_text;
namespace fs = std::filesystem;

namespace {

constexpr size_t kLimit = 1000;

/// Every item, or the error that stopped the reading (then `items` has those before it).
struct ReadAll {
    std::vector<Bytes> items;
    std::optional<io::ChainReadError> error;
};

ReadAll read_all(std::istream& in, size_t limit = kLimit) {
    io::ChainReader reader{in, limit};
    ReadAll out;
    for (;;) {
        auto item = reader.next();
        if (!item) {
            out.error = item.error();
            return out;
        }
        if (!*item) return out;
        out.items.push_back(std::move(**item));
    }
}

std::vector<Bytes> read_items(const Bytes& input) {
    std::istringstream in{std::string{as_chars(input)}};
    auto all = read_all(in);
    EXPECT_FALSE(all.error) << all.error->reason;
    return all.items;
}

/// A list item of `payload_size` bytes of 0x01 (long form from 56 on).
Bytes list_of(size_t payload_size) { return barrel::test::list({Bytes(payload_size, 0x01)}); }

/// A pipe whose write end is a descriptor of this process: /proc/self/fd/N leads to it.
struct Pipe {
    int read_end{-1};
    int write_end{-1};
    Pipe() {
        int fds[2];
        if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
        read_end = fds[0];
        write_end = fds[1];
    }
    ~Pipe() {
        if (read_end >= 0) ::close(read_end);
        if (write_end >= 0) ::close(write_end);
    }
    std::string drain() {
        ::close(write_end);
        write_end = -1;
        std::string out;
        char buf[4096];
        for (ssize_t n; (n = ::read(read_end, buf, sizeof buf)) > 0;)
            out.append(buf, static_cast<size_t>(n));
        return out;
    }
};

/// A directory that looks like a barrel datadir to the writer (RocksDB's CURRENT and LOCK).
void make_fake_datadir(const fs::path& dir) {
    fs::create_directories(dir);
    write_text((dir / "CURRENT").string(), "MANIFEST-000001\n");
    write_text((dir / "LOCK").string(), "");
}

/// Writes `text` to `target` through an AtomicFile and commits it.
void write_through(const std::string& target, std::string_view text) {
    std::ostringstream out;
    auto file = io::AtomicFile::create(target, out);
    ASSERT_TRUE(file) << file.error();
    file->write(text);
    file->commit();
}

}  // namespace

// ---- ChainReader ------------------------------------------------------------------------------

TEST(io_files, chain_reader_splits_blocks_by_their_prefix) {
    // Short and long lists, one shorter than the 9 bytes the reader reads ahead.
    const std::vector<Bytes> blocks{Bytes{0xc0}, list_of(3), list_of(70), list_of(900),
                                    Bytes{0xc1, 0x05}};
    EXPECT_EQ(read_items(cat(blocks)), blocks);
    EXPECT_TRUE(read_items({}).empty());
}

TEST(io_files, chain_reader_hands_on_what_is_not_a_block_as_the_last_item) {
    const Bytes good = list_of(60);
    // A string, a malformed prefix, a single byte: the rest of the input is one last item, for
    // the decoder to name what is wrong with it.
    for (const Bytes& bad :
         {Bytes{0x83, 'a', 'b', 'c', 0xc0}, Bytes{0xf8, 0x05, 0xc0}, Bytes{'n', 'o', 't'}}) {
        const auto items = read_items(cat({good, bad}));
        ASSERT_EQ(items.size(), 2u);
        EXPECT_EQ(items[0], good);
        EXPECT_EQ(items[1], bad);
    }
    // A truncated last block is handed on as it is.
    const Bytes truncated(good.begin(), good.end() - 7);
    EXPECT_EQ(read_items(cat({good, truncated})), (std::vector<Bytes>{good, truncated}));
}

TEST(io_files, chain_reader_refuses_a_block_over_the_limit_before_reading_it) {
    // Lists and strings declaring just over the limit, and 2^63 bytes: refused from the prefix.
    const Bytes good = list_of(60);
    const Bytes just_over = barrel::test::list({Bytes(kLimit, 0x01)});  // its prefix is extra
    const Bytes huge{0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xc0};
    const Bytes huge_string{0xbb, 0xff, 0xff, 0xff, 0xff, 0x00};
    for (const Bytes& bad : {just_over, huge, huge_string}) {
        std::istringstream in{std::string{as_chars(cat({good, bad}))}};
        const auto all = read_all(in);
        EXPECT_EQ(all.items, std::vector<Bytes>{good});
        ASSERT_TRUE(all.error);
        EXPECT_EQ(all.error->block, 1u);
        EXPECT_EQ(all.error->reason, "larger than the limit of 1000 bytes");
    }
    // At the limit exactly, it is a block.
    const Bytes at_limit = barrel::test::list({Bytes(kLimit - 3, 0x01)});
    ASSERT_EQ(at_limit.size(), kLimit);
    EXPECT_EQ(read_items(at_limit), std::vector<Bytes>{at_limit});

    // A 4 GiB block on an endless stream: refused having read its prefix and no more than a
    // buffer's worth past it.
    EndlessBuf endless{Bytes{0xfb, 0xff, 0xff, 0xff, 0xff}, '\x01'};
    std::istream in{&endless};
    const auto all = read_all(in, size_t{1} << 30);
    EXPECT_TRUE(all.items.empty());
    ASSERT_TRUE(all.error);
    EXPECT_EQ(all.error->reason, "larger than the limit of 1073741824 bytes");
    EXPECT_LE(endless.taken(), 9u);
}

TEST(io_files, chain_reader_reads_a_bounded_amount_of_an_endless_stream_that_is_no_list) {
    // /dev/zero (single bytes), a stream of garbage after a malformed prefix, an RLP string
    // followed by endless bytes: one last item of bounded size, then the end.
    for (const auto& [head, fill] : std::vector<std::pair<Bytes, char>>{
             {{}, '\0'}, {{0xf8, 0x05}, 'x'}, {{0x83, 'a', 'b', 'c'}, '\x01'}}) {
        EndlessBuf endless{head, fill};
        std::istream in{&endless};
        const auto all = read_all(in, size_t{1} << 30);
        EXPECT_FALSE(all.error);
        ASSERT_EQ(all.items.size(), 1u);
        EXPECT_LE(all.items[0].size(), head.size() + 1 + io::kUndelimitedPeekBytes);
        EXPECT_LE(endless.taken(), all.items[0].size() + 4096);
    }
}

TEST(io_files, open_and_create_say_why_not) {
    const ScratchDir scratch;
    const fs::path& dir = scratch.path();
    const auto missing = io::ChainReader::open((dir / "missing").string(), kLimit);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().reason, "No such file or directory");
    EXPECT_FALSE(missing.error().directory);
    const auto directory = io::read_file(dir.string(), kLimit);
    ASSERT_FALSE(directory);
    EXPECT_TRUE(directory.error().directory);

    std::ostringstream out;
    EXPECT_EQ(io::AtomicFile::create("", out).error(), "empty path");
    EXPECT_EQ(io::AtomicFile::create(dir.string(), out).error(),
              "'" + dir.string() + "' is a directory");
    const std::string nowhere = (dir / "no" / "f").string();
    EXPECT_EQ(io::AtomicFile::create(nowhere, out).error(),
              "cannot write '" + nowhere + "': No such file or directory");
    const std::string loop = (dir / "loop").string();
    fs::create_symlink("loop", loop);
    EXPECT_EQ(io::AtomicFile::create(loop, out).error(),
              "cannot write '" + loop + "': Too many levels of symbolic links");
    fs::remove(loop);

    // Nothing at the target until commit; the old file until then; nothing left when abandoned.
    const std::string target = (dir / "out.bin").string();
    {
        auto file = io::AtomicFile::create(target, out);
        ASSERT_TRUE(file);
        file->write(std::string_view{"abc"});
        EXPECT_FALSE(fs::exists(target));
        file->commit();
    }
    EXPECT_EQ(read_text(target), "abc");
    {
        auto file = io::AtomicFile::create(target, out);
        ASSERT_TRUE(file);
        file->write(std::string_view{"new"});
    }
    EXPECT_EQ(read_text(target), "abc");
    EXPECT_EQ(scratch.entries(), std::vector<std::string>{"out.bin"});
}

// ---- read_file --------------------------------------------------------------------------------

TEST(io_files, read_file_refuses_more_than_its_limit_from_files_pipes_and_devices) {
    const ScratchDir scratch;
    const std::string at_limit = scratch / "at";
    const std::string over = scratch / "over";
    write_text(at_limit, std::string(kLimit, 'a'));
    write_text(over, std::string(kLimit + 1, 'a'));
    EXPECT_EQ(io::read_file(at_limit, kLimit).value().size(), kLimit);
    const auto too_large = io::read_file(over, kLimit);
    ASSERT_FALSE(too_large);
    EXPECT_TRUE(too_large.error().too_large);
    EXPECT_EQ(too_large.error().reason, "larger than the limit of 1000 bytes");
    // No size to check first: read up to one byte past the limit.
    const auto zero = io::read_file("/dev/zero", kLimit);
    ASSERT_FALSE(zero);
    EXPECT_EQ(zero.error().reason, "larger than the limit of 1000 bytes");
    EndlessBuf endless{{}, 'x'};
    std::istream in{&endless};
    const auto stream = io::read_stream(in, kLimit);
    ASSERT_FALSE(stream);
    EXPECT_TRUE(stream.error().too_large);
    EXPECT_LE(endless.taken(), kLimit + 4096);
    std::istringstream small{"abc"};
    EXPECT_EQ(io::read_stream(small, kLimit).value(), (Bytes{'a', 'b', 'c'}));
}

// ---- AtomicFile: where an output goes --------------------------------------------------------

TEST(io_files, a_symbolic_link_is_followed_and_stays) {
    const ScratchDir scratch;
    const fs::path& dir = scratch.path();
    fs::create_directories(dir / "sub");

    // A link to a file: the file is replaced, the link stays a link to it.
    write_text(scratch / "target", "old");
    fs::create_symlink("target", dir / "link");
    write_through(scratch / "link", "new");
    EXPECT_TRUE(fs::is_symlink(dir / "link"));
    EXPECT_EQ(fs::read_symlink(dir / "link"), "target");
    EXPECT_EQ(read_text(scratch / "target"), "new");

    // A chain of links, relative to the directory each is in.
    fs::create_symlink("../link", dir / "sub" / "chain");
    write_through((dir / "sub" / "chain").string(), "chained");
    EXPECT_TRUE(fs::is_symlink(dir / "sub" / "chain"));
    EXPECT_EQ(read_text(scratch / "target"), "chained");

    // A dangling link: its target is created.
    fs::create_symlink("sub/created", dir / "dangling");
    write_through(scratch / "dangling", "fresh");
    EXPECT_TRUE(fs::is_symlink(dir / "dangling"));
    EXPECT_EQ(read_text((dir / "sub" / "created").string()), "fresh");

    // An absolute link; nothing else left anywhere (no temporary file beside either end).
    fs::create_symlink(dir / "target", dir / "absolute");
    write_through(scratch / "absolute", "abs");
    EXPECT_EQ(read_text(scratch / "target"), "abs");
    EXPECT_EQ(scratch.entries(),
              (std::vector<std::string>{"absolute", "dangling", "link", "sub", "target"}));
    std::vector<std::string> sub;
    for (const auto& e : fs::directory_iterator(dir / "sub")) sub.push_back(e.path().filename());
    std::sort(sub.begin(), sub.end());
    EXPECT_EQ(sub, (std::vector<std::string>{"chain", "created"}));
}

TEST(io_files, a_descriptor_or_device_is_written_in_place) {
    // /proc/self/fd/N to a pipe (what /dev/stdout leads to under `| cmd`), and a link to it.
    const ScratchDir scratch;
    Pipe pipe;
    const std::string fd_path = "/proc/self/fd/" + std::to_string(pipe.write_end);
    fs::create_symlink(fd_path, scratch.path() / "to-pipe");
    for (const std::string& target : {fd_path, scratch / "to-pipe"}) {
        std::ostringstream out;
        auto file = io::AtomicFile::create(target, out);
        ASSERT_TRUE(file) << file.error();
        EXPECT_FALSE(file->is_standard_output());
        file->write(std::string_view{"through "});
        file->commit();
    }
    EXPECT_EQ(pipe.drain(), "through through ");
    EXPECT_TRUE(fs::is_symlink(scratch.path() / "to-pipe"));

    // A character device.
    write_through("/dev/null", "nothing");
    EXPECT_TRUE(fs::is_character_file("/dev/null"));

    // "-": the caller's standard output stream.
    std::ostringstream out;
    auto file = io::AtomicFile::create("-", out);
    ASSERT_TRUE(file);
    EXPECT_TRUE(file->is_standard_output());
    file->write(std::string_view{"to stdout"});
    file->commit();
    EXPECT_EQ(out.str(), "to stdout");
}

TEST(io_files, an_output_inside_a_datadir_is_refused) {
    const ScratchDir scratch;
    const fs::path datadir = fs::canonical(scratch.path()) / "d";
    make_fake_datadir(datadir);
    fs::create_directories(datadir / "deeper");
    fs::create_symlink(datadir / "CURRENT", scratch.path() / "to-current");
    fs::create_symlink(datadir, scratch.path() / "to-datadir");
    std::ostringstream out;
    for (const std::string& target :
         {(datadir / "CURRENT").string(), (datadir / "new.bin").string(),
          (datadir / "deeper" / "x").string(), scratch / "to-current",
          (scratch.path() / "to-datadir" / "LOCK").string()}) {
        const auto file = io::AtomicFile::create(target, out);
        ASSERT_FALSE(file) << target;
        EXPECT_EQ(file.error(),
                  "'" + target + "' is inside the datadir '" + datadir.string() + "'");
    }
    EXPECT_EQ(read_text((datadir / "CURRENT").string()), "MANIFEST-000001\n");
    EXPECT_FALSE(fs::exists(datadir / "new.bin"));
    std::vector<std::string> entries;
    for (const auto& e : fs::directory_iterator(datadir)) entries.push_back(e.path().filename());
    std::sort(entries.begin(), entries.end());
    EXPECT_EQ(entries, (std::vector<std::string>{"CURRENT", "LOCK", "deeper"}));
    // Beside a datadir is fine, and so is a directory with only one of the two files.
    write_through(scratch / "beside.bin", "ok");
    fs::create_directories(scratch.path() / "half");
    write_text(scratch / "half/CURRENT", "x");
    write_through(scratch / "half/out.bin", "ok");
}

// ---- AtomicFile: write errors -----------------------------------------------------------------

TEST(io_files, a_write_error_names_the_target_and_leaves_no_temporary_file) {
    // /dev/full: every write fails with ENOSPC.
    {
        std::ostringstream out;
        auto file = io::AtomicFile::create("/dev/full", out);
        ASSERT_TRUE(file) << file.error();
        try {
            file->write(std::string_view{"x"});
            FAIL() << "no error";
        } catch (const io::WriteError& e) {
            EXPECT_STREQ(e.what(), "cannot write '/dev/full': No space left on device");
        }
    }
    // A full filesystem under a temporary file: it is removed when the error is thrown.
    const ScratchDir scratch;
    const std::string mount_point = scratch / "small";
    fs::create_directories(mount_point);
    if (::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64k") != 0)
        GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    const std::string target = mount_point + "/out.bin";
    {
        std::ostringstream out;
        auto file = io::AtomicFile::create(target, out);
        ASSERT_TRUE(file) << file.error();
        const std::string chunk(16 << 10, 'x');
        try {
            for (int i = 0; i < 16; ++i) file->write(chunk);
            file->commit();
            FAIL() << "no error";
        } catch (const io::WriteError& e) {
            EXPECT_STREQ(e.what(),
                         ("cannot write '" + target + "': No space left on device").c_str());
        }
        EXPECT_TRUE(fs::is_empty(mount_point));  // gone at the throw, before the destructor
    }
    EXPECT_TRUE(fs::is_empty(mount_point));
    ::umount(mount_point.c_str());
}
