#include "interrupt.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

namespace barrel::load {

namespace {

struct Registry {
    std::mutex mutex;
    std::map<uint64_t, std::function<void()>> cleanups;  ///< in registration order
    uint64_t next_id{0};
};

Registry& registry() {
    static Registry r;  // never destroyed before the waiting thread is done with it: it _exits
    return r;
}

/// SIGINT and SIGTERM, but not one this process was started ignoring (a shell's background job
/// ignores SIGINT; nohup-like starters ignore more): that choice stays its starter's.
sigset_t interrupt_signals() {
    sigset_t set;
    sigemptyset(&set);
    for (const int signal : {SIGINT, SIGTERM}) {
        struct sigaction current {};
        if (sigaction(signal, nullptr, &current) == 0 && current.sa_handler != SIG_IGN)
            sigaddset(&set, signal);
    }
    return set;
}

[[noreturn]] void clean_up_and_exit(int signal) {
    const char* name = signal == SIGINT ? "SIGINT" : "SIGTERM";
    std::fprintf(stderr, "barrel-load: %s: stopping the node and removing its temporary files\n",
                 name);
    Registry& r = registry();
    const std::lock_guard lock{r.mutex};
    for (auto& [id, cleanup] : r.cleanups) cleanup();
    std::fflush(stderr);
    // No unwinding: the other threads are in the middle of sends, signing or the ceiling loop.
    _exit(128 + signal);
}

}  // namespace

void handle_interrupts() {
    const sigset_t set = interrupt_signals();
    if (sigismember(&set, SIGINT) != 1 && sigismember(&set, SIGTERM) != 1) return;
    if (const int rc = pthread_sigmask(SIG_BLOCK, &set, nullptr); rc != 0) {
        std::fprintf(stderr, "barrel-load: cannot block SIGINT and SIGTERM: %s\n",
                     std::strerror(rc));
        return;  // then they end the process as by default, as before
    }
    registry();  // constructed before any signal can need it
    std::thread{[set] {
        int signal = 0;
        while (sigwait(&set, &signal) != 0) {
        }
        clean_up_and_exit(signal);
    }}.detach();
}

InterruptCleanup::InterruptCleanup(std::function<void()> cleanup) {
    Registry& r = registry();
    const std::lock_guard lock{r.mutex};
    m_id = r.next_id++;
    r.cleanups.emplace(m_id, std::move(cleanup));
}

InterruptCleanup::~InterruptCleanup() {
    if (!m_registered) return;
    const auto held = lock();
    release(held);
}

std::unique_lock<std::mutex> InterruptCleanup::lock() { return std::unique_lock{registry().mutex}; }

void InterruptCleanup::release(const std::unique_lock<std::mutex>&) {
    if (!m_registered) return;
    registry().cleanups.erase(m_id);
    m_registered = false;
}

}  // namespace barrel::load
