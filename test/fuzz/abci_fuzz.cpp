// libFuzzer target for the ABCI framing and Request decoding (src/abci/frame.hpp) and the
// dispatch of what decodes (src/abci/dispatch.cpp), on arbitrary bytes taken as a stream from
// CometBFT:
// - the frames (and the error, if any) do not depend on how the stream is cut into reads: the
//   input fed whole and fed in pieces whose sizes the input itself picks give the same;
// - no frame is over the bound, and the reader never holds memory for a length it was only
//   announced: at most what it was fed (plus the vector's growth);
// - an error is one of the reader's messages, and sticks;
// - a payload either fails to parse with its message or is a Request with a value, which written
//   back as a frame reads back as the same bytes; dispatch answers it with the response of its
//   kind (Echo with the same message).
//
// Seed corpus: test/fuzz/corpus/abci/ (streams as CometBFT's socket client writes them: Echo,
// Info, CheckTx and FinalizeBlock frames each followed by Flush; and broken ones).

#include "abci/application.hpp"
#include "abci/frame.hpp"
#include "fuzz_check.hpp"

#include <string>
#include <string_view>
#include <vector>

using namespace barrel;
using namespace barrel::abci;

constexpr const char* kFuzzTarget = "abci_fuzz";  // names the target in FUZZ_CHECK reports

namespace {

constexpr size_t kMaxFrame = 4096;

/// CometBFT's default answers (BaseApplication), Query with an error.
class EmptyApp final : public BaseApplication {
public:
    Answer<pb::ResponseQuery> query(const pb::RequestQuery&) override {
        return unexpected(std::string{"no queries"});
    }
};

struct Stream {
    std::vector<Bytes> frames;
    std::string error;  // empty if the stream held no error
};

bool is_reader_error(const std::string& e) {
    return e == frame_error::kVarintTooLong || e == frame_error::kVarintOverflow ||
           (e.starts_with("frame of ") && e.ends_with(" bytes exceeds the limit of 4096"));
}

/// Reads `input` fed in pieces: each piece's size is the next byte of `sizes` (plus one), the
/// last piece the rest; `sizes` empty feeds the whole input at once.
Stream read_stream(BytesView input, BytesView sizes) {
    FrameReader reader{kMaxFrame};
    Stream out;
    size_t at = 0, size_index = 0;
    while (at < input.size() && out.error.empty()) {
        size_t n = input.size() - at;
        if (size_index < sizes.size()) n = std::min<size_t>(n, sizes[size_index++] + 1u);
        reader.feed(input.subspan(at, n));
        at += n;
        FUZZ_CHECK(reader.held_bytes() <= 2 * (input.size() + 16));
        for (;;) {
            auto frame = reader.next();
            if (!frame) {
                out.error = frame.error();
                FUZZ_CHECK(is_reader_error(out.error));
                auto again = reader.next();  // the error sticks
                FUZZ_CHECK(!again && again.error() == out.error);
                break;
            }
            if (!frame->has_value()) break;
            FUZZ_CHECK((*frame)->size() <= kMaxFrame);
            out.frames.emplace_back((*frame)->begin(), (*frame)->end());
        }
    }
    return out;
}

void check_payload(BytesView input, BytesView payload) {
    auto request = parse_request(payload);
    if (!request) {
        const std::string& e = request.error();
        FUZZ_CHECK(e == "a Request with no value" || e == "a frame of " +
                                                              std::to_string(payload.size()) +
                                                              " bytes that is not a Request");
        return;
    }
    FUZZ_CHECK(request->value_case() != pb::Request::VALUE_NOT_SET);
    // Written back as a frame, it reads back as one frame of the same message.
    Bytes framed;
    append_frame(*request, framed);
    FrameReader reader{framed.size()};
    reader.feed(framed);
    auto frame = reader.next();
    FUZZ_CHECK(frame && frame->has_value());
    const std::string serialized = request->SerializeAsString();
    FUZZ_CHECK(fuzz::same(**frame, as_bytes(serialized)));
    FUZZ_CHECK(reader.between_frames());
    auto reparsed = parse_request(**frame);
    FUZZ_CHECK(reparsed && reparsed->SerializeAsString() == serialized);

    EmptyApp app;
    const pb::Response response = dispatch(app, *request);
    if (request->has_query()) {
        FUZZ_CHECK(response.has_exception() && response.exception().error() == "no queries");
    } else {
        // Response's fields are numbered one past Request's (exception is 1).
        FUZZ_CHECK(static_cast<int>(response.value_case()) ==
                   static_cast<int>(request->value_case()) + 1);
    }
    if (request->has_echo()) FUZZ_CHECK(response.echo().message() == request->echo().message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const BytesView input{data, size};
    const Stream whole = read_stream(input, {});
    // The same stream in pieces whose sizes are its own first bytes, and byte by byte for short
    // inputs: the cuts fall everywhere across the corpus.
    const size_t cuts = std::min<size_t>(input.size(), 32);
    const Stream pieces = read_stream(input, input.first(cuts));
    FUZZ_CHECK(pieces.frames == whole.frames && pieces.error == whole.error);
    if (input.size() <= 64) {
        const Bytes ones(input.size(), 0);
        const Stream bytes = read_stream(input, ones);
        FUZZ_CHECK(bytes.frames == whole.frames && bytes.error == whole.error);
    }
    for (const auto& frame : whole.frames) check_payload(input, frame);
    return 0;
}
