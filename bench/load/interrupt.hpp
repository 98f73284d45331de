#pragma once
// Ctrl-C (SIGINT) or SIGTERM while barrel-load runs: the node it started is stopped and its
// temporary directory removed, a --json or --plot file it was writing is not left behind, and
// barrel-load exits 128 + the signal's number, as a shell reports a child a signal ended. The
// sends, the signing and the ceiling loop are not unwound: a thread that waits for the signal
// runs the cleanups registered at that moment, then ends the process.

#include <cstdint>
#include <functional>
#include <mutex>

namespace barrel::load {

/// Blocks SIGINT and SIGTERM (those not ignored when barrel-load started) in the calling thread
/// and so in every thread started after it (call it first in main), and starts the thread that
/// waits for them.
void handle_interrupts();

/// A cleanup that an interrupt runs, registered from construction to destruction. The owner
/// tears down under lock() whatever the cleanup would touch, so that the two never run at once
/// (the interrupt runs every cleanup under the same lock).
class InterruptCleanup {
public:
    explicit InterruptCleanup(std::function<void()> cleanup);
    ~InterruptCleanup();
    InterruptCleanup(const InterruptCleanup&) = delete;
    InterruptCleanup& operator=(const InterruptCleanup&) = delete;

    /// The lock the interrupt holds while it cleans up.
    static std::unique_lock<std::mutex> lock();
    /// Unregisters now, `held` being lock(): the owner is about to tear down itself.
    void release(const std::unique_lock<std::mutex>& held);

private:
    uint64_t m_id;
    bool m_registered{true};
};

}  // namespace barrel::load
