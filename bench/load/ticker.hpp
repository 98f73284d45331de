#pragma once
// The progress loops' clock: a callback every 100 ms from the first send until the run is done,
// whichever mode (one node, a network) runs it.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace barrel::load {

/// Calls `on_tick(tick)` (tick 1, 2, …) at t0 + 100 ms · tick until `done`, which `woken` wakes
/// this from (notified under `mutex`); returns at once when `done` is set, without a last tick.
template <class OnTick>
void tick_every_100ms(std::mutex& mutex, std::condition_variable& woken,
                      const std::atomic<bool>& done, std::chrono::steady_clock::time_point t0,
                      OnTick on_tick) {
    for (size_t tick = 1;; ++tick) {
        {
            std::unique_lock lock{mutex};
            woken.wait_until(lock, t0 + std::chrono::milliseconds{100 * tick},
                             [&] { return done.load(); });
        }
        if (done.load()) return;
        on_tick(tick);
    }
}

}  // namespace barrel::load
