#pragma once
// Runs `barrel-node ARGS` in another process, for tests that need one (a second process holding
// the datadir lock, a process to SIGKILL mid-import). The child is this test binary, fork()ed and
// exec()ed with BARREL_CHILD_ARGS set: before any test runs, ChildMode passes those arguments to
// barrel::cli::run and exits with its status.
//
// Why exec and not a bare fork(): a forked copy of this multi-threaded process has none of its
// oneTBB worker threads but all of oneTBB's bookkeeping about them (oneTBB is not fork-safe, so
// the import could hang), and shares RocksDB's in-process table of held locks (so a second open
// would fail as "held by the current process" instead of meeting the real file lock).

#include <barrel/cli/cli.hpp>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace barrel::test {

inline constexpr const char* kChildArgsVariable = "BARREL_CHILD_ARGS";

class ChildMode : public ::testing::Environment {
public:
    void SetUp() override {
        const char* packed = std::getenv(kChildArgsVariable);
        if (packed == nullptr) return;
        std::vector<std::string> args;
        std::istringstream lines{packed};
        for (std::string line; std::getline(lines, line);) args.push_back(line);
        const std::vector<std::string_view> views(args.begin(), args.end());
        std::istringstream in;
        std::ostringstream out;
        const int status = cli::run(views, in, out, std::cerr);
        std::cerr.flush();
        ::_exit(status);
    }
};

/// Registered once for the whole test binary (an inline variable has one instance).
inline ::testing::Environment* const child_mode_environment =
    ::testing::AddGlobalTestEnvironment(new ChildMode);

/// Starts `barrel-node ARGS` in a child process; its stderr goes to `stderr_path` (or stays
/// this process's when empty), its stdout to /dev/null. Returns the child's pid (-1 on failure).
inline pid_t spawn_cli(const std::vector<std::string>& args, const std::string& stderr_path = "") {
    // Everything the child needs is built before fork(), so that the child only calls
    // async-signal-safe functions until exec.
    std::string packed = std::string{kChildArgsVariable} + "=";
    for (const auto& a : args) packed += a + "\n";
    std::vector<char*> envp;
    const size_t prefix = std::strlen(kChildArgsVariable);
    for (char** e = environ; *e != nullptr; ++e)
        if (std::strncmp(*e, kChildArgsVariable, prefix) != 0) envp.push_back(*e);
    envp.push_back(packed.data());
    envp.push_back(nullptr);
    std::string self = "/proc/self/exe";
    std::vector<char*> argv{self.data(), nullptr};

    const pid_t pid = ::fork();
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        if (null >= 0) ::dup2(null, STDOUT_FILENO);  // gtest's banner
        if (!stderr_path.empty()) {
            const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (err >= 0) ::dup2(err, STDERR_FILENO);
        }
        ::execve("/proc/self/exe", argv.data(), envp.data());
        ::_exit(127);
    }
    return pid;
}

/// Waits for the child; its exit status, or -signal if a signal ended it.
inline int wait_child(pid_t pid) {
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid) return -1000;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return -WTERMSIG(status);
    return -1000;
}

}  // namespace barrel::test
