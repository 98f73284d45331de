// libFuzzer target for the state-sync snapshot decoders (docs/formats.md, "State sync
// snapshots"): what a peer sends as chunk 0 (the index), as Snapshot.metadata, or as a data
// chunk. Each decoder must refuse with a named error or accept only canonical bytes: an accepted
// index or metadata re-encodes to exactly the input, and every accepted chunk entry re-encodes
// (state::encode_entry) to its own bytes, which lie back to back and cover the whole chunk.

#include <barrel/state/lattice.hpp>
#include <barrel/sync/snapshot.hpp>

#include "fuzz_check.hpp"

#include <algorithm>

using namespace barrel;
using fuzz::within;

constexpr const char* kFuzzTarget = "snapshot_fuzz";  // names the target in FUZZ_CHECK reports

namespace {

bool same_bytes(BytesView a, BytesView b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

/// A refusal names its code and what is wrong (FUZZ_CHECK reports `input` with a failure).
template <class T>
void check_refusal(const Expected<T, sync::SnapshotError>& r, BytesView input) {
    if (r) return;
    FUZZ_CHECK(!r.error().message.empty());
    FUZZ_CHECK(sync::to_string(r.error().code) != "unknown");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const BytesView input{data, size};

    const auto index = sync::decode_index(input);
    check_refusal(index, input);
    if (index) FUZZ_CHECK(same_bytes(sync::encode(*index), input));

    const auto metadata = sync::decode_metadata(input);
    check_refusal(metadata, input);
    if (metadata) FUZZ_CHECK(same_bytes(sync::encode(*metadata), input));

    const auto chunk = sync::decode_chunk(input);
    check_refusal(chunk, input);
    if (chunk) {
        size_t at = 0;
        for (const sync::Entry& e : *chunk) {
            FUZZ_CHECK(within(e.encoding, input) && within(e.key, input));
            FUZZ_CHECK(e.encoding.data() == input.data() + at);  // back to back, in order
            at += e.encoding.size();
            FUZZ_CHECK(e.account.has_value() != e.user.has_value());
            Bytes again;
            if (e.account)
                state::encode_entry(again, e.account->first, e.account->second);
            else
                state::encode_entry(again, e.user->first, e.user->second);
            FUZZ_CHECK(same_bytes(again, e.encoding));
        }
        FUZZ_CHECK(at == input.size());
    }
    return 0;
}
