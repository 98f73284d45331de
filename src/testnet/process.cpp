// The one process launcher (testnet.hpp), `barrel-node testnet`'s and barrel-load's: programs run
// to completion (cometbft testnet, init, show-node-id, barrel-load's `testnet` commands), nodes
// started detached and found again by their pid files, a child started and waited for
// (barrel-load's own node); and the probes that ask a node whether it answers (over
// http/client.hpp).
//
// Between fork() and exec() only async-signal-safe calls run: the command line may be called
// from a multi-threaded process (the unit tests), where anything else could deadlock.

#include <barrel/core/endpoint.hpp>
#include <barrel/core/uint256.hpp>

#include "http/client.hpp"
#include "testnet/testnet.hpp"
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>

extern char** environ;

namespace barrel::testnet {

namespace {

/// argv as execve wants it; the strings stay owned by `args`.
std::vector<char*> exec_argv(const std::vector<std::string>& args) {
    std::vector<char*> v;
    v.reserve(args.size() + 1);
    for (const auto& a : args) v.push_back(const_cast<char*>(a.c_str()));
    v.push_back(nullptr);
    return v;
}

/// Closes a descriptor when it goes out of scope.
class Fd {
public:
    explicit Fd(int fd = -1) noexcept : m_fd{fd} {}
    ~Fd() { reset(); }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const noexcept { return m_fd; }
    void reset(int fd = -1) noexcept {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = fd;
    }

private:
    int m_fd;
};

/// Reads exactly sizeof(int) bytes, or fewer at end of file; retried on EINTR.
ssize_t read_int(int fd, int& value) {
    size_t got = 0;
    auto* p = reinterpret_cast<char*>(&value);
    while (got < sizeof value) {
        const ssize_t n = ::read(fd, p + got, sizeof value - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? -1 : static_cast<ssize_t>(got);
        got += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(got);
}

void write_int(int fd, int value) {
    // In a child before exec: nothing to do about a failed write but exit, which the caller does.
    [[maybe_unused]] const ssize_t n = ::write(fd, &value, sizeof value);
}

/// In a child before exec: no signal blocked, none ignored. Both are inherited across exec, and
/// the parent may be a thread that blocks SIGTERM to sigwait for it (a barrel-node running a
/// node) or a process that ignores SIGXFSZ (cli::run): its programs would then not stop on
/// SIGTERM. Handlers need nothing: exec resets them. Async-signal-safe calls only.
void reset_signals() {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig = 1; sig < NSIG; ++sig) {
        struct sigaction current {};
        if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) {
            struct sigaction dfl {};
            dfl.sa_handler = SIG_DFL;
            sigemptyset(&dfl.sa_mask);
            ::sigaction(sig, &dfl, nullptr);
        }
    }
}

/// `name` if it holds a '/', else the first executable `name` in a folder of PATH (`name` if
/// none: the exec then fails with ENOENT). Before the fork: the child only execs.
std::string program_path(const std::string& name) {
    if (name.find('/') != std::string::npos) return name;
    const char* path = std::getenv("PATH");
    std::istringstream dirs{path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin"};
    for (std::string dir; std::getline(dirs, dir, ':');) {
        const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return name;
}

/// How launch starts a program.
struct Launch {
    int out{-1};  ///< stdout; -1: /dev/null
    int err{-1};  ///< stderr; -1: /dev/null
    /// Its own session and process group, through an intermediate child that exits at once:
    /// the program is nobody's child here (init, or the nearest subreaper, reaps it).
    bool detached{false};
};

/// The one launcher: forks (twice when detached) and execs `argv` with stdin /dev/null and
/// stdout and stderr as `how` says. Returns the program's pid, or the errno of what failed (the
/// exec's included, through a close-on-exec pipe).
Expected<int, int> launch(const std::vector<std::string>& argv, const Launch& how) {
    const std::string path = program_path(argv[0]);
    Fd null_fd{::open("/dev/null", O_RDWR | O_CLOEXEC)};
    int report[2];  // when detached, the program's pid; then the exec's errno if it fails
    if (::pipe2(report, O_CLOEXEC) != 0) return unexpected(errno);
    Fd report_read{report[0]}, report_write{report[1]};
    auto args = exec_argv(argv);
    const int null_raw = null_fd.get();
    const int out = how.out >= 0 ? how.out : null_raw;
    const int err = how.err >= 0 ? how.err : null_raw;
    const pid_t child = ::fork();
    if (child < 0) return unexpected(errno);
    if (child == 0) {
        if (how.detached) {
            ::setsid();
            const pid_t program = ::fork();
            if (program < 0) {
                write_int(report[1], -1);
                write_int(report[1], errno);
                ::_exit(1);
            }
            if (program > 0) {
                write_int(report[1], program);
                ::_exit(0);
            }
            ::setpgid(0, 0);  // its own process group: `testnet stop` signals the group
        }
        reset_signals();
        if (null_raw >= 0) ::dup2(null_raw, STDIN_FILENO);
        if (out >= 0) ::dup2(out, STDOUT_FILENO);
        if (err >= 0) ::dup2(err, STDERR_FILENO);
        ::execve(path.c_str(), args.data(), environ);
        write_int(report[1], errno);
        ::_exit(127);
    }
    report_write.reset();
    int pid = child;
    if (how.detached) {
        wait_child(child);
        if (read_int(report_read.get(), pid) != sizeof pid) return unexpected(EIO);
    }
    int exec_errno = 0;
    const ssize_t n = read_int(report_read.get(), exec_errno);  // end of file: exec'd
    if (pid < 0) return unexpected(n == sizeof exec_errno ? exec_errno : EAGAIN);
    if (n == sizeof exec_errno) {
        if (!how.detached) wait_child(child);
        return unexpected(exec_errno);
    }
    return pid;
}

}  // namespace

int wait_child(int pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

Expected<Finished, std::string> run_program(const std::vector<std::string>& argv) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0)
        return unexpected("cannot run '" + argv[0] + "': " + std::strerror(errno));
    Fd out_read{out[0]}, out_write{out[1]};
    const auto pid = launch(argv, {.out = out[1], .err = out[1]});
    if (!pid) return unexpected("cannot run '" + argv[0] + "': " + std::strerror(pid.error()));
    out_write.reset();
    std::string output;
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(out_read.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        output.append(buffer, static_cast<size_t>(n));
    }
    return Finished{wait_child(*pid), std::move(output)};
}

Expected<int, std::string> spawn_child(const std::vector<std::string>& argv, ChildOutput output) {
    const auto pid = launch(argv, {.out = output.out, .err = output.err});
    if (!pid) return unexpected("cannot start '" + argv[0] + "': " + std::strerror(pid.error()));
    return *pid;
}

Expected<int, std::string> spawn_detached(const std::vector<std::string>& argv,
                                          const std::string& log) {
    Fd log_fd{::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)};
    if (log_fd.get() < 0)
        return unexpected("cannot open the log '" + log + "': " + std::strerror(errno));
    const auto pid = launch(argv, {.out = log_fd.get(), .err = log_fd.get(), .detached = true});
    if (!pid) return unexpected("cannot start '" + argv[0] + "': " + std::strerror(pid.error()));
    return *pid;
}

bool process_running(int pid, std::string_view marker) {
    if (pid <= 0) return false;
    std::ifstream stat{"/proc/" + std::to_string(pid) + "/stat"};
    std::string line;
    if (!std::getline(stat, line)) return false;
    // "PID (COMM) STATE …": COMM may hold spaces and parentheses, so the state follows the last
    // ')'.
    const size_t close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) return false;
    const char state = line[close + 2];
    if (state == 'Z' || state == 'X') return false;  // dead, not yet reaped
    std::ifstream cmdline{"/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary};
    for (std::string arg; std::getline(cmdline, arg, '\0');)
        if (arg == marker) return true;
    return false;
}

std::optional<int> running_pid(const std::string& pid_file, std::string_view marker) {
    std::ifstream in{pid_file};
    std::string text;
    if (!std::getline(in, text)) return std::nullopt;
    const auto pid = parse_u64(text);
    if (!pid || *pid == 0 || *pid > 0x7fffffff) return std::nullopt;
    const int p = static_cast<int>(*pid);
    if (!process_running(p, marker)) return std::nullopt;
    return p;
}

std::optional<int> barrel_pid(const Node& n) {
    if (n.app != App::barrel) return std::nullopt;
    return running_pid(n.barrel_pid_file(), n.datadir);
}

std::optional<int> cometbft_pid(const Node& n) {
    return running_pid(n.cometbft_pid_file(), n.home);
}

void signal_group(int pid, int signal) {
    if (::kill(-pid, signal) != 0) ::kill(pid, signal);
}

std::string tail_of_file(const std::string& path, size_t lines) {
    std::ifstream in{path};
    std::deque<std::string> last;
    for (std::string line; std::getline(in, line);) {
        last.push_back(std::move(line));
        if (last.size() > lines) last.pop_front();
    }
    std::string out;
    for (const auto& l : last) out += l + "\n";
    return out;
}

// ---- HTTP ------------------------------------------------------------------------------------

namespace {

constexpr std::chrono::milliseconds kProbeTimeout{2000};

/// The JSON object `url` answers: POSTed `body`, or a GET without one.
Expected<nlohmann::json, std::string> json_answer(std::string_view url,
                                                  std::optional<std::string_view> body) {
    auto parsed = parse_http_url(url);
    if (!parsed) return unexpected(parsed.error());
    // A status or a block number: far smaller than this.
    http::Client client{*parsed, http::Options{.timeout = kProbeTimeout, .max_body = 4u << 20}};
    auto a = body ? client.post(*body) : client.get(parsed->target);
    if (!a) return unexpected(a.error());
    if (a->status != 200) return unexpected("HTTP status " + std::to_string(a->status));
    auto doc = nlohmann::json::parse(a->body, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return unexpected(std::string{"not JSON"});
    return doc;
}

}  // namespace

Expected<uint64_t, std::string> barrel_height(const std::string& json_rpc_url) {
    auto doc = json_answer(json_rpc_url,
                           R"({"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]})");
    if (!doc) return unexpected(doc.error());
    const auto it = doc->find("result");
    if (it == doc->end() || !it->is_string()) return unexpected(std::string{"no result"});
    const auto height = parse_u64(it->get<std::string>());
    if (!height) return unexpected(std::string{"not a block number"});
    return *height;
}

