// `barrel-node rlp decode` / `rlp encode`: outputs, every way the input can be wrong, and round
// trips over the official RLP vectors.

#include <barrel/core/hex.hpp>
#include <barrel/rlp/decode.hpp>
#include <barrel/rlp/encode.hpp>

#include "cli_run.hpp"
#include <boost/multiprecision/cpp_int.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>

using barrel::Bytes;
using barrel::test::BadInputCase;
using barrel::test::run_cli;

namespace {

void expect_bad_input(const std::vector<BadInputCase>& cases) {
    for (const auto& c : cases) {
        SCOPED_TRACE(testing::PrintToString(c.args) + " stdin " + testing::PrintToString(c.input));
        const auto r = run_cli(c.args, c.input);
        EXPECT_EQ(r.status, 2);
        EXPECT_EQ(r.err, c.error + "\n");
        EXPECT_EQ(r.out, "");
    }
}

/// `lists` lists, each holding the next, the innermost empty: the RLP bytes.
Bytes nested_lists(size_t lists) {
    Bytes item{0xc0};
    for (size_t i = 1; i < lists; ++i) {
        Bytes outer;
        barrel::rlp::encode_list(outer, item);
        item = std::move(outer);
    }
    return item;
}

/// The same as JSON text.
std::string nested_arrays(size_t lists) {
    return std::string(lists, '[') + std::string(lists, ']');
}

}  // namespace

// ---- rlp decode ------------------------------------------------------------------------------

TEST(cli_rlp, decode_prints_strings_as_hex_and_lists_as_arrays) {
    const std::vector<std::pair<std::string, std::string>> cases{
        {"0x80", R"("0x")"},
        {"0x00", R"("0x00")"},
        {"0x7f", R"("0x7f")"},
        {"0x8180", R"("0x80")"},
        {"0x83646f67", R"("0x646f67")"},
        {"0xc0", "[]"},
        {"0xc88363617483646f67", R"(["0x636174","0x646f67"])"},
        {"0xc7c0c1c0c3c0c1c0", "[[],[[]],[[],[[]]]]"},
        {"C88363617483646F67", R"(["0x636174","0x646f67"])"},  // no prefix, upper case
        {"0XC0", "[]"},
        {"  0xc0\n", "[]"},  // surrounding whitespace is trimmed
    };
    for (const auto& [hex, json] : cases) {
        SCOPED_TRACE(hex);
        const auto r = run_cli({"rlp", "decode", hex});
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, json + "\n");
        EXPECT_EQ(r.err, "");
    }
}

TEST(cli_rlp, decode_reads_standard_input_for_dash) {
    const auto r = run_cli({"rlp", "decode", "-"}, "\n  0xc88363617483646f67 \r\n\n");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "[\"0x636174\",\"0x646f67\"]\n");
}

TEST(cli_rlp, decode_nesting_up_to_the_decoder_limit) {
    const auto deepest =
        run_cli({"rlp", "decode", barrel::to_hex(nested_lists(barrel::rlp::kMaxDepth))});
    EXPECT_EQ(deepest.status, 0) << deepest.err;
    EXPECT_EQ(deepest.out, nested_arrays(barrel::rlp::kMaxDepth) + "\n");
}

