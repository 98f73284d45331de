// An init builds its datadir beside the target, in a hidden `.<name>.init-<pid>`, and renames it
// into place (issue 20, finding 8): one interrupted (stopped here by a seam where a SIGKILL would
// land) leaves no target, so nothing refuses the next init, which removes what the interrupted
// one left if its process is gone, and leaves a live process's alone.

#include <barrel/store/store.hpp>

#include "store/testing.hpp"
#include "store_commit.hpp"
#include "test_files.hpp"
#include "workloads.hpp"
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

using namespace barrel;
using barrel::test::generate_or_throw;
using barrel::test::ScratchDir;

namespace {

namespace fs = std::filesystem;

const gen::Workload& init_workload() {
    static const gen::Workload w =
        generate_or_throw({.blocks = 1, .txs = 4, .accounts = 8, .mix = gen::Mix::mixed});
    return w;
}

/// The pid of a process that has exited and been reaped.
pid_t dead_pid() {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    return child;
}

struct StopInit {
    StopInit() { store::testing::stop_init_before_rename(true); }
    ~StopInit() { store::testing::stop_init_before_rename(false); }
};

}  // namespace

TEST(store_init, an_interrupted_init_leaves_only_a_hidden_sibling_and_the_next_init_succeeds) {
    ScratchDir tmp;
    const fs::path dir = tmp.path() / "data";
    const std::string sibling = ".data.init-" + std::to_string(::getpid());
    {
        const StopInit stop;
        const auto s = store::Store::init(dir, init_workload().genesis);
        ASSERT_FALSE(s);
        EXPECT_EQ(s.error().message, "init stopped by a test");
    }
    // Everything was written, in the sibling; the target does not exist, so every command says
    // "not a datadir" and init is not refused.
    EXPECT_EQ(test::directory_entries(tmp.path()), std::vector<std::string>{sibling});
    EXPECT_TRUE(fs::exists(tmp.path() / sibling / "CURRENT"));
    const auto opened = store::Store::open(dir);
    ASSERT_FALSE(opened);
    EXPECT_EQ(store::to_string(opened.error().code), "not_a_datadir");

    const auto s = store::Store::init(dir, init_workload().genesis);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(test::directory_entries(tmp.path()), std::vector<std::string>{"data"});
}

TEST(store_init, the_next_init_removes_a_dead_processes_sibling_and_keeps_a_live_ones) {
    ScratchDir tmp;
    const fs::path dir = tmp.path() / "data";
    const std::string dead = ".data.init-" + std::to_string(dead_pid());
    const std::string live = ".data.init-1";  // init (pid 1) is alive and is no barrel init
    const std::string other = ".other.init-" + std::to_string(dead_pid());  // another target's
    for (const auto& name : {dead, live, other}) {
        fs::create_directory(tmp.path() / name);
        std::ofstream{tmp.path() / name / "CURRENT"} << "MANIFEST-000001\n";
    }
    ASSERT_TRUE(store::Store::init(dir, init_workload().genesis));
    std::vector<std::string> expected{live, other, "data"};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(test::directory_entries(tmp.path()), expected);
}

TEST(store_init, an_empty_target_directory_is_replaced_and_a_trailing_slash_is_the_same_target) {
    ScratchDir tmp;
    const fs::path dir = tmp.path() / "data";
    fs::create_directory(dir);
    const auto s = store::Store::init(dir.string() + "/", init_workload().genesis);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(test::directory_entries(tmp.path()), std::vector<std::string>{"data"});
    EXPECT_TRUE(fs::exists(dir / "CURRENT"));
}

TEST(store_init, a_full_disk_init_leaves_no_target_and_no_sibling) {
    ScratchDir tmp;
    const fs::path dir = tmp.path() / "data";
    store::testing::FullDisk disk{2000};
    const auto s = store::Store::init(dir, init_workload().genesis);
    ASSERT_FALSE(s);
    EXPECT_EQ(store::to_string(s.error().code), "io");
    EXPECT_TRUE(s.error().message.starts_with("init " + dir.string() +
                                              ": IO error: No space left on device: "))
        << s.error().message;
    EXPECT_EQ(test::directory_entries(tmp.path()), std::vector<std::string>{});
}
