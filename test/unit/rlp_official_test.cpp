// The official Ethereum RLP vectors (ethereum/tests RLPTests), every case of every file.
// Fixture format and hex caveats: test/data/ethereum-tests/README.md.

#include <barrel/core/hex.hpp>
#include <barrel/rlp/decode.hpp>
#include <barrel/rlp/encode.hpp>

#include <boost/multiprecision/cpp_int.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>

using namespace barrel;
using json = nlohmann::ordered_json;  // keeps the file order in messages

namespace {

const std::filesystem::path kRlpTests =
    std::filesystem::path{BARREL_TEST_DATA_DIR} / "ethereum-tests" / "RLPTests";

json load(const std::filesystem::path& path) {
    std::ifstream in{path};
    if (!in) throw std::runtime_error("cannot open " + path.string());
    return json::parse(in);
}

/// Big-endian bytes without leading zeros (empty for zero) of a decimal of any size.
Bytes big_decimal_to_bytes(const std::string& decimal) {
    const boost::multiprecision::cpp_int v{decimal};
    Bytes out;
    if (v != 0) export_bits(v, std::back_inserter(out), 8);
    return out;
}

Bytes uint_to_bytes(uint64_t v) {
    Bytes out;
    for (; v != 0; v >>= 8) out.insert(out.begin(), static_cast<uint8_t>(v));
    return out;
}

/// The byte string a scalar `in` value stands for: text, "#decimal", or a JSON integer.
Bytes scalar_bytes(const json& in) {
    if (in.is_number_unsigned()) return uint_to_bytes(in.get<uint64_t>());
    if (in.is_number_integer()) throw std::runtime_error("negative integer in fixture");
    const auto& s = in.get_ref<const std::string&>();
    if (!s.empty() && s[0] == '#') return big_decimal_to_bytes(s.substr(1));
    return Bytes(s.begin(), s.end());  // every character is U+0000..U+007F: one byte each
}

/// Encodes a fixture `in` value with barrel's encoder, choosing the overload the value's kind
/// calls for (JSON integers go through the uint64_t overload).
void encode_json(Bytes& out, const json& in) {
    if (in.is_array()) {
        Bytes payload;
        for (const auto& child : in) encode_json(payload, child);
        const size_t before = out.size();
        rlp::encode_list(out, payload);
        EXPECT_EQ(out.size() - before, rlp::header_length(payload.size()) + payload.size());
    } else if (in.is_number_unsigned()) {
        const auto v = in.get<uint64_t>();
        const size_t before = out.size();
        rlp::encode(out, v);
        EXPECT_EQ(out.size() - before, rlp::encoded_length(v));
    } else {
        const Bytes s = scalar_bytes(in);
        const size_t before = out.size();
        rlp::encode(out, BytesView{s});
        EXPECT_EQ(out.size() - before, rlp::encoded_length(BytesView{s}));
    }
}

/// Empty if the decoded tree matches `in`, otherwise where it differs.
std::string mismatch(const rlp::Item& item, const json& in, const std::string& path = "$") {
    if (in.is_array()) {
        if (!item.list) return path + ": expected a list, decoded a string";
        if (item.items.size() != in.size())
            return path + ": expected " + std::to_string(in.size()) + " items, decoded " +
                   std::to_string(item.items.size());
        for (size_t i = 0; i < in.size(); ++i) {
            auto m = mismatch(item.items[i], in[i], path + "[" + std::to_string(i) + "]");
            if (!m.empty()) return m;
        }
        return {};
    }
    if (item.list) return path + ": expected a string, decoded a list";
    const Bytes expected = scalar_bytes(in);
    if (!std::equal(item.bytes.begin(), item.bytes.end(), expected.begin(), expected.end()))
        return path + ": expected " + to_hex(expected) + ", decoded " + to_hex(item.bytes);
    return {};
}

/// Integer values also decode through the typed integer decoders.
void check_integer_decoders(const json& in, BytesView encoded) {
    if (in.is_number_unsigned()) {
        BytesView from = encoded;
        const auto v = rlp::decode_u64(from);
        ASSERT_TRUE(v) << rlp::to_string(v.error());
        EXPECT_EQ(*v, in.get<uint64_t>());
        EXPECT_TRUE(from.empty());
    } else if (in.is_string() && !in.get_ref<const std::string&>().empty() &&
               in.get_ref<const std::string&>()[0] == '#') {
        const auto decimal = in.get_ref<const std::string&>().substr(1);
        const boost::multiprecision::cpp_int expected{decimal};
        BytesView from = encoded;
        const auto v = rlp::decode_u256(from);
        if (big_decimal_to_bytes(decimal).size() <= 32) {
            ASSERT_TRUE(v) << rlp::to_string(v.error());
            EXPECT_EQ(boost::multiprecision::cpp_int{*v}, expected);
        } else {
            ASSERT_FALSE(v);  // "bigint" is 2^256: one byte too wide for u256
            EXPECT_EQ(v.error(), rlp::DecodingError::overflow);
        }
    }
}

/// Failures recorded so far in the running test; a case passes when it adds none.
int failure_count() {
    return ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
}

void report(std::string_view file, size_t run, size_t passed) {
    std::cout << "RLPTests/" << file << ": " << run << " cases run, " << passed << " passed\n";
    ::testing::Test::RecordProperty("cases_run", static_cast<int>(run));
    ::testing::Test::RecordProperty("cases_passed", static_cast<int>(passed));
}

}  // namespace

