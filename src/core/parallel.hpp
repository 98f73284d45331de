#pragma once
/// @file
/// The one loop shape every stage uses: each index writes only its own slot of a pre-sized output,
/// so a parallel run and a serial run compute the same thing. `parallel = false` runs on the
/// calling thread, which is the serial baseline the benchmarks compare against.

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <cstddef>

namespace barrel {

template <class Body>
void for_each_index(size_t n, bool parallel, Body&& body) {
    if (!parallel || n < 2) {
        for (size_t i = 0; i < n; ++i) body(i);
        return;
    }
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n),
                      [&body](const tbb::blocked_range<size_t>& r) {
                          for (size_t i = r.begin(); i != r.end(); ++i) body(i);
                      });
}

/// for_each_index over runs of `group` consecutive indices: body(begin, end) for each run of
/// [0, n) (the last may be shorter), for work that handles a few indices at once (keccak256_many
/// hashes four messages per permutation).
template <class Body>
void for_each_group(size_t n, size_t group, bool parallel, Body&& body) {
    const size_t groups = (n + group - 1) / group;
    for_each_index(groups, parallel, [&](size_t g) {
        const size_t begin = g * group;
        body(begin, begin + group < n ? begin + group : n);
    });
}

/// The lowest index at which something failed, updated from any thread. Whatever the timing, once
/// a loop finishes, lowest() is the smallest failing index, because indices below the current
/// minimum are never skipped.
class LowestIndex {
public:
    explicit LowestIndex(size_t none) noexcept : m_none{none}, m_lowest{none} {}

    void record(size_t i) noexcept {
        size_t cur = m_lowest.load(std::memory_order_relaxed);
        while (i < cur && !m_lowest.compare_exchange_weak(cur, i, std::memory_order_relaxed)) {
        }
    }
    /// True if index i cannot change the outcome (a lower index already failed).
    bool beyond(size_t i) const noexcept { return i > m_lowest.load(std::memory_order_relaxed); }
    bool any() const noexcept { return m_lowest.load(std::memory_order_relaxed) != m_none; }
    size_t lowest() const noexcept { return m_lowest.load(std::memory_order_relaxed); }

private:
    size_t m_none;
    std::atomic<size_t> m_lowest;
};

}  // namespace barrel
