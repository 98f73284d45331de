// barrel-node's dispatcher: help, commands and subcommands, option parsing, global options and
// exit statuses, independent of what the commands do (they are driven through `rlp decode`).

#include "cli_run.hpp"
#include <gtest/gtest.h>

#include <cctype>
#include <sstream>
#include <string>
#include <vector>

using barrel::test::BadInputCase;
using barrel::test::run_cli;

TEST(cli_dispatch, help_lists_exactly_the_implemented_commands) {
    for (const char* flag : {"--help", "-h"}) {
        const auto r = run_cli({flag});
        EXPECT_EQ(r.status, 0);
        EXPECT_EQ(r.err, "");
        EXPECT_TRUE(r.out.starts_with("barrel-node: ")) << r.out;
        for (const char* line : {"  rlp decode HEX|-", "  rlp encode JSON|-", "  tx decode HEX|-",
                                 "  --threads N", "  -h, --help"})
            EXPECT_NE(r.out.find(line), std::string::npos) << line;
        // Only commands that exist are listed: nothing is marked as coming later.
        for (const char* absent : {"not implemented", "unimplemented", "not yet"})
            EXPECT_EQ(r.out.find(absent), std::string::npos) << absent;
    }
    // Every listed command has its own help, i.e. it exists.
    const auto help = run_cli({"--help"}).out;
    const auto begin = help.find("Commands:\n");
    const auto end = help.find("\n\n", begin);
    ASSERT_NE(begin, std::string::npos);
    std::istringstream lines{help.substr(begin + 10, end - begin - 10)};
    size_t listed = 0;
    for (std::string line; std::getline(lines, line);) {
        // "  NAME ARGS   Summary": the left column ends at the first run of 3 spaces; the
        // command's words are its lower-case words before the first argument.
        ASSERT_TRUE(line.starts_with("  ")) << line;
        std::istringstream words{line.substr(2, line.find("   ", 2) - 2)};
        std::vector<std::string> args;
        for (std::string w; words >> w && std::islower(static_cast<unsigned char>(w[0]));)
            args.push_back(w);
        ASSERT_FALSE(args.empty()) << line;
        args.push_back("--help");
        SCOPED_TRACE(line);
        const auto r = run_cli(args);
        EXPECT_EQ(r.status, 0) << r.err;
        args.pop_back();
        std::string name;
        for (const auto& w : args) name += " " + w;
        EXPECT_TRUE(r.out.starts_with("Usage: barrel-node" + name)) << r.out;
        ++listed;
    }
    EXPECT_GE(listed, 3u);
}

TEST(cli_dispatch, help_of_each_command_and_group) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"rlp", "decode", "--help"}, "Usage: barrel-node rlp decode HEX|-\n"},
        {{"rlp", "encode", "-h"}, "Usage: barrel-node rlp encode JSON|-\n"},
        {{"tx", "decode", "--help"}, "Usage: barrel-node tx decode [OPTIONS] HEX|-\n"},
        // --help wins wherever it is among the command's arguments, even after bad ones.
        {{"tx", "decode", "0xzz", "--bogus", "--help"},
         "Usage: barrel-node tx decode [OPTIONS] HEX|-\n"},
        {{"--threads", "2", "rlp", "decode", "--help"}, "Usage: barrel-node rlp decode HEX|-\n"},
        {{"rlp", "--help"}, "Usage: barrel-node rlp SUBCOMMAND [ARGS]\n"},
        {{"tx", "-h"}, "Usage: barrel-node tx SUBCOMMAND [ARGS]\n"},
    };
    for (const auto& [args, first_line] : cases) {
        SCOPED_TRACE(testing::PrintToString(args));
        const auto r = run_cli(args);
        EXPECT_EQ(r.status, 0);
        EXPECT_EQ(r.err, "");
        EXPECT_TRUE(r.out.starts_with(first_line)) << r.out;
    }
    const auto tx_help = run_cli({"tx", "decode", "--help"}).out;
    EXPECT_NE(tx_help.find("  --chain-id N "), std::string::npos) << tx_help;
    EXPECT_NE(tx_help.find("  --threads N "), std::string::npos) << tx_help;
    const auto rlp_help = run_cli({"rlp", "--help"}).out;
    EXPECT_NE(rlp_help.find("  rlp decode HEX|-"), std::string::npos);
    EXPECT_NE(rlp_help.find("  rlp encode JSON|-"), std::string::npos);
    EXPECT_EQ(rlp_help.find("tx decode"), std::string::npos);
}

