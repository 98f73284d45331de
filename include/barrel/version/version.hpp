#pragma once
/// @file
/// What a binary says about its build: `--version` of barrel-node, barrel-bench and barrel-load,
/// and the node's `web3_clientVersion`. The commit is read at every build
/// (cmake/BarrelBuildCommit.cmake), so it is the build's own even without a new configure. Not
/// installed: the binaries', like cli's.

#include <string>
#include <string_view>

namespace barrel::version {

struct BuildInfo {
    std::string_view version;     ///< the project's, "0.1.0"
    std::string_view commit;      ///< 40 hex digits, or "unknown"
    bool modified;                ///< built with tracked files changed from `commit`
    std::string_view compiler;    ///< "gcc 12.2.0", "clang 14.0.6"
    std::string_view build_type;  ///< CMAKE_BUILD_TYPE: "RelWithDebInfo"
    std::string_view platform;    ///< go-ethereum's OS-architecture: "linux-amd64"
};

const BuildInfo& build() noexcept;

/// go-ethereum's web3_clientVersion shape, name/version-commit/platform/compiler:
/// "barrel/v0.1.0-b4f14601/linux-amd64/gcc-12".
std::string client_version();

/// The `--version` text of `program`, lines ending in '\n':
/// "barrel-node 0.1.0\ncommit b4f1460…\ncompiler gcc 12.2.0\nbuild type RelWithDebInfo\n".
std::string describe(std::string_view program);

}  // namespace barrel::version