TEST(cli_rlp, decode_bad_input) {
    expect_bad_input({
        {{"rlp", "decode"}, "", "error: rlp decode: missing argument HEX|-"},
        {{"rlp", "decode", "0x80", "0x80"}, "", "error: rlp decode: unexpected argument '0x80'"},
        {{"rlp", "decode", "--verbose", "0x80"},
         "",
         "error: rlp decode: unknown option '--verbose'"},
        {{"rlp", "decode", "0xzz"}, "", "error: invalid hex: invalid hex digit 'z' at position 3"},
        {{"rlp", "decode", "0x8 00"},
         "",
         "error: invalid hex: invalid hex digit ' ' at position 4"},
        {{"rlp", "decode", "-x"}, "", "error: invalid hex: invalid hex digit '-' at position 1"},
        // A stray character is named where it is, even when it also makes the count odd.
        {{"rlp", "decode", "0x80 0"},
         "",
         "error: invalid hex: invalid hex digit ' ' at position 5"},
        {{"rlp", "decode", "-"},
         "c0\tc0\n",
         "error: invalid hex: invalid hex digit byte 0x09 at position 3"},
        {{"rlp", "decode", "0x808"}, "", "error: invalid hex: odd number of hex digits"},
        {{"rlp", "decode", "-"}, "0xc", "error: invalid hex: odd number of hex digits"},
        {{"rlp", "decode", ""}, "", "error: empty input"},
        {{"rlp", "decode", "0x"}, "", "error: empty input"},
        {{"rlp", "decode", " \t"}, "", "error: empty input"},
        {{"rlp", "decode", "-"}, "", "error: empty input"},
        {{"rlp", "decode", "-"}, " \n \n", "error: empty input"},
        // Malformed RLP, with the decoder's reason.
        {{"rlp", "decode", "0x83646f"}, "", "error: invalid RLP: input_too_short"},
        {{"rlp", "decode", "0xc2"}, "", "error: invalid RLP: input_too_short"},
        {{"rlp", "decode", "0x8080"}, "", "error: invalid RLP: trailing_bytes"},
        {{"rlp", "decode", "0xc0c0"}, "", "error: invalid RLP: trailing_bytes"},
        {{"rlp", "decode", "0x8100"}, "", "error: invalid RLP: non_canonical_single_byte"},
        {{"rlp", "decode", "0xb800"}, "", "error: invalid RLP: leading_zero_in_length"},
        {{"rlp", "decode", "0xb80100"}, "", "error: invalid RLP: non_canonical_size"},
        {{"rlp", "decode", "0xc28100"}, "", "error: invalid RLP: non_canonical_single_byte"},
        {{"rlp", "decode", "0xc4c0c28100"}, "", "error: invalid RLP: non_canonical_single_byte"},
        {{"rlp", "decode", barrel::to_hex(nested_lists(barrel::rlp::kMaxDepth + 1))},
         "",
         "error: invalid RLP: too_deep"},
    });
}

TEST(cli_rlp, decode_every_invalid_official_vector) {
    const auto path = std::filesystem::path{BARREL_TEST_DATA_DIR} / "ethereum-tests" / "RLPTests" /
                      "invalidRLPTest.json";
    std::ifstream file{path};
    ASSERT_TRUE(file) << path;
    const auto cases = nlohmann::json::parse(file);
    size_t run = 0;
    for (const auto& [name, c] : cases.items()) {
        SCOPED_TRACE(name);
        const std::string hex = c.at("out").get<std::string>();
        const auto r = run_cli({"rlp", "decode", hex});
        EXPECT_EQ(r.status, 2);
        EXPECT_EQ(r.out, "");
        const auto bytes = barrel::from_hex(hex);
        ASSERT_TRUE(bytes);
        if (bytes->empty()) {
            EXPECT_EQ(r.err, "error: empty input\n");
        } else {
            const auto item = barrel::rlp::decode_item(*bytes);
            ASSERT_FALSE(item);
            EXPECT_EQ(r.err, "error: invalid RLP: " +
                                 std::string{barrel::rlp::to_string(item.error())} + "\n");
        }
        ++run;
    }
    EXPECT_EQ(run, 26u);
}

// ---- rlp encode ------------------------------------------------------------------------------

TEST(cli_rlp, encode_hex_strings_integers_and_arrays) {
    const std::vector<std::pair<std::string, std::string>> cases{
        {R"("0x")", "0x80"},
        {R"("0x00")", "0x00"},
        {R"("0x7f")", "0x7f"},
        {R"("0x80")", "0x8180"},
        {R"("0XAB")", "0x81ab"},
        {R"("0xDeadBeef")", "0x84deadbeef"},
        {"[]", "0xc0"},
        {"0", "0x80"},
        {"-0", "0x80"},
        {"1", "0x01"},
        {"127", "0x7f"},
        {"128", "0x8180"},
        {"1024", "0x820400"},
        {"18446744073709551615", "0x88ffffffffffffffff"},
        {R"(["0x636174", 1024])", "0xc783636174820400"},
        {R"( [ "0x636174" , [ "0x646f67" , [] ] ] )", "0xca83636174c583646f67c0"},
        {nested_arrays(barrel::rlp::kMaxDepth),
         barrel::to_hex(nested_lists(barrel::rlp::kMaxDepth))},
    };
    for (const auto& [json, hex] : cases) {
        SCOPED_TRACE(json);
        const auto r = run_cli({"rlp", "encode", json});
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, hex + "\n");
        EXPECT_EQ(r.err, "");
    }
}

