#include "io/testing.hpp"

#include <atomic>

namespace barrel::io::testing {

namespace {
std::atomic<size_t> g_directory_syncs{0};
}  // namespace

size_t directory_syncs() noexcept { return g_directory_syncs.load(std::memory_order_relaxed); }

void detail::count_directory_sync() noexcept {
    g_directory_syncs.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace barrel::io::testing