TEST(cli_dispatch, global_options_before_or_after_the_command) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"--threads", "1", "rlp", "decode", "0x80"},
             {"--threads=4", "rlp", "decode", "0x80"},
             {"rlp", "decode", "0x80", "--threads", "2"},
             {"rlp", "decode", "--threads=65536", "0x80"},
             {"rlp", "decode", "--", "0x80"},
         }) {
        SCOPED_TRACE(testing::PrintToString(args));
        const auto r = run_cli(args);
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, "\"0x\"\n");
        EXPECT_EQ(r.err, "");
    }
}

TEST(cli_dispatch, bad_usage_is_exit_2_with_one_error_line) {
    const std::vector<BadInputCase> cases{
        {{}, "", "error: missing command (see 'barrel-node --help')"},
        {{"foo"}, "", "error: unknown command 'foo' (see 'barrel-node --help')"},
        {{"decode"}, "", "error: unknown command 'decode' (see 'barrel-node --help')"},
        {{"rlp"}, "", "error: rlp: missing subcommand (decode, encode)"},
        {{"tx"}, "", "error: tx: missing subcommand (decode)"},
        {{"rlp", "foo"}, "", "error: rlp: unknown subcommand 'foo' (expected decode, encode)"},
        {{"rlp", "--threads", "2", "decode"},
         "",
         "error: rlp: unknown subcommand '--threads' (expected decode, encode)"},
        {{"--foo", "rlp", "decode", "0x80"}, "", "error: unknown option '--foo'"},
        {{"-x", "rlp"}, "", "error: unknown option '-x'"},
        {{"--threads"}, "", "error: option --threads needs a value N"},
        {{"--threads", "2"}, "", "error: missing command (see 'barrel-node --help')"},
        {{"--threads", "0", "rlp", "decode", "0x80"},
         "",
         "error: --threads: expected a positive integer up to 65536, got '0'"},
        {{"--threads", "abc", "rlp", "decode", "0x80"},
         "",
         "error: --threads: expected a positive integer up to 65536, got 'abc'"},
        {{"--threads=-1", "rlp", "decode", "0x80"},
         "",
         "error: --threads: expected a positive integer up to 65536, got '-1'"},
        {{"--threads=", "rlp", "decode", "0x80"},
         "",
         "error: --threads: expected a positive integer up to 65536, got ''"},
        {{"--threads", "65537", "rlp", "decode", "0x80"},
         "",
         "error: --threads: expected a positive integer up to 65536, got '65537'"},
        {{"rlp", "decode", "0x80", "--threads", "0"},
         "",
         "error: --threads: expected a positive integer up to 65536, got '0'"},
        {{"rlp", "decode", "0x80", "--threads"},
         "",
         "error: rlp decode: option --threads needs a value N"},
        {{"--threads", "2", "rlp", "decode", "--threads", "3", "0x80"},
         "",
         "error: option --threads given twice"},
        {{"rlp", "decode", "--threads", "2", "--threads", "3", "0x80"},
         "",
         "error: rlp decode: option --threads given twice"},
        {{"rlp", "decode"}, "", "error: rlp decode: missing argument HEX|-"},
        {{"rlp", "decode", "0x80", "0x80"}, "", "error: rlp decode: unexpected argument '0x80'"},
        {{"rlp", "decode", "--foo", "0x80"}, "", "error: rlp decode: unknown option '--foo'"},
        {{"rlp", "decode", "--foo=1", "0x80"}, "", "error: rlp decode: unknown option '--foo'"},
        {{"rlp", "decode", "--chain-id", "1", "0x80"},
         "",
         "error: rlp decode: unknown option '--chain-id'"},
        // After "--" everything is an argument, "--help" included.
        {{"rlp", "decode", "--", "--help"},
         "",
         "error: invalid hex: invalid hex digit '-' at position 1"},
        {{"rlp", "decode", "--", "0x80", "--threads"},
         "",
         "error: rlp decode: unexpected argument '--threads'"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(testing::PrintToString(c.args));
        const auto r = run_cli(c.args, c.input);
        EXPECT_EQ(r.status, 2);
        EXPECT_EQ(r.err, c.error + "\n");
        EXPECT_EQ(r.out, "");
    }
}

TEST(cli_dispatch, long_arguments_are_shortened_in_errors) {
    const std::string long_word(100, 'a');
    const auto r = run_cli({long_word});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "error: unknown command '" + std::string(40, 'a') +
                         "...' (see 'barrel-node --help')\n");
}

TEST(cli_dispatch, output_that_cannot_be_written_is_exit_2) {
    const std::vector<std::string_view> args{"rlp", "decode", "0x80"};
    std::istringstream in;
    std::ostringstream out;
    std::ostringstream err;
    out.setstate(std::ios::badbit);
    // The environment's fault (a full disk under a redirection), not barrel's.
    EXPECT_EQ(barrel::cli::run(args, in, out, err), barrel::cli::kExitBadInput);
    EXPECT_EQ(err.str(), "error: cannot write standard output\n");
}
