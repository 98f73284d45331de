#include <barrel/version/version.hpp>

#include "version/build_commit.hpp"

namespace barrel::version {

namespace {

#define BARREL_STRINGIFY_(x) #x
#define BARREL_STRINGIFY(x) BARREL_STRINGIFY_(x)

#if defined(__clang__)
constexpr std::string_view kCompilerName = "clang";
constexpr std::string_view kCompiler =
    "clang " BARREL_STRINGIFY(__clang_major__) "." BARREL_STRINGIFY(
        __clang_minor__) "." BARREL_STRINGIFY(__clang_patchlevel__);
constexpr int kCompilerMajor = __clang_major__;
#elif defined(__GNUC__)
constexpr std::string_view kCompilerName = "gcc";
constexpr std::string_view kCompiler = "gcc " BARREL_STRINGIFY(__GNUC__) "." BARREL_STRINGIFY(
    __GNUC_MINOR__) "." BARREL_STRINGIFY(__GNUC_PATCHLEVEL__);
constexpr int kCompilerMajor = __GNUC__;
#else
constexpr std::string_view kCompilerName = "unknown";
constexpr std::string_view kCompiler = "unknown";
constexpr int kCompilerMajor = 0;
#endif

// go-ethereum names the platform by Go's GOOS-GOARCH.
#if defined(__x86_64__)
#define BARREL_ARCH "amd64"
#elif defined(__aarch64__)
#define BARREL_ARCH "arm64"
#else
#define BARREL_ARCH "unknown"
#endif
#if defined(__linux__)
constexpr std::string_view kPlatform = "linux-" BARREL_ARCH;
#else
constexpr std::string_view kPlatform = "unknown-" BARREL_ARCH;
#endif

/// go-ethereum shows 8 digits of its commit.
constexpr size_t kShortCommit = 8;

}  // namespace

const BuildInfo& build() noexcept {
    static const BuildInfo info{BARREL_VERSION, kBuildCommit,      kBuildModified,
                                kCompiler,      BARREL_BUILD_TYPE, kPlatform};
    return info;
}

std::string client_version() {
    const BuildInfo& b = build();
    std::string out = "barrel/v" + std::string{b.version};
    if (b.commit != "unknown") out += "-" + std::string{b.commit.substr(0, kShortCommit)};
    return out + "/" + std::string{b.platform} + "/" + std::string{kCompilerName} + "-" +
           std::to_string(kCompilerMajor);
}

std::string describe(std::string_view program) {
    const BuildInfo& b = build();
    return std::string{program} + " " + std::string{b.version} + "\ncommit " +
           std::string{b.commit} + (b.modified ? " (with uncommitted changes)" : "") +
           "\ncompiler " + std::string{b.compiler} + "\nbuild type " + std::string{b.build_type} +
           "\nplatform " + std::string{b.platform} + "\n";
}

}  // namespace barrel::version
