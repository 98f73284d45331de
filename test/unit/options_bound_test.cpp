// options::BoundOptions on its own: what a binding says in its help and specs, and how each kind
// of option takes a value from barrel-node's dispatcher (apply) or from a program's own argv
// (app()), as barrel-load does. The commands' own errors are in the cli_* tests and load_usage.

#include "options/bound_options.hpp"
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace barrel {
namespace {

using options::BoundOptions;
using options::ParsedArgs;
using options::Sources;

struct Settings {
    std::string dir;
    uint64_t count{7};
    std::optional<uint64_t> other;
    std::chrono::seconds wait{60};
    std::vector<std::string> extra;
    bool flag{false};
};

void bind(BoundOptions& o, Settings& s) {
    o.text("--dir", "DIR", {"Where", "", true}, s.dir);
    o.count("--count", {"How many"}, s.count, {1, 100});
    o.group("More");
    o.count("--other", "N", {"Another's", "the other program's"}, s.other, {0, 9});
    o.duration("--wait", "S", {"How long"}, s.wait, {1, 3600});
    o.repeated("--extra", "ARG", "One more", s.extra);
    o.flag("--flag", "A switch", s.flag);
    o.group("");
}

TEST(options_bound, help_states_each_default_and_range_once) {
    Settings s;
    BoundOptions o;
    bind(o, s);
    const auto specs = o.specs();
    ASSERT_EQ(specs.size(), 6u);
    EXPECT_EQ(specs[0].help, "Where");
    EXPECT_TRUE(specs[0].required);  // the command line alone gives it
    EXPECT_EQ(specs[1].help, "How many (1 to 100) (default 7)");
    EXPECT_EQ(specs[2].help, "Another's (0 to 9) (default the other program's)");
    EXPECT_EQ(specs[3].help, "How long (1 to 3600) (default 60)");
    EXPECT_EQ(specs[4].help, "One more (repeatable)");
    EXPECT_TRUE(specs[4].repeatable);
    EXPECT_EQ(specs[5].value_name, "");

    Settings t;
    BoundOptions with_file{Sources::command_line_and_file};
    bind(with_file, t);
    EXPECT_FALSE(with_file.specs()[0].required);  // a config file may give it instead
    EXPECT_EQ(with_file.specs()[0].help, "Where (required: here or in the --config file)");
}

TEST(options_bound, apply_stores_each_value_given_and_leaves_the_rest) {
    Settings s;
    BoundOptions o;
    bind(o, s);
    ParsedArgs args;
    args.options = {{"--dir", "d"}, {"--other", "0x9"}, {"--flag", ""}};
    args.repeated = {{"--extra", {"a", "--b"}}};
    o.apply(args);
    EXPECT_EQ(s.dir, "d");
    EXPECT_EQ(s.count, 7u);
    EXPECT_EQ(s.other, 9u);
    EXPECT_EQ(s.wait, std::chrono::seconds{60});
    EXPECT_EQ(s.extra, (std::vector<std::string>{"a", "--b"}));
    EXPECT_TRUE(s.flag);
    EXPECT_TRUE(o.given("--other"));
    EXPECT_FALSE(o.given("--count"));
    EXPECT_EQ(o.given_in("More"), (std::vector<std::string>{"--other", "--extra", "--flag"}));
}

TEST(options_bound, a_value_out_of_range_or_no_count_names_the_option) {
    const std::vector<std::pair<std::pair<std::string, std::string>, std::string>> cases = {
        {{"--count", "0"}, "--count: must be at least 1"},
        {{"--count", "101"}, "--count: must be at most 100, got 101"},
        {{"--count", "x"}, "--count: expected an unsigned 64-bit integer, got 'x'"},
        {{"--other", "10"}, "--other: must be at most 9, got 10"},
        {{"--wait", "0"}, "--wait: must be at least 1"},
        {{"--wait", "3601"}, "--wait: must be at most 3600, got 3601"},
    };
    for (const auto& [given, expected] : cases) {
        Settings s;
        BoundOptions o;
        bind(o, s);
        ParsedArgs args;
        args.options = {{given.first, given.second}};
        try {
            o.apply(args);
            ADD_FAILURE() << given.first << " " << given.second << " accepted";
        } catch (const options::InputError& e) {
            EXPECT_EQ(std::string{e.what()}, expected);
        }
        EXPECT_EQ(s.other, std::nullopt);  // nothing stored from a refused value
    }
}

TEST(options_bound, a_program_parses_its_own_argv_with_the_same_binding) {
    Settings s;
    BoundOptions o;
    bind(o, s);
    CLI::App& app = o.app();
    // `--count 5 --wait 2 --extra x --extra y`: CLI11 takes a vector last word first.
    app.parse(
        std::vector<std::string>{"y", "--extra", "x", "--extra", "2", "--wait", "5", "--count"});
    EXPECT_EQ(s.count, 5u);
    EXPECT_EQ(s.wait, std::chrono::seconds{2});
    EXPECT_EQ(s.extra, (std::vector<std::string>{"x", "y"}));
    EXPECT_EQ(o.given_in("More"), (std::vector<std::string>{"--wait", "--extra"}));
    const std::string help = app.help();
    EXPECT_NE(help.find("--count N"), std::string::npos) << help;
    EXPECT_NE(help.find("More:"), std::string::npos) << help;

    Settings t;
    BoundOptions bad;
    bind(bad, t);
    EXPECT_THROW(bad.app().parse(std::vector<std::string>{"101", "--count"}), CLI::ValidationError);
}

}  // namespace
}  // namespace barrel
