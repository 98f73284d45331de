// The node's log lines: each has a time, a level and a module; JSON lines are one object each
// (go-ethereum's "t", "lvl", "msg", then the record's members); a level writes itself and the
// levels before it.

#include "log/logger.hpp"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace barrel;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in{text};
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

/// One record at each level, on a logger at `level`: the levels written, in order.
std::vector<std::string> written_at(log::Level level) {
    std::ostringstream out;
    log::Logger logger{out, level, log::Format::json};
    for (const auto l : {log::Level::error, log::Level::warn, log::Level::info, log::Level::debug})
        logger.write(l, "test", "a line");
    std::vector<std::string> levels;
    for (const auto& line : lines_of(out.str()))
        levels.push_back(nlohmann::json::parse(line).at("lvl").get<std::string>());
    return levels;
}

TEST(log_logger, a_level_writes_itself_and_the_levels_before_it) {
    using V = std::vector<std::string>;
    EXPECT_EQ(written_at(log::Level::error), (V{"error"}));
    EXPECT_EQ(written_at(log::Level::warn), (V{"error", "warn"}));
    EXPECT_EQ(written_at(log::Level::info), (V{"error", "warn", "info"}));
    EXPECT_EQ(written_at(log::Level::debug), (V{"error", "warn", "info", "debug"}));
    std::ostringstream out;
    log::Logger logger{out, log::Level::warn};
    EXPECT_TRUE(logger.enabled(log::Level::warn));
    EXPECT_FALSE(logger.enabled(log::Level::info));
}

TEST(log_logger, a_text_line_is_time_level_module_and_message) {
    std::ostringstream out;
    log::Logger logger{out, log::Level::debug};
    logger.write(log::Level::info, "node", "JSON-RPC on http://127.0.0.1:8545", {{"port", 8545u}});
    logger.write(log::Level::error, "rpc", "eth_call failed: oops");
    const auto lines = lines_of(out.str());
    ASSERT_EQ(lines.size(), 2u);
    const std::string time = "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z";
    // The fields are JSON's alone: the text ends in the message as the node always wrote it.
    EXPECT_TRUE(std::regex_match(
        lines[0], std::regex{time + " INFO  node: JSON-RPC on http://127\\.0\\.0\\.1:8545"}))
        << lines[0];
    EXPECT_TRUE(std::regex_match(lines[1], std::regex{time + " ERROR rpc: eth_call failed: oops"}))
        << lines[1];
}

TEST(log_logger, a_json_line_is_one_object_with_the_records_members) {
    std::ostringstream out;
    log::Logger logger{out, log::Level::info, log::Format::json};
    logger.write(log::Level::info, "node", "sealed block 3: \"quoted\"\nand a second line",
                 {{"height", uint64_t{3}}, {"verify_ms", 1.25}, {"hash", std::string{"0xab"}}});
    logger.write(log::Level::warn, "abci", std::string{"not utf-8: \xff"});
    const auto lines = lines_of(out.str());
    ASSERT_EQ(lines.size(), 2u) << out.str();  // the message's newline is escaped
    const auto first = nlohmann::json::parse(lines[0]);
    EXPECT_EQ(first.at("lvl"), "info");
    EXPECT_EQ(first.at("module"), "node");
    EXPECT_EQ(first.at("msg"), "sealed block 3: \"quoted\"\nand a second line");
    EXPECT_EQ(first.at("height"), 3);
    EXPECT_EQ(first.at("verify_ms"), 1.25);
    EXPECT_EQ(first.at("hash"), "0xab");
    EXPECT_TRUE(std::regex_match(first.at("t").get<std::string>(),
                                 std::regex{"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z"}));
    // go-ethereum's order: time, level, then the rest.
    EXPECT_TRUE(lines[0].starts_with("{\"t\":\"")) << lines[0];
    EXPECT_NE(lines[0].find("\",\"lvl\":\"info\",\"module\":\"node\",\"msg\":"), std::string::npos);
    EXPECT_EQ(nlohmann::json::parse(lines[1]).at("lvl"), "warn");
}

TEST(log_logger, levels_and_formats_are_read_by_name_only) {
    EXPECT_EQ(log::parse_level("debug"), log::Level::debug);
    EXPECT_EQ(log::parse_level("warn"), log::Level::warn);
    EXPECT_EQ(log::parse_level("WARN"), std::nullopt);
    EXPECT_EQ(log::parse_level("warning"), std::nullopt);
    EXPECT_EQ(log::parse_format("json"), log::Format::json);
    EXPECT_EQ(log::parse_format(""), std::nullopt);
}

}  // namespace
