// Compiled into barrel-tests in builds without sanitizers only (test/CMakeLists.txt): with
// BARREL_TEST_NO_THREADS set, starting a thread aborts the process. The ctests of the suites that
// test/CMakeLists.txt lists as single-threaded run with it set in the release tree, which is what
// lets the tsan phase skip them (a suite that starts no thread cannot race) without the list
// going stale: a listed suite that starts a thread fails here, naming this file.
//
// How: the executable's own pthread_create comes before libc's for every caller (oneTBB,
// libstdc++'s std::thread, RocksDB linked in), and passes on to libc's. Sanitizer builds leave
// it out: their run-times intercept pthread_create themselves.

#include <dlfcn.h>
#include <pthread.h>

#include <cstdio>
#include <cstdlib>

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                              void* arg) noexcept {
    using Real = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
    static const auto real = reinterpret_cast<Real>(::dlsym(RTLD_NEXT, "pthread_create"));
    if (std::getenv("BARREL_TEST_NO_THREADS") != nullptr) {
        std::fputs(
            "\nthread_guard: a thread was started with BARREL_TEST_NO_THREADS set: this suite "
            "starts threads, so take it out of barrel_single_threaded_suites in "
            "test/CMakeLists.txt (the tsan phase must run it)\n",
            stderr);
        std::abort();
    }
    return real(thread, attr, start, arg);
}
