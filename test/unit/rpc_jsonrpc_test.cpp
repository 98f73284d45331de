// JSON-RPC 2.0 framing and parameter checks: every way a request body or a parameter can be
// wrong gets its code and message.

#include "../fuzz/json_identical.hpp"
#include "rpc/jsonrpc.hpp"
#include "rpc/params.hpp"
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace barrel::rpc {
namespace {

Error parse_error_of(std::string_view body, const Limits& limits = {}) {
    auto r = parse_request(body, limits);
    EXPECT_FALSE(r.has_value()) << body;
    return r ? Error{} : r.error();
}

BadCall bad_call_of(std::string_view body) {
    auto r = parse_request(body, {});
    EXPECT_TRUE(r.has_value()) << body;
    EXPECT_EQ(r->calls.size(), 1u);
    EXPECT_FALSE(r->calls[0].has_value()) << body;
    return r->calls[0] ? BadCall{} : r->calls[0].error();
}

TEST(RpcJsonrpc, a_single_call_and_a_batch) {
    auto single = parse_request(R"({"jsonrpc":"2.0","id":7,"method":"eth_chainId"})", {});
    ASSERT_TRUE(single.has_value());
    EXPECT_FALSE(single->batch);
    ASSERT_EQ(single->calls.size(), 1u);
    ASSERT_TRUE(single->calls[0].has_value());
    EXPECT_EQ(single->calls[0]->id, 7);
    EXPECT_EQ(single->calls[0]->method, "eth_chainId");
    EXPECT_EQ(single->calls[0]->params, json::array());
    EXPECT_FALSE(single->calls[0]->notification);

    auto batch = parse_request(
        R"([{"jsonrpc":"2.0","id":"a","method":"m","params":[1]},{"jsonrpc":"2.0","method":"n"},5])",
        {});
    ASSERT_TRUE(batch.has_value());
    EXPECT_TRUE(batch->batch);
    ASSERT_EQ(batch->calls.size(), 3u);
    EXPECT_EQ(batch->calls[0]->id, "a");
    EXPECT_EQ(batch->calls[0]->params, json::array({1}));
    EXPECT_TRUE(batch->calls[1]->notification);
    ASSERT_FALSE(batch->calls[2].has_value());
    EXPECT_EQ(batch->calls[2].error().error.code, code::invalid_request);
    EXPECT_EQ(batch->calls[2].error().error.message, "invalid request: not an object");
}

TEST(RpcJsonrpc, bodies_that_are_not_requests) {
    EXPECT_EQ(parse_error_of("{").code, code::parse_error);
    EXPECT_EQ(parse_error_of("{").message, "parse error");
    EXPECT_EQ(parse_error_of("").code, code::parse_error);
    EXPECT_EQ(parse_error_of("\"\xff\"").code, code::parse_error);  // invalid UTF-8
    EXPECT_EQ(parse_error_of("[]").message, "empty batch");
    EXPECT_EQ(parse_error_of("42").message, "invalid request: not an object or an array");
    EXPECT_EQ(parse_error_of("[1,2,3]", Limits{.max_batch = 2}).message, "batch too large");
    const std::string deep(100, '[');
    const Error depth = parse_error_of(deep + std::string(100, ']'));
    EXPECT_EQ(depth.code, code::invalid_request);
    EXPECT_EQ(depth.message, "invalid request: nested deeper than 64");
    // Brackets inside strings do not count.
    EXPECT_TRUE(parse_request(R"({"jsonrpc":"2.0","id":1,"method":")" + deep + "\"}", {}));
}

TEST(RpcJsonrpc, call_objects_that_are_not_valid) {
    EXPECT_EQ(bad_call_of(R"({"id":1,"method":"m"})").error.message,
              "invalid request: jsonrpc must be \"2.0\"");
    EXPECT_EQ(bad_call_of(R"({"id":1,"method":"m"})").id, 1);
    EXPECT_EQ(bad_call_of(R"({"jsonrpc":"1.0","id":1,"method":"m"})").error.code,
              code::invalid_request);
    EXPECT_EQ(bad_call_of(R"({"jsonrpc":"2.0","id":1,"method":5})").error.message,
              "invalid request: method must be a string");
    EXPECT_EQ(bad_call_of(R"({"jsonrpc":"2.0","id":1})").error.message,
              "invalid request: method must be a string");
    EXPECT_EQ(bad_call_of(R"({"jsonrpc":"2.0","id":{},"method":"m"})").error.message,
              "invalid request: id must be a string, a number or null");
    EXPECT_EQ(bad_call_of(R"({"jsonrpc":"2.0","id":1,"method":"m","params":"x"})").error.message,
              "invalid request: params must be an array or an object");
}

TEST(RpcJsonrpc, response_bodies) {
    auto single = parse_request(R"({"jsonrpc":"2.0","id":1,"method":"m"})", {}).value();
    EXPECT_EQ(response_body(single, {result_response(1, "0x1")}),
              R"({"id":1,"jsonrpc":"2.0","result":"0x1"})");
    EXPECT_EQ(response_body(single, {error_response(nullptr, {code::parse_error, "parse error"})}),
              R"({"error":{"code":-32700,"message":"parse error"},"id":null,"jsonrpc":"2.0"})");
    auto batch = parse_request(R"([{"jsonrpc":"2.0","method":"m"}])", {}).value();
    EXPECT_EQ(response_body(batch, {}), "");  // only notifications: nothing at all
    EXPECT_EQ(response_body(batch, {result_response("x", true)}),
              R"([{"id":"x","jsonrpc":"2.0","result":true}])");
}

// ---- The fast parser against nlohmann ----------------------------------------------------------

/// parse_json accepts what nlohmann accepts, with identical values (types and signs included),
/// and a body nlohmann rejects is the same parse error.
void expect_as_nlohmann(std::string_view text) {
    const json fast = parse_json(text);
    const json reference = json::parse(text, nullptr, /*allow_exceptions=*/false);
    EXPECT_EQ(fast.is_discarded(), reference.is_discarded()) << text;
    if (!reference.is_discarded()) {
        EXPECT_TRUE(testing::identical(fast, reference))
            << text << ": " << fast.dump() << " vs " << reference.dump();
        return;
    }
    const auto request = parse_request(text, {});
    ASSERT_FALSE(request.has_value()) << text;
    EXPECT_EQ(request.error().code, code::parse_error);
    EXPECT_EQ(request.error().message, "parse error");
}

TEST(RpcJsonrpc, numbers_as_nlohmann_types_them) {
    // Unsigned without a sign, signed with one, a double with a fraction or an exponent; past
    // 64 bits a double (nlohmann) where simdjson fails; "-0" is a signed zero to nlohmann.
    for (const char* text :
         {"0", "-0", "1", "-1", "1.0", "-0.0", "0.0", "1e2", "1E+2", "1e-2", "-1.5e-3", "0.1",
          "18446744073709551615", "18446744073709551616", "9223372036854775807",
          "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
          "123456789012345678901234567890", "1e400", "-1e400", "1e-400", "4.9e-324",
          "1.7976931348623157e308", "[-0,0,-0.0]", R"({"id":-0})", "01", "1.", ".5", "-", "+1",
          "1e", "0x10", "NaN", "Infinity"})
        expect_as_nlohmann(text);
}

TEST(RpcJsonrpc, strings_as_nlohmann_reads_them) {
    for (const char* text :
         {R"("")", R"("plain")", R"("\"\\\/\b\f\n\r\t")", R"("\u0041\u00e9\u20ac")",
          R"("\ud83d\ude00")", R"("a\u0000b")", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
          // lone or broken surrogates, bad escapes: both reject
          R"("\ud800")", R"("\udc00")", R"("\ud800\u0041")", R"("\ud800\ud800")", R"("\x")",
          R"("\u12")", R"("\U0041")",
          // invalid UTF-8: a stray continuation, a truncated sequence, overlong, a surrogate
          // in UTF-8, past U+10FFFF
          "\"\xff\"", "\"\x80\"", "\"\xc3\"", "\"\xc3\x28\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"",
          "\"\xf4\x90\x80\x80\"",
          // control characters unescaped; DEL is no control character to JSON
          "\"\x01\"", "\"a\nb\"", "\"\x7f\"", R"("unterminated)"})
        expect_as_nlohmann(text);
    expect_as_nlohmann(std::string_view("\"a\0b\"", 5));  // a raw NUL in a string
}

TEST(RpcJsonrpc, documents_as_nlohmann_reads_them) {
    for (const char* text :
         {"", " ", "null", "true", "false", "nul", "tru", "[]", "{}", " [ 1 , 2 ] ", "\t\r\n{}\n",
          "[1,]", "[,1]", R"({"a"})", R"({"a":})", R"({"a":1,})", R"({1:2})", "[1]x", "1 2",
          "[1] [2]", "{}{}", "/* c */ 1", "1 // c",
          "\xef\xbb\xbf[1]", "\xef\xbb\xbf", "[\xef\xbb\xbf]",  // a byte-order mark
          // duplicate keys: the last one wins, whatever the types
          R"({"a":1,"a":2})", R"({"a":{"b":1},"a":[2],"c":0})", R"({"a":[1],"a":{"b":1}})",
          R"({"":1,"":""})", R"({"b":1,"a":2})",
          R"([{"jsonrpc":"2.0","id":1,"method":"m","params":["0x01",{"x":[null,true]}]}])"})
        expect_as_nlohmann(text);
    expect_as_nlohmann(std::string_view("\0", 1));
    expect_as_nlohmann(std::string_view("[1]\0", 4));
    expect_as_nlohmann(std::string(63, '[') + std::string(63, ']'));
    std::string big = "[";  // past the size after which the parser's buffers are released
    for (int i = 0; i < 200'000; ++i) big += R"("0123456789",)";
    expect_as_nlohmann(big + "1]");
    expect_as_nlohmann("[1,2]");  // and parsing goes on after the release
}

TEST(RpcJsonrpc, nesting_is_counted_outside_strings_only) {
    const std::string deep(65, '['), closed(65, ']');
    // Escaped quotes do not end a string: the brackets after them are inside it.
    EXPECT_TRUE(parse_request(R"({"jsonrpc":"2.0","id":1,"method":"\"\\\")" + deep + "\"}", {}));
    // An escaped backslash does: the brackets after it count.
    EXPECT_EQ(parse_error_of(R"(["\\",)" + deep + closed + "]").message,
              "invalid request: nested deeper than 64");
    EXPECT_EQ(parse_error_of(R"(["\\\"",)" + deep + closed + "]").message,
              "invalid request: nested deeper than 64");
    // An unterminated string swallows the rest: a parse error, not a depth error.
    EXPECT_EQ(parse_error_of("[\"" + deep).code, code::parse_error);
}

TEST(RpcJsonrpc, the_writer_writes_what_response_body_writes) {
    const std::vector<json> ids{
        1,   -1,  0u, json(std::numeric_limits<uint64_t>::max()), 1.5, "x", "", "quote\"",
        "\xc3\xa9 \x01 \x7f", nullptr, "\xff"};
    const std::vector<json> results{"0x" + std::string(64, 'a'),
                                    true,
                                    nullptr,
                                    json::array({1, "a"}),
                                    json{{"b", 1}, {"a", json::object()}},
                                    "tab\t",
                                    -7,
                                    2.5,
                                    "\xc3\xa9"};
    for (const bool batch : {false, true}) {
        Request request;
        request.batch = batch;
        for (const json& id : ids) {
            for (const json& result : results) {
                ResponseWriter writer{batch};
                writer.result(id, result);
                EXPECT_EQ(std::move(writer).finish(),
                          response_body(request, {result_response(id, result)}));
            }
            const Error error{code::server_error, "nonce too low: \"x\" \xff"};
            ResponseWriter writer{batch};
            writer.error(id, error);
            EXPECT_EQ(std::move(writer).finish(),
                      response_body(request, {error_response(id, error)}));
        }
    }
    // A batch of several responses, results and errors.
    Request batch;
    batch.batch = true;
    ResponseWriter writer{true};
    std::vector<json> responses;
    for (size_t i = 0; i < results.size(); ++i) {
        writer.result(ids[i], results[i]);
        responses.push_back(result_response(ids[i], results[i]));
        writer.error(ids[i], Error{code::invalid_request, "bad"});
        responses.push_back(error_response(ids[i], Error{code::invalid_request, "bad"}));
    }
    EXPECT_EQ(std::move(writer).finish(), response_body(batch, responses));
    EXPECT_EQ(ResponseWriter{true}.finish(), "");  // only notifications: nothing at all
}

// ---- Parameters ------------------------------------------------------------------------------

std::string param_error(const json& params, auto read) {
    auto p = Params::positional(params, 0, 3).value();
    auto r = read(p);
    EXPECT_FALSE(r.has_value()) << params.dump();
    if (r) return {};
    EXPECT_EQ(r.error().code, code::invalid_params);
    return r.error().message;
}

TEST(RpcParams, counts) {
    const json three = json::array({1, 2, 3}), one = json::array({1}), object = json::object();
    EXPECT_EQ(Params::positional(three, 1, 2).error().message,
              "too many arguments, want at most 2");
    EXPECT_EQ(Params::positional(one, 2, 2).error().message,
              "missing value for required argument 1");
    EXPECT_EQ(Params::positional(object, 0, 2).error().message, "non-array args");
    EXPECT_EQ(Params::positional(object, 0, 2).error().code, code::invalid_params);
}

TEST(RpcParams, quantities) {
    auto q = [](const json& v) {
        return param_error(json::array({v}), [](Params& p) { return p.quantity(0, "block"); });
    };
    EXPECT_EQ(q("12"), "invalid argument 0 (block): hex string without 0x prefix");
    EXPECT_EQ(q(""), "invalid argument 0 (block): empty hex string");
    EXPECT_EQ(q("0x"), "invalid argument 0 (block): hex string \"0x\"");
    EXPECT_EQ(q("0x01"), "invalid argument 0 (block): hex number with leading zero digits");
    EXPECT_EQ(q("0x1g"), "invalid argument 0 (block): invalid hex string");
    EXPECT_EQ(q("0x10000000000000000"), "invalid argument 0 (block): hex number > 64 bits");
    EXPECT_EQ(q(12), "invalid argument 0 (block): want a 0x-prefixed hex string");
    const json values = json::array({"0x0", "0xff", "0xFFFFFFFFFFFFFFFF"});
    auto p = Params::positional(values, 3, 3).value();
    EXPECT_EQ(p.quantity(0, "a").value(), 0u);
    EXPECT_EQ(p.quantity(1, "a").value(), 255u);
    EXPECT_EQ(p.quantity(2, "a").value(), UINT64_MAX);
}

TEST(RpcParams, data_addresses_and_hashes) {
    auto addr = [](const json& v) {
        return param_error(json::array({v}), [](Params& p) { return p.address(0, "address"); });
    };
    EXPECT_EQ(addr("0x12"),
              "invalid argument 0 (address): hex string has length 2, want 40 for an address");
    EXPECT_EQ(addr("0x123"), "invalid argument 0 (address): hex string of odd length");
    EXPECT_EQ(addr("1234"), "invalid argument 0 (address): hex string without 0x prefix");
    auto hash = [](const json& v) {
        return param_error(json::array({v}), [](Params& p) { return p.hash(0, "hash"); });
    };
    EXPECT_EQ(hash("0x" + std::string(62, '0')),
              "invalid argument 0 (hash): hex string has length 62, want 64 for a hash");
    const json values = json::array({"0x" + std::string(40, 'A'), "0x", "0x00ff"});
    auto p = Params::positional(values, 3, 3).value();
    EXPECT_EQ(p.address(0, "a").value()[19], 0xaa);
    EXPECT_TRUE(p.data(1, "d").value().empty());
    EXPECT_EQ(p.data(2, "d").value(), (Bytes{0x00, 0xff}));
}

TEST(RpcParams, blocks) {
    auto block = [](const json& v) {
        const json params = json::array({v});
        return Params::positional(params, 0, 1).value().block(0, "block");
    };
    for (const char* tag : {"latest", "safe", "finalized"})
        EXPECT_EQ(block(tag).value().kind, BlockRef::Kind::latest) << tag;
    EXPECT_EQ(block("pending").value().kind, BlockRef::Kind::pending);
    EXPECT_EQ(block("earliest").value().kind, BlockRef::Kind::earliest);
    EXPECT_EQ(block("0x10").value().number, 16u);
    EXPECT_EQ(block(json::object({{"blockNumber", "0x2"}})).value().number, 2u);
    const auto by_hash = block(json::object({{"blockHash", "0x" + std::string(64, '1')}})).value();
    EXPECT_EQ(by_hash.kind, BlockRef::Kind::hash);
    EXPECT_EQ(by_hash.hash[0], 0x11);
    EXPECT_EQ(block("newest").error().message,
              "invalid argument 0 (block): unknown block tag \"newest\" (want latest, earliest, "
              "pending, safe, finalized or a 0x number)");
    EXPECT_EQ(block(json::object()).error().message,
              "invalid argument 0 (block): want exactly one of blockNumber and blockHash");
    EXPECT_EQ(block(json::object({{"blockHash", "0x12"}})).error().message,
              "invalid argument 0 (block): blockHash: hex string has length 2, want 64 for a hash");
    EXPECT_EQ(block(true).error().message,
              "invalid argument 0 (block): want a block tag or number");
    // Absent: latest.
    const json empty = json::array();
    auto none = Params::positional(empty, 0, 1).value();
    EXPECT_EQ(none.block(0, "block").value().kind, BlockRef::Kind::latest);
}

}  // namespace
}  // namespace barrel::rpc
