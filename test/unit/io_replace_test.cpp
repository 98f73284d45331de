// The one way a file is replaced (barrel/io/files.hpp, FileReplacement): a temporary file beside
// the target, fsynced, renamed over it, the directory fsynced; and its failures, each with its
// exact error and the old file left as it was, with no temporary file behind.

#include <barrel/io/files.hpp>

#include "io/testing.hpp"
#include "test_files.hpp"
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

using namespace barrel;
using barrel::test::read_text;
using barrel::test::ScratchDir;
using barrel::test::write_text;
namespace fs = std::filesystem;

namespace {

/// The names in `dir`, sorted.
std::vector<std::string> names_in(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

/// A small tmpfs at `dir`, unmounted at scope exit; mounted() is false where mounting is not
/// allowed (a test then skips).
class Tmpfs {
public:
    Tmpfs(const std::string& dir, const char* options) : m_dir{dir} {
        fs::create_directories(dir);
        m_mounted = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, options) == 0;
    }
    ~Tmpfs() {
        if (m_mounted) ::umount(m_dir.c_str());
    }
    Tmpfs(const Tmpfs&) = delete;
    Tmpfs& operator=(const Tmpfs&) = delete;
    bool mounted() const noexcept { return m_mounted; }
    bool remount_read_only() {
        return ::mount("tmpfs", m_dir.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
    }

private:
    std::string m_dir;
    bool m_mounted{false};
};

TEST(io_replace, replaces_a_file_whole_and_syncs_it_and_its_directory) {
    const ScratchDir scratch;
    const std::string target = scratch / "out.bin";
    write_text(target, "old");
    const size_t before = io::testing::directory_syncs();
    ASSERT_TRUE(io::replace_file(target, as_bytes(std::string_view{"new"})));
    EXPECT_EQ(read_text(target), "new");
    EXPECT_EQ(io::testing::directory_syncs(), before + 1);
    EXPECT_EQ(names_in(scratch.path()), std::vector<std::string>{"out.bin"});
    // Without sync (a rewrite a synced one supersedes): neither the file nor the directory.
    ASSERT_TRUE(io::replace_file(target, as_bytes(std::string_view{"newer"}), false));
    EXPECT_EQ(read_text(target), "newer");
    EXPECT_EQ(io::testing::directory_syncs(), before + 1);
}

TEST(io_replace, the_temporary_file_is_beside_the_target_and_goes_unless_committed) {
    const ScratchDir scratch;
    const std::string target = scratch / "out.bin";
    write_text(target, "old");
    {
        auto file = io::FileReplacement::create(target);
        ASSERT_TRUE(file) << file.error().message;
        EXPECT_EQ(fs::path{file->temporary()}.parent_path(), scratch.path());
        EXPECT_TRUE(fs::path{file->temporary()}.filename().string().starts_with(".out.bin.tmp"))
            << file->temporary();
        ASSERT_TRUE(file->write(as_bytes(std::string_view{"half"})));
        EXPECT_EQ(names_in(scratch.path()).size(), 2u);
    }
    EXPECT_EQ(read_text(target), "old");
    EXPECT_EQ(names_in(scratch.path()), std::vector<std::string>{"out.bin"});
}

TEST(io_replace, whatever_is_at_a_temporary_name_is_left_alone) {
    const ScratchDir scratch;
    const std::string target = scratch / "out.bin";
    // A fifo at the first name would block an open for writing; a leftover file would be
    // appended to. The next name is taken instead.
    const std::string taken = scratch / (".out.bin.tmp" + std::to_string(::getpid()) + "-0");
    ASSERT_EQ(::mkfifo(taken.c_str(), 0644), 0);
    ASSERT_TRUE(io::replace_file(target, as_bytes(std::string_view{"new"})));
    EXPECT_EQ(read_text(target), "new");
    struct stat st {};
    ASSERT_EQ(::lstat(taken.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(io_replace, a_directory_at_the_target_is_refused_before_anything_is_written) {
    const ScratchDir scratch;
    const std::string target = scratch / "dir";
    fs::create_directories(scratch / "dir/inside");
    const auto file = io::FileReplacement::create(target);
    ASSERT_FALSE(file);
    EXPECT_EQ(file.error().code, EISDIR);
    EXPECT_EQ(file.error().message, "'" + target + "' is a directory");
    EXPECT_EQ(names_in(scratch.path()), std::vector<std::string>{"dir"});
    EXPECT_EQ(names_in(target), std::vector<std::string>{"inside"});
}

TEST(io_replace, a_missing_directory_is_named) {
    const ScratchDir scratch;
    const std::string target = scratch / "missing/out.bin";
    const auto written = io::replace_file(target, as_bytes(std::string_view{"x"}));
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().code, ENOENT);
    EXPECT_EQ(written.error().message, "cannot write '" + target + "': No such file or directory");
    EXPECT_FALSE(written.error().renamed);
}

TEST(io_replace, an_unwritable_directory_leaves_the_old_file) {
    const ScratchDir scratch;
    Tmpfs fs_mount{scratch / "ro", "size=64k"};
    if (!fs_mount.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    const std::string target = scratch / "ro/out.bin";
    write_text(target, "old");
    // Read-only: what makes a directory unwritable even for root, who passes every mode bit.
    ASSERT_TRUE(fs_mount.remount_read_only()) << std::strerror(errno);
    const auto written = io::replace_file(target, as_bytes(std::string_view{"new"}));
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().code, EROFS);
    EXPECT_EQ(written.error().message, "cannot write '" + target + "': Read-only file system");
    EXPECT_EQ(read_text(target), "old");
    EXPECT_EQ(names_in(scratch / "ro"), std::vector<std::string>{"out.bin"});
}

TEST(io_replace, a_full_disk_leaves_the_old_file_and_no_temporary_file) {
    const ScratchDir scratch;
    Tmpfs fs_mount{scratch / "small", "size=64k"};
    if (!fs_mount.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    const std::string target = scratch / "small/out.bin";
    write_text(target, "old");
    const std::string big(128 << 10, 'x');
    auto file = io::FileReplacement::create(target);
    ASSERT_TRUE(file) << file.error().message;
    const auto written = file->write(as_bytes(std::string_view{big}));
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().code, ENOSPC);
    EXPECT_EQ(written.error().message, "cannot write '" + target + "': No space left on device");
    // Gone at the error, before the destructor: a caller may exit without unwinding.
    EXPECT_EQ(names_in(scratch / "small"), std::vector<std::string>{"out.bin"});
    EXPECT_EQ(read_text(target), "old");
    // Nothing more is done after a failure.
    const auto committed = file->commit();
    ASSERT_FALSE(committed);
    EXPECT_EQ(committed.error().code, EBADF);
    EXPECT_EQ(read_text(target), "old");
}

TEST(io_replace, committing_twice_is_an_error_and_changes_nothing) {
    const ScratchDir scratch;
    const std::string target = scratch / "out.bin";
    auto file = io::FileReplacement::create(target);
    ASSERT_TRUE(file);
    ASSERT_TRUE(file->write(as_bytes(std::string_view{"one"})));
    ASSERT_TRUE(file->commit());
    write_text(target, "changed since");
    const auto again = file->commit();
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().message, "cannot write '" + target + "': Bad file descriptor");
    EXPECT_EQ(read_text(target), "changed since");
}

TEST(io_replace, rename_durably_moves_and_syncs_or_names_both_paths) {
    const ScratchDir scratch;
    const std::string from = scratch / "built";
    const std::string to = scratch / "target";
    fs::create_directories(from);
    const size_t before = io::testing::directory_syncs();
    ASSERT_TRUE(io::rename_durably(from, to));
    EXPECT_TRUE(fs::is_directory(to));
    EXPECT_EQ(io::testing::directory_syncs(), before + 1);
    const auto missing = io::rename_durably(from, to);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ENOENT);
    EXPECT_EQ(missing.error().message,
              "cannot move '" + from + "' to '" + to + "': No such file or directory");
    EXPECT_FALSE(missing.error().renamed);
    const auto not_a_directory = io::sync_directory(scratch / "nowhere");
    ASSERT_FALSE(not_a_directory);
    EXPECT_EQ(
        not_a_directory.error().message,
        "cannot sync the directory '" + (scratch / "nowhere") + "': No such file or directory");
}

// The outputs of barrel-node and barrel-bench (AtomicFile) are replacements too: their rename is
// made durable like the journal's (it once was not: the directory was never synced).
TEST(io_replace, an_output_file_syncs_its_directory_at_commit) {
    const ScratchDir scratch;
    const std::string target = scratch / "out.json";
    std::ostringstream standard_output;
    auto file = io::AtomicFile::create(target, standard_output);
    ASSERT_TRUE(file) << file.error();
    file->write(std::string_view{"{}"});
    const size_t before = io::testing::directory_syncs();
    file->commit();
    EXPECT_EQ(io::testing::directory_syncs(), before + 1);
    EXPECT_EQ(read_text(target), "{}");
    EXPECT_EQ(names_in(scratch.path()), std::vector<std::string>{"out.json"});
}

}  // namespace