TEST(cli_rlp, encode_reads_standard_input_for_dash) {
    const auto r = run_cli({"rlp", "encode", "-"}, "[\n  \"0x636174\",\n  \"0x646f67\"\n]\n");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "0xc88363617483646f67\n");
}

TEST(cli_rlp, encode_bad_input) {
    expect_bad_input({
        {{"rlp", "encode"}, "", "error: rlp encode: missing argument JSON|-"},
        {{"rlp", "encode", "[]", "[]"}, "", "error: rlp encode: unexpected argument '[]'"},
        {{"rlp", "encode", "--hex", "[]"}, "", "error: rlp encode: unknown option '--hex'"},
        {{"rlp", "encode", ""}, "", "error: empty input"},
        {{"rlp", "encode", "-"}, "\n", "error: empty input"},
        // Not JSON at all.
        {{"rlp", "encode", "dog"},
         "",
         "error: invalid JSON: parse error at line 1, column 1: syntax error while parsing value - "
         "invalid literal; last read: 'd'"},
        {{"rlp", "encode", R"(["0x01",)"},
         "",
         "error: invalid JSON: parse error at line 1, column 9: syntax error while parsing value - "
         "unexpected end of input; expected '[', '{', or a literal"},
        {{"rlp", "encode", "[1,2"},
         "",
         "error: invalid JSON: parse error at line 1, column 5: syntax error while parsing array - "
         "unexpected end of input; expected ']'"},
        {{"rlp", "encode", "[] []"},
         "",
         "error: invalid JSON: parse error at line 1, column 4: syntax error while parsing value - "
         "unexpected '['; expected end of input"},
        // A raw newline inside a string: the message still fits on one line.
        {{"rlp", "encode", "\"a\nb\""},
         "",
         "error: invalid JSON: parse error at line 2, column 0: syntax error while parsing value - "
         "invalid string: control character U+000A (LF) must be escaped to \\u000A or \\n; last "
         "read: '\"a<U+000A>'"},
        // JSON, but not an RLP item.
        {{"rlp", "encode", R"("dog")"},
         "",
         R"(error: invalid RLP item at $: expected a 0x-hex string, got "dog")"},
        {{"rlp", "encode", R"(["0x01", "abcd"])"},
         "",
         R"(error: invalid RLP item at $[1]: expected a 0x-hex string, got "abcd")"},
        {{"rlp", "encode", R"("")"},
         "",
         R"(error: invalid RLP item at $: expected a 0x-hex string, got "")"},
        {{"rlp", "encode", R"([[], ["0xzz"]])"},
         "",
         "error: invalid RLP item at $[1][0]: invalid hex: invalid hex digit 'z' at position 3"},
        {{"rlp", "encode", R"("0xabc")"},
         "",
         "error: invalid RLP item at $: invalid hex: odd number of hex digits"},
        {{"rlp", "encode", "-1"},
         "",
         "error: invalid RLP item at $: number -1 is not an unsigned 64-bit integer"},
        {{"rlp", "encode", "[0, -5]"},
         "",
         "error: invalid RLP item at $[1]: number -5 is not an unsigned 64-bit integer"},
        {{"rlp", "encode", "[1.5]"},
         "",
         "error: invalid RLP item at $[0]: number 1.5 is not an unsigned 64-bit integer"},
        {{"rlp", "encode", "1e3"},
         "",
         "error: invalid RLP item at $: number 1e3 is not an unsigned 64-bit integer"},
        // Beyond 2^64-1: named as written, and how to give it (issue 19: it
        // said 1.8446744073709552e+19).
        {{"rlp", "encode", "[1.5, 18446744073709551616]"},
         "",
         "error: invalid RLP item at $[0]: number 1.5 is not an unsigned 64-bit integer"},
        {{"rlp", "encode", "[[1], [18446744073709551616]]"},
         "",
         "error: invalid RLP item at $[1][0]: number 18446744073709551616 is above 2^64-1: give it "
         "as a 0x-hex string"},
        {{"rlp", "encode", "99999999999999999999999999999999999999"},
         "",
         "error: invalid RLP item at $: number 99999999999999999999999999999999999999 is above "
         "2^64-1: give it as a "
         "0x-hex string"},
        {{"rlp", "encode", "18446744073709551616"},
         "",
         "error: invalid RLP item at $: number 18446744073709551616 is above 2^64-1: give it as a "
         "0x-hex string"},
        {{"rlp", "encode", R"({"a": 1})"},
         "",
         "error: invalid RLP item at $: expected a 0x-hex string, unsigned integer or array, got "
         "an object"},
        {{"rlp", "encode", R"([[{}]])"},
         "",
         "error: invalid RLP item at $[0][0]: expected a 0x-hex string, unsigned integer or array, "
         "got an object"},
        {{"rlp", "encode", "null"},
         "",
         "error: invalid RLP item at $: expected a 0x-hex string, unsigned integer or array, got "
         "null"},
        {{"rlp", "encode", "[true]"},
         "",
         "error: invalid RLP item at $[0]: expected a 0x-hex string, unsigned integer or array, "
         "got true"},
        {{"rlp", "encode", R"(")" + std::string(60, 'a') + R"(")"},
         "",
         R"(error: invalid RLP item at $: expected a 0x-hex string, got ")" + std::string(39, 'a') +
             "..."},
        {{"rlp", "encode", nested_arrays(barrel::rlp::kMaxDepth + 1)},
         "",
         "error: invalid RLP item: lists nested deeper than 256"},
    });
}

