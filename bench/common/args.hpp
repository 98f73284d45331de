#pragma once
// What the benchmark programs (barrel-bench, barrel-load) share about their command lines and
// outputs: how a run ends early, output files created before the long run, and the machine a run
// was measured on. Their options are bound by options/bound_options.hpp, as barrel-node's.

#include <barrel/io/files.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace barrel::bench {

/// How a run ends early: one line "error: MESSAGE" and the exit status. Thrown rather than
/// exited with, so that the outputs' temporary files and the scratch datadirs (and a node the
/// program started) are cleaned up on the way out.
struct Failure {
    int status;
    std::string message;
};

/// A mistake in the arguments or the input: one line, exit status 2 (the usage is --help's).
[[noreturn]] void usage_error(const std::string& msg);

/// A run that cannot go on (a node that would not start, a request that failed): one line, exit
/// status 1.
[[noreturn]] void fail(const std::string& msg);

/// Parses the command line: --help prints the help and --version the build's version, commit,
/// compiler and build type (version::describe), each exiting 0; a mistake CLI11 finds, an
/// unknown option or a stray argument is usage_error's one line (the app must allow extras).
void parse_command_line(CLI::App& app, int argc, char** argv);

/// A benchmark program's main: `run` with SIGXFSZ ignored (past a file size limit a write fails
/// with EFBIG, reported, instead of the process dying mid-write), a Failure or a WriteError
/// printed as one "error: …" line and its exit status.
int guarded_main(const std::function<int()>& run);

/// An output option's file, created before the long run so that a path that cannot be written
/// is an error now rather than silence at the end. Nothing for an empty path.
std::optional<io::AtomicFile> create_output(const std::string& option, const std::string& path);

/// The peak resident set of this process so far, in MiB.
double peak_rss_mib();

/// The CPU model, core count, the thread count used and the host name.
nlohmann::json machine_info(size_t threads);

}  // namespace barrel::bench
