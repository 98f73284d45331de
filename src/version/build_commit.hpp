#pragma once
// Internal to the version module: what the build wrote (cmake/BarrelBuildCommit.cmake, at every
// build, into the build tree's build_commit.cpp).

#include <string_view>

namespace barrel::version {

/// The git commit the binary was built from (40 hex digits), or "unknown" outside a checkout.
extern const std::string_view kBuildCommit;
/// Whether tracked files differed from that commit when it was built.
extern const bool kBuildModified;

}  // namespace barrel::version