// ---- Round trips over the official vectors ---------------------------------------------------

namespace {

/// Big-endian bytes without leading zeros (empty for zero).
Bytes minimal_be(const boost::multiprecision::cpp_int& v) {
    Bytes out;
    if (v != 0) export_bits(v, std::back_inserter(out), 8);
    return out;
}

/// The bytes of a scalar fixture `in` (text, "#decimal" or a JSON integer).
Bytes fixture_bytes(const nlohmann::json& in) {
    if (in.is_number_unsigned()) return minimal_be(in.get<uint64_t>());
    const auto& s = in.get_ref<const std::string&>();
    if (s.starts_with("#")) return minimal_be(boost::multiprecision::cpp_int{s.substr(1)});
    return Bytes(s.begin(), s.end());
}

/// The fixture's `in` as `rlp encode` takes it: integers stay JSON integers (the integer path),
/// everything else becomes 0x-hex.
nlohmann::json as_encode_input(const nlohmann::json& in) {
    if (in.is_array()) {
        auto out = nlohmann::json::array();
        for (const auto& child : in) out.push_back(as_encode_input(child));
        return out;
    }
    if (in.is_number_unsigned()) return in;
    return barrel::to_hex(fixture_bytes(in));
}

/// The fixture's `in` as `rlp decode` prints it: every string as 0x-hex.
nlohmann::json as_decode_output(const nlohmann::json& in) {
    if (in.is_array()) {
        auto out = nlohmann::json::array();
        for (const auto& child : in) out.push_back(as_decode_output(child));
        return out;
    }
    return barrel::to_hex(fixture_bytes(in));
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

}  // namespace

TEST(cli_rlp, round_trips_over_official_vectors) {
    const auto path = std::filesystem::path{BARREL_TEST_DATA_DIR} / "ethereum-tests" / "RLPTests" /
                      "rlptest.json";
    std::ifstream file{path};
    ASSERT_TRUE(file) << path;
    const auto cases = nlohmann::json::parse(file);
    size_t run = 0;
    for (const auto& [name, c] : cases.items()) {
        SCOPED_TRACE(name);
        const std::string expected_hex = lower(c.at("out").get<std::string>());
        const std::string decoded_json = as_decode_output(c.at("in")).dump();

        // JSON → RLP, with integers as JSON integers where the fixture has them.
        const auto encoded = run_cli({"rlp", "encode", as_encode_input(c.at("in")).dump()});
        EXPECT_EQ(encoded.status, 0) << encoded.err;
        EXPECT_EQ(encoded.out, expected_hex + "\n");

        // RLP → JSON, from the argument and from standard input.
        const auto decoded = run_cli({"rlp", "decode", expected_hex});
        EXPECT_EQ(decoded.status, 0) << decoded.err;
        EXPECT_EQ(decoded.out, decoded_json + "\n");
        const auto piped = run_cli({"rlp", "decode", "-"}, c.at("out").get<std::string>() + "\n");
        EXPECT_EQ(piped.out, decoded_json + "\n");

        // decode's output is encode's input: back to the same bytes.
        const auto again = run_cli({"rlp", "encode", "-"}, decoded.out);
        EXPECT_EQ(again.status, 0) << again.err;
        EXPECT_EQ(again.out, expected_hex + "\n");
        ++run;
    }
    EXPECT_EQ(run, 28u);
}
