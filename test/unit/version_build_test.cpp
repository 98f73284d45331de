// What the binaries say of their build: web3_clientVersion's go-ethereum shape, from the same
// facts as --version (the commit itself is checked against git by the ctest build_version).

#include <barrel/version/version.hpp>

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace {

using namespace barrel;

TEST(version_build, client_version_has_go_ethereums_shape) {
    const version::BuildInfo& b = version::build();
    const std::string commit{b.commit};
    ASSERT_TRUE(std::regex_match(commit, std::regex{"[0-9a-f]{40}|unknown"})) << commit;
    // name/vVERSION-COMMIT/OS-ARCH/COMPILER-MAJOR, as
    // "Geth/v1.13.5-stable-916d6a44/linux-amd64/go1.21.4".
    const std::regex shape{
        "barrel/v([0-9]+\\.[0-9]+\\.[0-9]+)-([0-9a-f]{8})/linux-amd64/(gcc|clang)-[0-9]+"};
    std::smatch m;
    const std::string client = version::client_version();
    ASSERT_TRUE(std::regex_match(client, m, shape)) << client;
    EXPECT_EQ(m[1], std::string{b.version});
    EXPECT_EQ(m[2], commit.substr(0, 8));
    EXPECT_TRUE(std::string{b.compiler}.starts_with(m[3].str() + " ")) << b.compiler;
}

TEST(version_build, describe_names_every_fact) {
    const version::BuildInfo& b = version::build();
    const std::string text = version::describe("barrel-node");
    EXPECT_TRUE(text.starts_with("barrel-node " + std::string{b.version} + "\ncommit " +
                                 std::string{b.commit}))
        << text;
    EXPECT_NE(text.find("\ncompiler " + std::string{b.compiler} + "\n"), std::string::npos);
    EXPECT_NE(text.find("\nbuild type " + std::string{b.build_type} + "\n"), std::string::npos);
    EXPECT_TRUE(text.ends_with("\n"));
}

}  // namespace
