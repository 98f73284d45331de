#pragma once
/// @file
/// The `barrel-node` command line as a function, so tests drive it without processes and
/// `src/node/main.cpp` only forwards argv and the standard streams.

#include <iosfwd>
#include <span>
#include <string_view>

namespace barrel::cli {

/// Exit statuses of every command (docs/architecture.md, "The command lines").
inline constexpr int kExitOk = 0;
/// Something went wrong in the program (an exception it did not expect); stderr has one
/// `error: internal: …` line.
inline constexpr int kExitInternal = 1;
/// The arguments, the input or the environment were wrong (a bad file, a datadir, a full disk,
/// a file size limit, an input over its limit); stderr has exactly one line `error: …` naming
/// what.
inline constexpr int kExitBadInput = 2;

/// Runs one `barrel-node` invocation. `args` are the arguments after the program name
/// (argv[1..argc)). Results go to `out`, the single error line to `err`; `-` arguments read
/// `in`. Never throws.
int run(std::span<const std::string_view> args, std::istream& in, std::ostream& out,
        std::ostream& err) noexcept;

}  // namespace barrel::cli