TEST(rlp_official, rlptest) {
    const json cases = load(kRlpTests / "rlptest.json");
    size_t run = 0, passed = 0;
    for (const auto& entry : cases.items()) {
        // Not a structured binding: lambdas cannot capture those before clang 16.
        const std::string& name = entry.key();
        const json& c = entry.value();
        SCOPED_TRACE(name);
        ++run;
        const int failures_before = failure_count();
        [&] {
            const auto out = from_hex(c.at("out").get<std::string>());
            ASSERT_TRUE(out) << to_string(out.error());
            const json& in = c.at("in");

            Bytes encoded;
            encode_json(encoded, in);
            EXPECT_EQ(to_hex(encoded), to_hex(*out)) << "encode";

            const auto item = rlp::decode_item(*out);
            ASSERT_TRUE(item) << "decode: " << rlp::to_string(item.error());
            EXPECT_EQ(mismatch(*item, in), "");

            Bytes reencoded;
            rlp::encode(reencoded, *item);
            EXPECT_EQ(to_hex(reencoded), to_hex(*out)) << "re-encode";

            check_integer_decoders(in, *out);
        }();
        if (failure_count() == failures_before) ++passed;
    }
    report("rlptest.json", run, passed);
    EXPECT_EQ(run, 28u);
    EXPECT_EQ(passed, 28u);
}

TEST(rlp_official, invalid_rlp_test) {
    // The reason each input is invalid, read off the bytes (the fixture only says "INVALID").
    using E = rlp::DecodingError;
    const std::map<std::string, E> expected_errors{
        {"int32Overflow", E::input_too_short},
        {"int32Overflow2", E::input_too_short},
        {"wrongSizeList", E::non_canonical_size},
        {"wrongSizeList2", E::non_canonical_size},
        {"incorrectLengthInArray", E::leading_zero_in_length},
        {"randomRLP", E::leading_zero_in_length},
        {"bytesShouldBeSingleByte00", E::non_canonical_single_byte},
        {"bytesShouldBeSingleByte01", E::non_canonical_single_byte},
        {"bytesShouldBeSingleByte7F", E::non_canonical_single_byte},
        {"leadingZerosInLongLengthArray1", E::leading_zero_in_length},
        {"leadingZerosInLongLengthArray2", E::leading_zero_in_length},
        {"leadingZerosInLongLengthList1", E::leading_zero_in_length},
        {"leadingZerosInLongLengthList2", E::leading_zero_in_length},
        {"nonOptimalLongLengthArray1", E::non_canonical_size},
        {"nonOptimalLongLengthArray2", E::non_canonical_size},
        {"nonOptimalLongLengthList1", E::non_canonical_size},
        {"nonOptimalLongLengthList2", E::non_canonical_size},
        {"emptyEncoding", E::input_too_short},
        {"lessThanShortLengthArray1", E::input_too_short},
        {"lessThanShortLengthArray2", E::input_too_short},
        {"lessThanShortLengthList1", E::input_too_short},
        {"lessThanShortLengthList2", E::input_too_short},
        {"lessThanLongLengthArray1", E::input_too_short},
        {"lessThanLongLengthArray2", E::input_too_short},
        {"lessThanLongLengthList1", E::input_too_short},
        {"lessThanLongLengthList2", E::input_too_short},
    };

    const json cases = load(kRlpTests / "invalidRLPTest.json");
    size_t run = 0, passed = 0;
    for (const auto& entry : cases.items()) {
        // Not a structured binding: lambdas cannot capture those before clang 16.
        const std::string& name = entry.key();
        const json& c = entry.value();
        SCOPED_TRACE(name);
        ++run;
        const int failures_before = failure_count();
        [&] {
            // Bare or 0x-prefixed, either case; "" is the empty input.
            const auto out = from_hex(c.at("out").get<std::string>());
            ASSERT_TRUE(out) << to_string(out.error());
            const auto item = rlp::decode_item(*out);
            ASSERT_FALSE(item) << "decoded an invalid input";
            const auto it = expected_errors.find(name);
            ASSERT_NE(it, expected_errors.end()) << "case missing from the expected-error table";
            EXPECT_EQ(rlp::to_string(item.error()), rlp::to_string(it->second));
        }();
        if (failure_count() == failures_before) ++passed;
    }
    report("invalidRLPTest.json", run, passed);
    EXPECT_EQ(run, 26u);
    EXPECT_EQ(passed, 26u);
}

TEST(rlp_official, random_rlp_tests) {
    const json cases = load(kRlpTests / "RandomRLPTests" / "example.json");
    size_t run = 0, passed = 0;
    for (const auto& entry : cases.items()) {
        // Not a structured binding: lambdas cannot capture those before clang 16.
        const std::string& name = entry.key();
        const json& c = entry.value();
        SCOPED_TRACE(name);
        ++run;
        const int failures_before = failure_count();
        [&] {
            const auto out = from_hex(c.at("out").get<std::string>());
            ASSERT_TRUE(out) << to_string(out.error());
            const auto item = rlp::decode_item(*out);
            ASSERT_TRUE(item) << rlp::to_string(item.error());
            Bytes reencoded;
            rlp::encode(reencoded, *item);
            EXPECT_EQ(to_hex(reencoded), to_hex(*out));
        }();
        if (failure_count() == failures_before) ++passed;
    }
    report("RandomRLPTests/example.json", run, passed);
    EXPECT_EQ(run, 1u);
    EXPECT_EQ(passed, 1u);
}
