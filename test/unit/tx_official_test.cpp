// The official Ethereum transaction vectors (ethereum/tests TransactionTests), every file.
// Each case is judged by the result of the latest fork it has (Cancun first, then back to
// Frontier): barrel implements Cancun-era rules with chain id 1, which is what the fixtures
// assume. Fixture format and fork rules: test/data/ethereum-tests/README.md.

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/tx/transaction.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace barrel;
using json = nlohmann::json;

namespace {

const std::filesystem::path kTransactionTests =
    std::filesystem::path{BARREL_TEST_DATA_DIR} / "ethereum-tests" / "TransactionTests";

/// Latest first: a case is judged by the first of these it has a result for.
constexpr std::array<const char*, 13> kForks{
    "Cancun",         "Shanghai",  "Paris",  "London", "Berlin",    "Istanbul", "ConstantinopleFix",
    "Constantinople", "Byzantium", "EIP158", "EIP150", "Homestead", "Frontier",
};

constexpr size_t kExpectedCases = 210;
constexpr uint64_t kChainId = 1;

struct OfficialCase {
    /// The file stem, unique over all folders. The test key inside usually equals it, but not
    /// always upstream (ttVValue/ValidChainID1InvalidV01.json holds "ValidChainID1InvalidV00").
    std::string name;
    std::string key;   ///< the test key inside the file
    std::string file;  ///< relative to TransactionTests/, for messages
    std::string fork;  ///< the fork whose result is used
    std::string txbytes;
    bool valid{false};
    std::string hash;           ///< valid cases
    std::string sender;         ///< valid cases
    uint64_t intrinsic_gas{0};  ///< valid cases
    std::string exception;      ///< invalid cases (a hint only: any rejection passes)
};

/// Reads one fixture file into a case; a malformed fixture becomes an error message.
std::optional<OfficialCase> read_case(const std::filesystem::path& path, std::string& error) {
    std::ifstream in{path};
    if (!in) {
        error = "cannot open " + path.string();
        return std::nullopt;
    }
    const json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object() || doc.size() != 1) {
        error = path.string() + ": expected one test object";
        return std::nullopt;
    }
    OfficialCase c;
    c.name = path.stem().string();
    c.key = doc.begin().key();
    c.file = std::filesystem::relative(path, kTransactionTests).string();
    const json& test = doc.begin().value();
    if (!test.contains("txbytes") || !test.contains("result")) {
        error = c.file + ": no txbytes or result";
        return std::nullopt;
    }
    c.txbytes = test["txbytes"].get<std::string>();
    const json& result = test["result"];
    const auto fork = std::find_if(kForks.begin(), kForks.end(),
                                   [&](const char* f) { return result.contains(f); });
    if (fork == kForks.end()) {
        error = c.file + ": no result for a known fork";
        return std::nullopt;
    }
    c.fork = *fork;
    const json& r = result[c.fork];
    if (r.contains("exception")) {
        c.valid = false;
        c.exception = r["exception"].get<std::string>();
    } else {
        c.valid = true;
        c.hash = r.at("hash").get<std::string>();
        c.sender = r.at("sender").get<std::string>();
        const auto gas = parse_u64(r.at("intrinsicGas").get<std::string>());
        if (!gas) {
            error = c.file + ": bad intrinsicGas";
            return std::nullopt;
        }
        c.intrinsic_gas = *gas;
    }
    return c;
}

struct LoadedCases {
    std::vector<OfficialCase> cases;
    std::vector<std::string> errors;  ///< fixtures that could not be read
};

