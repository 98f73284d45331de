// `barrel-node run --config FILE.toml` and `--dump-config`: a file with every key gives the same
// settings as the same values given as options; an option given overrides the file; what
// --dump-config prints, read back, gives the same settings; each way a file can be wrong is exit 2
// with one line naming the file's line and the key. --dump-config prints and exits before the
// node opens anything, so these run in-process.

#include "cli_run.hpp"
#include "test_files.hpp"
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace barrel;
using barrel::test::run_cli;
using barrel::test::ScratchDir;
using barrel::test::write_text;

namespace {

/// What `run ARGS --dump-config` prints (exit 0 asserted).
std::string dumped(std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    args.emplace_back("--dump-config");
    const auto r = run_cli(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return r.out;
}

/// The `key = value` lines of a dump (its comments and unset options left out), in order.
std::vector<std::pair<std::string, std::string>> settings_of(const std::string& dump) {
    std::vector<std::pair<std::string, std::string>> out;
    std::istringstream in{dump};
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line.starts_with("#")) continue;
        const size_t eq = line.find(" = ");
        out.emplace_back(line.substr(0, eq), line.substr(eq + 3));
    }
    return out;
}

/// Values other than the defaults for the options a config file most often sets; every other
/// option is given its default (so a new option is covered without an entry here).
const std::map<std::string, std::string> kChosen = {
    {"http", "\"127.0.0.1:0\""},
    {"verify-state", "true"},
    {"retain-blocks", "1000"},
    {"block-time", "250"},
    {"max-block-txs", "777"},
    {"coinbase", "\"0x00000000000000000000000000000000000000c0\""},
    {"txpool-max-pending", "12345"},
    {"txpool-max-queued", "678"},
    {"txpool-max-per-sender", "90"},
    {"txpool-max-queued-per-sender", "12"},
    {"txpool-lifetime", "600"},
    {"rpc-max-body", "1048576"},
    {"rpc-max-batch", "50"},
    {"rpc-max-connections", "64"},
    {"rpc-max-response", "2097152"},
    {"rpc-max-unsent", "4194304"},
    {"rpc-threads", "3"},
    {"rpc-header-timeout", "1500"},
    {"rpc-read-timeout", "2500"},
    {"rpc-idle-timeout", "3500"},
    {"rpc-allow-unprotected-txs", "true"},
    {"abci", "\"tcp://127.0.0.1:26658\""},
    {"cometbft-rpc", "\"http://127.0.0.1:26657\""},
    {"cometbft-batch", "25"},
    {"snapshot-interval", "100"},
    {"snapshot-keep", "4"},
    {"log-level", "\"debug\""},
    {"log-format", "\"json\""},
    {"http-cors-origins", "\"http://localhost:5173\""},
    {"http-vhosts", "\"node.example\""},
    {"no-status-page", "true"},
};

/// A TOML value as a command-line option: a string unquoted; a flag is given when true.
void add_option(std::vector<std::string>& args, const std::string& key, const std::string& value) {
    if (value == "false") return;
    args.push_back("--" + key);
    if (value == "true") return;
    args.push_back(value.starts_with("\"") ? value.substr(1, value.size() - 2) : value);
}

TEST(cli_config, a_file_with_every_key_gives_the_settings_the_options_give) {
    ScratchDir tmp;
    const std::string defaults = dumped({"--datadir", "d"});
    std::vector<std::string> options;
    std::string file;
    std::map<std::string, std::string> values(kChosen);
    // Every other option at its default; one with none (coinbase, abci) is among the chosen.
    for (const auto& [key, default_value] : settings_of(defaults))
        values.emplace(key, default_value);
    for (const auto& [key, value] : values) {
        add_option(options, key, value);
        file += key + " = " + value + "\n";
    }
    write_text(tmp / "node.toml", file);

    const std::string from_options = dumped(options);
    const std::string from_file = dumped({"--config", tmp / "node.toml"});
    EXPECT_EQ(from_file, from_options);
    // Not two dumps of the defaults: each chosen value is the setting.
    const auto settings = settings_of(from_file);
    const std::map<std::string, std::string> by_key(settings.begin(), settings.end());
    for (const auto& [key, value] : kChosen) EXPECT_EQ(by_key.at(key), value) << key;
    // Every option has its key in the file: none is left unset (a "# key = VALUE" comment).
    std::istringstream lines{from_file};
    for (std::string line; std::getline(lines, line);)
        EXPECT_FALSE(std::regex_match(line, std::regex{"# [a-z-]+ = [A-Z:.]+"})) << line;
}

