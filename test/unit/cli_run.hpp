#pragma once
// Drives barrel-node's command line in-process (barrel::cli::run) for the cli_*_test.cpp files.

#include <barrel/cli/cli.hpp>

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::test {

struct CliResult {
    int status{-1};
    std::string out;
    std::string err;
};

/// Runs `barrel-node ARGS...` with `input` as standard input.
inline CliResult run_cli(const std::vector<std::string>& args, const std::string& input = "") {
    const std::vector<std::string_view> views(args.begin(), args.end());
    std::istringstream in{input};
    std::ostringstream out;
    std::ostringstream err;
    CliResult r;
    r.status = cli::run(views, in, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
}

/// One way the arguments or the input can be wrong, and the one line it must produce.
struct BadInputCase {
    std::vector<std::string> args;
    std::string input;  ///< standard input
    std::string error;  ///< the whole stderr line, without its newline
};

}  // namespace barrel::test