/// All cases, sorted by file path so the order does not depend on the file system.
const LoadedCases& all_cases() {
    static const LoadedCases loaded = [] {
        LoadedCases out;
        std::error_code ec;
        std::vector<std::filesystem::path> files;
        for (auto it = std::filesystem::recursive_directory_iterator{kTransactionTests, ec};
             !ec && it != std::filesystem::recursive_directory_iterator{}; it.increment(ec)) {
            if (it->is_regular_file() && it->path().extension() == ".json")
                files.push_back(it->path());
        }
        if (ec)
            out.errors.push_back("cannot list " + kTransactionTests.string() + ": " + ec.message());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            std::string error;
            try {
                if (auto c = read_case(f, error))
                    out.cases.push_back(std::move(*c));
                else
                    out.errors.push_back(error);
            } catch (const std::exception& e) {
                out.errors.push_back(f.string() + ": " + e.what());
            }
        }
        return out;
    }();
    return loaded;
}

/// Runs one case; returns why it failed, or nothing if it passed.
std::optional<std::string> check(const OfficialCase& c) {
    const auto bytes = from_hex(c.txbytes);
    if (!bytes) return "txbytes is not hex";
    const auto decoded = tx::decode(*bytes);

    if (!c.valid) {
        // Any rejection will do: the exception names are hints (README), not barrel's codes.
        if (!decoded) return std::nullopt;
        if (!tx::validate(*decoded, kChainId)) return std::nullopt;
        if (!tx::recover_sender(*decoded, tx::signing_hash(*decoded))) return std::nullopt;
        return "accepted, but " + c.fork + " expects " + c.exception;
    }

    if (!decoded) return "decode failed: " + tx::describe(decoded.error());
    const auto valid = tx::validate(*decoded, kChainId);
    if (!valid) return "validate failed: " + tx::describe(valid.error());
    const auto sender = tx::recover_sender(*decoded, tx::signing_hash(*decoded));
    if (!sender) return "recover_sender failed: " + tx::describe(sender.error());

    std::string failures;
    const auto fail = [&](const std::string& what) {
        failures += (failures.empty() ? "" : "; ") + what;
    };
    if (const auto h = to_hex(keccak256(*bytes)); h != c.hash) fail("hash " + h + " != " + c.hash);
    if (const auto h = to_hex(tx::hash_of(*bytes)); h != c.hash)
        fail("hash_of " + h + " != " + c.hash);
    if (const auto s = to_hex(*sender); s != c.sender) fail("sender " + s + " != " + c.sender);
    if (const auto g = tx::intrinsic_gas(*decoded); g != c.intrinsic_gas)
        fail("intrinsic gas " + std::to_string(g) + " != " + std::to_string(c.intrinsic_gas));
    if (const auto re = tx::encode(*decoded); re != *bytes)
        fail("re-encoding differs: " + to_hex(re));
    if (failures.empty()) return std::nullopt;
    return failures;
}

/// gtest parameter names allow only [A-Za-z0-9_].
std::string param_name(const testing::TestParamInfo<OfficialCase>& info) {
    std::string name = info.param.name;
    for (auto& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
}

/// Keeps gtest from dumping the struct's bytes when it lists the parameterised tests.
[[maybe_unused]] void PrintTo(const OfficialCase& c, std::ostream* os) { *os << c.file; }

class tx_official : public testing::TestWithParam<OfficialCase> {};

}  // namespace

TEST_P(tx_official, case) {
    const OfficialCase& c = GetParam();
    SCOPED_TRACE(c.file + " \"" + c.key + "\" (" + c.fork + ", " +
                 (c.valid ? "valid" : c.exception) + ")");
    const auto failure = check(c);
    EXPECT_FALSE(failure.has_value()) << c.name << ": " << failure.value_or("");
}

INSTANTIATE_TEST_SUITE_P(TransactionTests, tx_official, testing::ValuesIn(all_cases().cases),
                         param_name);