Expected<uint64_t, std::string> cometbft_height(const std::string& rpc_url) {
    auto latest = cometbft_latest_block(rpc_url);
    if (!latest) return unexpected(latest.error());
    return latest->height;
}

Expected<LatestBlock, std::string> cometbft_latest_block(const std::string& rpc_url) {
    auto doc = json_answer(rpc_url + "/status", std::nullopt);
    if (!doc) return unexpected(doc.error());
    const auto member = [&](const char* name) -> const nlohmann::json* {
        const nlohmann::json* v = &*doc;
        for (const char* step : {"result", "sync_info", name}) {
            if (!v->is_object() || !v->contains(step)) return nullptr;
            v = &(*v)[step];
        }
        return v->is_string() ? v : nullptr;
    };
    const nlohmann::json* height_text = member("latest_block_height");
    const nlohmann::json* hash_text = member("latest_block_hash");
    if (!height_text) return unexpected(std::string{"no result.sync_info.latest_block_height"});
    if (!hash_text) return unexpected(std::string{"no result.sync_info.latest_block_hash"});
    const auto height = parse_u64(height_text->get<std::string>());
    if (!height) return unexpected(std::string{"not a block height"});
    return LatestBlock{*height, hash_text->get<std::string>()};
}

}  // namespace barrel::testnet
