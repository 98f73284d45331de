#include "node_process.hpp"

#include "common/args.hpp"
#include "rpc/cors.hpp"
#include "testnet/testnet.hpp"
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace barrel::load {

namespace fs = std::filesystem;

namespace {

using bench::fail;

constexpr std::string_view kServesLine = "JSON-RPC on http://";
constexpr size_t kKeptLines = 20;

}  // namespace

std::string read_text_file(const std::string& path) {
    std::ifstream in{path};
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string find_node(const std::string& explicit_path) {
    if (!explicit_path.empty()) return explicit_path;
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
        for (const fs::path& candidate : {self.parent_path() / "barrel-node",
                                          self.parent_path() / ".." / "src" / "barrel-node"})
            if (access(candidate.c_str(), X_OK) == 0) return candidate.lexically_normal().string();
    return "barrel-node";
}

NodeProcess::NodeProcess(const std::string& node, const chain::Genesis& genesis,
                         const std::vector<std::string>& run_args) {
    std::string pattern = (fs::temp_directory_path() / "barrel-load-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
        fail("cannot create a temporary directory: " + std::string{std::strerror(errno)});
    m_dir = pattern;
    m_on_interrupt.emplace([this] {
        stop_locked();
        remove_directory();
    });
    try {
        start(node, genesis, run_args);
    } catch (...) {
        // No destructor runs for an object whose constructor throws.
        const auto held = InterruptCleanup::lock();
        m_on_interrupt->release(held);
        stop_locked();
        remove_directory();
        throw;
    }
}

void NodeProcess::remove_directory() {
    std::error_code ec;
    if (!m_dir.empty()) fs::remove_all(m_dir, ec);
}

void NodeProcess::start(const std::string& node, const chain::Genesis& genesis,
                        const std::vector<std::string>& run_args) {
    const fs::path genesis_path = m_dir / "genesis.json";
    std::ofstream{genesis_path} << chain::to_json_text(genesis);
    const std::string datadir = (m_dir / "data").string();
    const auto init = testnet::run_program(
        {node, "init", "--datadir", datadir, "--genesis", genesis_path.string()});
    if (!init) fail(init.error());
    if (init->status != 0)
        fail(node + " init: exit " + std::to_string(init->status) + ": " + init->output);

    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) fail("pipe: " + std::string{std::strerror(errno)});
    std::vector<std::string> argv{node, "run", "--datadir", datadir, "--http", "127.0.0.1:0"};
    argv.insert(argv.end(), run_args.begin(), run_args.end());
    // A dapp in development on this machine may call the node under load, unless the
    // --node-args say otherwise.
    if (std::find(run_args.begin(), run_args.end(), "--http-cors-origins") == run_args.end()) {
        argv.emplace_back("--http-cors-origins");
        argv.emplace_back(rpc::kLocalDappOrigins);
    }
    {
        // An interrupt's cleanup sees the node and its reader both or neither.
        const auto held = InterruptCleanup::lock();
        // Its stderr to the pipe, stdout to /dev/null.
        const auto pid = testnet::spawn_child(argv, {.out = -1, .err = pipe_fds[1]});
        close(pipe_fds[1]);
        if (!pid) {
            close(pipe_fds[0]);
            fail(pid.error());
        }
        m_pid = *pid;
        m_reader = std::thread{[this, fd = pipe_fds[0]] { read_stderr(fd); }};
    }

    std::unique_lock lock{m_mutex};
    const bool up = m_changed.wait_for(lock, std::chrono::seconds{60},
                                       [&] { return m_endpoint.has_value() || m_eof; });
    if (!m_endpoint) {
        lock.unlock();
        fail(node + " run " + (up ? "exited" : "did not serve within 60 s") + ": " + recent_log());
    }
    auto url = parse_http_url("http://" + *m_endpoint);
    if (!url) fail(node + " run: " + url.error());
    m_url = *url;
}

void NodeProcess::read_stderr(int fd) {
    // Read to the end, whatever the node writes: a full pipe would stop the node.
    std::string partial;
    char buf[4096];
    for (;;) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        partial.append(buf, static_cast<size_t>(n));
        size_t nl;
        while ((nl = partial.find('\n')) != std::string::npos) {
            std::string line = partial.substr(0, nl);
            partial.erase(0, nl + 1);
            std::lock_guard lock{m_mutex};
            if (!m_endpoint)
                if (const size_t at = line.find(kServesLine); at != std::string::npos) {
                    m_endpoint = line.substr(at + kServesLine.size());
                    m_changed.notify_all();
                }
            m_lines.push_back(std::move(line));
            if (m_lines.size() > kKeptLines) m_lines.pop_front();
        }
    }
    close(fd);
    std::lock_guard lock{m_mutex};
    m_eof = true;
    m_changed.notify_all();
}

int NodeProcess::stop() {
    const auto held = InterruptCleanup::lock();
    return stop_locked();
}

int NodeProcess::stop_locked() {
    if (m_pid > 0) {
        kill(m_pid, SIGTERM);
        m_status = testnet::wait_child(m_pid);
        m_pid = -1;
    }
    if (m_reader.joinable()) m_reader.join();
    return m_status;
}

NodeProcess::~NodeProcess() {
    const auto held = InterruptCleanup::lock();
    if (m_on_interrupt) m_on_interrupt->release(held);
    stop_locked();
    remove_directory();
}

std::string NodeProcess::recent_log() const {
    std::lock_guard lock{m_mutex};
    std::string out;
    for (const auto& l : m_lines) out += "\n  " + l;
    return out.empty() ? " (nothing on stderr)" : out;
}

double self_cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::optional<double> process_cpu_seconds(pid_t pid) {
    std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
    std::string text;
    if (!std::getline(in, text)) return std::nullopt;
    // Fields after the command name (which may hold spaces, hence from the last ')'): state is
    // field 3, utime and stime are fields 14 and 15.
    std::istringstream fields{text.substr(text.rfind(')') + 2)};
    std::string skip;
    for (int field = 3; field < 14; ++field) fields >> skip;
    double utime = 0, stime = 0;
    if (!(fields >> utime >> stime)) return std::nullopt;
    return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::optional<double> process_rss_mib(pid_t pid) {
    std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("VmRSS:")) return std::stod(line.substr(6)) / 1024.0;
    return std::nullopt;
}

}  // namespace barrel::load
