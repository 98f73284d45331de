// libFuzzer target for the JSON-RPC request parser (src/rpc/jsonrpc.hpp) and the parameter
// decoders (src/rpc/params.hpp, a log filter's in src/rpc/filters.hpp) and the messages for
// raw transactions that do not decode (src/rpc/raw_tx_errors.hpp) on arbitrary bytes: a body
// either fails with a JSON-RPC code or gives calls that are valid by construction (an id that is a
// string, a number or null; params an array or an object; a batch within its limit), every
// parameter parse returns a value or an invalid_params error, and a response can always be written
// for what was parsed. The fast parser (parse_json, simdjson) agrees with nlohmann on every input:
// both reject it, or both give identical values (types and signs included), and the same calls; the
// response writer writes the bytes response_body writes for the same responses.
//
// Seed corpus: test/fuzz/corpus/rpc/ (requests as ethers.js and curl send them, a batch, and
// some broken ones).

#include "fuzz_check.hpp"
#include "rpc/filters.hpp"
#include "rpc/jsonrpc.hpp"
#include "rpc/params.hpp"
#include "rpc/raw_tx_errors.hpp"
#include "rpc_identical.hpp"

#include <string>
#include <string_view>

using namespace barrel;
using namespace barrel::rpc;

constexpr const char* kFuzzTarget = "rpc_fuzz";  // names the target in FUZZ_CHECK reports

namespace {

void check_params(const json& params, BytesView input) {
    if (!params.is_array()) return;
    FUZZ_CHECK(check_arity(params, 0, params.size()).has_value());
    for (size_t i = 0; i < params.size(); ++i) {
        auto check = [input](const auto& r) {
            FUZZ_CHECK(r.has_value() || r.error().code == code::invalid_params);
        };
        check(decode<Address>(params, i, "a"));
        check(decode<Hash>(params, i, "h"));
        check(decode<Bytes>(params, i, "d"));
        check(decode<uint64_t>(params, i, "q"));
        check(decode<u256>(params, i, "q"));
        check(decode<bool>(params, i, "b"));
        check(decode<BlockRef>(params, i, "b"));
        check(decode<std::optional<BlockRef>>(params, i, "b"));
        check(decode<LogFilter>(params, i, "f"));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const BytesView input{data, size};  // what FUZZ_CHECK reports
    // The input as a raw transaction the pool refused: a message, whatever the bytes.
    FUZZ_CHECK(!raw_transaction_error(input, "refused").empty());
    const std::string_view body{reinterpret_cast<const char*>(data), size};
    const Limits limits{.max_batch = 16, .max_depth = 16};
    const json fast = parse_json(body);
    const json reference = json::parse(body, nullptr, /*allow_exceptions=*/false);
    FUZZ_CHECK(fast.is_discarded() == reference.is_discarded());
    FUZZ_CHECK(reference.is_discarded() || testing::identical(fast, reference));
    auto request = parse_request(body, limits);
    // After a byte-order mark the body is nlohmann's to parse (simdjson rejects the mark): the
    // calls read from simdjson's DOM must be those read from nlohmann's.
    if (!body.starts_with(testing::kByteOrderMark)) {
        const auto reference_request =
            parse_request(std::string(testing::kByteOrderMark) + std::string(body), limits);
        FUZZ_CHECK(testing::identical(request, reference_request));
    }
    if (!request) {
        const int c = request.error().code;
        FUZZ_CHECK(c == code::parse_error || c == code::invalid_request);
        FUZZ_CHECK(!request.error().message.empty());
        return 0;
    }
    FUZZ_CHECK(!request->calls.empty());
    FUZZ_CHECK(request->batch || request->calls.size() == 1);
    FUZZ_CHECK(request->calls.size() <= limits.max_batch);
    std::vector<json> responses;
    ResponseWriter writer{request->batch};
    for (const auto& call : request->calls) {
        if (!call) {
            FUZZ_CHECK(call.error().error.code == code::invalid_request);
            responses.push_back(error_response(call.error().id, call.error().error));
            writer.error(call.error().id, call.error().error);
            continue;
        }
        FUZZ_CHECK(call->id.is_null() || call->id.is_string() || call->id.is_number());
        FUZZ_CHECK(call->params.is_array() || call->params.is_object());
        check_params(call->params, input);
        if (call->notification) continue;
        // Arbitrary JSON from the input as a result: the first parameter (a string, a number
        // ... for the writer's direct paths) or the params themselves.
        const json& result =
            call->params.is_array() && !call->params.empty() ? call->params[0] : call->params;
        responses.push_back(result_response(call->id, result));
        writer.result(call->id, result);
    }
    const std::string out = response_body(*request, responses);
    FUZZ_CHECK(responses.empty() == out.empty());
    FUZZ_CHECK(std::move(writer).finish() == out);
    return 0;
}
