#pragma once
/// @file
/// The calling thread's page faults, for the tests that check which pages of a cache table a
/// lookup or an insert maps (core/zeroed_pages.hpp: a load from a page never written maps the
/// zero page, a minor fault, and the first store after it is a second one, the copy-on-write).

#include <sys/resource.h>

#include <cstdint>

namespace barrel::test {

/// Minor faults the calling thread has taken so far (its own: the mover thread's are not).
inline uint64_t minor_faults_of_this_thread() {
    rusage usage{};
    ::getrusage(RUSAGE_THREAD, &usage);
    return static_cast<uint64_t>(usage.ru_minflt);
}

/// Whether a sanitizer's shadow memory adds faults of its own to every first access of a page
/// (then only the counts of accesses that touch no table page are exact).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kShadowFaults = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
inline constexpr bool kShadowFaults = true;
#else
inline constexpr bool kShadowFaults = false;
#endif
#else
inline constexpr bool kShadowFaults = false;
#endif

}  // namespace barrel::test
