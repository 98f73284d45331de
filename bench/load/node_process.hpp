#pragma once
// A barrel-node of the load generator's own: `init` of a genesis in a temporary datadir, then
// `run --http 127.0.0.1:0`, its port read from the stderr line "JSON-RPC on http://…". Stopped
// with SIGTERM (the node finishes the block in flight and exits 0) and its directory removed
// when the object goes, however the run ends: on an interrupt of barrel-load too (interrupt.hpp).
// Started by barrel-node testnet's launcher (testnet/testnet.hpp), as every program barrel-load
// runs.

#include <barrel/chain/genesis.hpp>

#include "interrupt.hpp"
#include "rpc_client.hpp"
#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace barrel::load {

/// The barrel-node to start: `explicit_path` if given; else barrel-node beside this executable,
/// then ../src/barrel-node relative to it (the build tree), then "barrel-node" (found on PATH).
std::string find_node(const std::string& explicit_path);

/// The text of the file at `path` ("" if it cannot be read).
std::string read_text_file(const std::string& path);

class NodeProcess {
public:
    /// Starts the node on `genesis` with `run_args` added to `run --datadir D --http
    /// 127.0.0.1:0`; returns once it serves. Throws bench::Failure (status 1) with the node's
    /// last lines of stderr if it does not.
    NodeProcess(const std::string& node, const chain::Genesis& genesis,
                const std::vector<std::string>& run_args);
    ~NodeProcess();
    NodeProcess(const NodeProcess&) = delete;
    NodeProcess& operator=(const NodeProcess&) = delete;

    const HttpUrl& url() const noexcept { return m_url; }
    pid_t pid() const noexcept { return m_pid; }

    /// SIGTERM, and waits for it to exit; its exit status (128 + N for a signal N). Idempotent.
    int stop();

    /// The last lines the node wrote to stderr (for an error message).
    std::string recent_log() const;

private:
    void start(const std::string& node, const chain::Genesis& genesis,
               const std::vector<std::string>& run_args);
    void read_stderr(int fd);
    /// stop(), the caller holding InterruptCleanup::lock().
    int stop_locked();
    void remove_directory();

    std::filesystem::path m_dir;
    pid_t m_pid{-1};
    int m_status{0};
    HttpUrl m_url;
    std::thread m_reader;
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<std::string> m_lines;
    std::optional<std::string> m_endpoint;  ///< "HOST:PORT" once the node said it serves
    bool m_eof{false};
    std::optional<InterruptCleanup> m_on_interrupt;  ///< stops the node, removes m_dir
};

/// CPU seconds (user + system) process `pid` has used so far; nothing if it cannot be read.
std::optional<double> process_cpu_seconds(pid_t pid);
/// CPU seconds (user + system) this process has used so far (the load generator's own).
double self_cpu_seconds();
/// Resident set of process `pid` in MiB; nothing if it cannot be read.
std::optional<double> process_rss_mib(pid_t pid);

}  // namespace barrel::load
