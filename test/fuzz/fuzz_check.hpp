#pragma once
// Shared by the libFuzzer targets: FUZZ_CHECK(cond) aborts with the failed condition, its line and
// the start of the input (hex), so a crash report names the property that broke. Each target
// defines kFuzzTarget (its name in the report) before including this, and calls FUZZ_CHECK where
// a BytesView named `input` is in scope.

#include <barrel/core/bytes.hpp>
#include <barrel/core/hex.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace barrel::fuzz {

[[noreturn]] inline void fail(const char* target, const char* what, int line, BytesView input) {
    std::fprintf(stderr, "%s: check failed at line %d: %s\ninput (%zu bytes): %s\n", target, line,
                 what, input.size(),
                 to_hex(input.first(std::min<size_t>(input.size(), 1024))).c_str());
    std::abort();
}

inline bool same(BytesView a, BytesView b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

/// `part` lies inside `whole` (decoded payloads are views into the input, never copies).
inline bool within(BytesView part, BytesView whole) noexcept {
    if (part.empty()) return true;
    return part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

}  // namespace barrel::fuzz

#define FUZZ_CHECK(cond)                                                        \
    do {                                                                        \
        if (!(cond)) ::barrel::fuzz::fail(kFuzzTarget, #cond, __LINE__, input); \
    } while (false)