TEST(cli_config, a_dump_read_back_gives_the_same_settings) {
    ScratchDir tmp;
    const std::string first =
        dumped({"--datadir", "d", "--txpool-max-pending", "0x100", "--http", "[::1]:0",
                "--rpc-allow-unprotected-txs", "--log-format", "json"});
    EXPECT_NE(first.find("\ntxpool-max-pending = 256\n"), std::string::npos) << first;
    EXPECT_NE(first.find("\nhttp = \"[::1]:0\"\n"), std::string::npos) << first;
    EXPECT_NE(first.find("\n# coinbase = ADDR\n"), std::string::npos) << first;  // none given
    write_text(tmp / "dumped.toml", first);
    EXPECT_EQ(dumped({"--config", tmp / "dumped.toml"}), first);
}

TEST(cli_config, an_option_given_overrides_the_file) {
    ScratchDir tmp;
    write_text(tmp / "node.toml",
               "datadir = \"from-file\"\ntxpool-max-pending = 100\nblock-time = 250\n");
    const auto settings = settings_of(
        dumped({"--config", tmp / "node.toml", "--txpool-max-pending", "200", "--datadir", "d"}));
    const std::map<std::string, std::string> by_key(settings.begin(), settings.end());
    EXPECT_EQ(by_key.at("txpool-max-pending"), "200");
    EXPECT_EQ(by_key.at("datadir"), "\"d\"");
    EXPECT_EQ(by_key.at("block-time"), "250");  // the file's, where no option is given
}

TEST(cli_config, the_datadir_may_come_from_either_but_must_come) {
    ScratchDir tmp;
    write_text(tmp / "empty.toml", "");
    const auto r = run_cli({"run", "--config", tmp / "empty.toml"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "error: run: missing option --datadir DIR\n");
}

TEST(cli_config, each_mistake_in_a_file_is_one_line_naming_its_line_and_key) {
    ScratchDir tmp;
    const std::string path = tmp / "bad.toml";
    struct Case {
        std::string file;
        std::string error;  // after "error: PATH:"
    };
    const std::vector<Case> cases = {
        {"txpool-max-pending = 10\nno-such-option = 1\n",
         "2: unknown key 'no-such-option' (barrel-node run --help lists them)"},
        {"[rpc]\nthreads = 2\n", "1: unknown key 'rpc' (barrel-node run --help lists them)"},
        {"config = \"other.toml\"\n",
         "1: unknown key 'config' (barrel-node run --help lists them)"},
        {"block-time = \"fast\"\n", "1: block-time: expected an integer, got a string"},
        {"block-time = 2.5\n", "1: block-time: expected an integer, got a floating-point number"},
        {"http = 8545\n", "1: http: expected a string, got an integer"},
        {"verify-state = 1\n", "1: verify-state: expected a boolean, got an integer"},
        {"rpc-max-batch = [1]\n", "1: rpc-max-batch: expected an integer, got an array"},
        {"\n\nsnapshot-keep = 0\n", "3: snapshot-keep: must be at least 1"},
        {"rpc-threads = 5000\n", "1: rpc-threads: must be at most 1024, got 5000"},
        {"txpool-max-pending = -1\n",
         "1: txpool-max-pending: expected an unsigned 64-bit integer, got '-1'"},
        {"coinbase = \"0x12\"\n",
         "1: coinbase: expected an address (20 bytes, 40 hex digits), got '0x12'"},
        {"log-level = \"verbose\"\n",
         "1: log-level: expected error, warn, info or debug, got 'verbose'"},
        {"log-format = \"xml\"\n", "1: log-format: expected text or json, got 'xml'"},
    };
    for (const Case& c : cases) {
        write_text(path, c.file);
        const auto r = run_cli({"run", "--datadir", "d", "--config", path, "--dump-config"});
        EXPECT_EQ(r.status, 2) << c.file;
        EXPECT_EQ(r.err, "error: " + path + ":" + c.error + "\n") << c.file;
        EXPECT_EQ(r.out, "") << c.file;
    }
}

TEST(cli_config, a_file_that_is_no_toml_or_cannot_be_read_is_one_line) {
    ScratchDir tmp;
    const std::string path = tmp / "broken.toml";
    write_text(path, "block-time = 1\nblock-time = 2\n");
    auto r = run_cli({"run", "--datadir", "d", "--config", path, "--dump-config"});
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(r.err.starts_with("error: " + path + ":2: invalid TOML: ")) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;

    r = run_cli({"run", "--datadir", "d", "--config", tmp / "missing.toml"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "error: cannot read config '" + (tmp / "missing.toml") +
                         "': No such file or directory\n");
}

}  // namespace