// Guards the parameterised suite against silently running fewer cases (a missing or unreadable
// fixture, a case the parameter list dropped) and prints the tally.
TEST(tx_official_summary, all_cases_pass) {
    const auto& loaded = all_cases();
    for (const auto& e : loaded.errors) ADD_FAILURE() << "fixture error: " << e;

    std::set<std::string> names;
    size_t valid = 0, invalid = 0, passed = 0;
    for (const auto& c : loaded.cases) {
        EXPECT_TRUE(names.insert(param_name({c, 0})).second) << "duplicate case name " << c.name;
        (c.valid ? valid : invalid) += 1;
        const auto failure = check(c);
        if (failure)
            ADD_FAILURE() << c.file << " [" << c.fork << "]: " << *failure;
        else
            ++passed;
    }
    const size_t run = loaded.cases.size();
    std::cout << "TransactionTests: " << run << " cases run (" << valid << " valid, " << invalid
              << " invalid), " << passed << " passed\n";
    EXPECT_EQ(run, kExpectedCases);
    EXPECT_EQ(passed, run);
}

// The harness itself must notice every kind of mismatch, or the 210 passes above mean little.
TEST(tx_official_summary, harness_detects_mismatches) {
    const auto& cases = all_cases().cases;
    const auto first_valid =
        std::find_if(cases.begin(), cases.end(), [](const auto& c) { return c.valid; });
    ASSERT_NE(first_valid, cases.end());
    ASSERT_FALSE(check(*first_valid).has_value());

    auto wrong_hash = *first_valid;
    wrong_hash.hash[2] = wrong_hash.hash[2] == '0' ? '1' : '0';
    EXPECT_TRUE(check(wrong_hash).has_value());
    auto wrong_sender = *first_valid;
    wrong_sender.sender[2] = wrong_sender.sender[2] == '0' ? '1' : '0';
    EXPECT_TRUE(check(wrong_sender).has_value());
    auto wrong_gas = *first_valid;
    wrong_gas.intrinsic_gas += 1;
    EXPECT_TRUE(check(wrong_gas).has_value());
    auto expected_invalid = *first_valid;
    expected_invalid.valid = false;
    EXPECT_TRUE(check(expected_invalid).has_value());
}

// tx::recover_senders, which hashes four at a time, against recover_sender one by one over
// every official case that decodes (signatures that do not recover among them, so that a
// failure sits at each position of a run), in runs of every length from 1 to 9.
TEST(tx_official_summary, recover_senders_matches_one_by_one) {
    std::deque<Bytes> encodings;  // a decoded transaction's calldata views its encoding
    std::vector<tx::Transaction> txs;
    for (const auto& c : all_cases().cases) {
        auto bytes = from_hex(c.txbytes);
        if (!bytes) continue;
        encodings.push_back(std::move(bytes).value());
        if (auto decoded = tx::decode(encodings.back())) txs.push_back(std::move(decoded).value());
    }
    std::vector<Expected<Address, tx::TxError>> expected;
    size_t failing = 0;
    for (const auto& t : txs) {
        expected.push_back(tx::recover_sender(t, tx::signing_hash(t)));
        failing += expected.back() ? 0 : 1;
    }
    ASSERT_GT(txs.size(), 100u);
    ASSERT_GT(failing, 0u) << "no case whose signature fails to recover";
    std::vector<const tx::Transaction*> pointers;
    for (const auto& t : txs) pointers.push_back(&t);
    for (size_t run = 1; run <= 9; ++run) {
        for (size_t begin = 0; begin < txs.size(); begin += run) {
            const size_t n = std::min(run, txs.size() - begin);
            std::vector<Expected<Address, tx::TxError>> got(n);
            tx::recover_senders(std::span{pointers}.subspan(begin, n), got);
            for (size_t k = 0; k < n; ++k) {
                const auto& want = expected[begin + k];
                ASSERT_EQ(bool(got[k]), bool(want)) << "run " << run << ", tx " << begin + k;
                if (want)
                    EXPECT_EQ(*got[k], *want) << "run " << run << ", tx " << begin + k;
                else
                    EXPECT_EQ(got[k].error().code, want.error().code) << "tx " << begin + k;
            }
        }
    }
}
