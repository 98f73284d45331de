// An LD_PRELOAD shim that makes a process see a full disk, for the fault-injection suite
// (test/fault/faults.py, scripts/test.sh's faults phase, docs/faults.md).
//
// It counts the calls that write data to a regular file (write, pwrite, writev, pwritev,
// fallocate, posix_fallocate, a growing ftruncate, fwrite) on any fd above 2 — RocksDB writes its
// WAL, SSTs and MANIFEST through these, and barrel's AtomicFile through write — and, with
//   BARREL_FAULT_FAIL_AT=N     fails the Nth such call and every later one with ENOSPC (and
//                              fsync/fdatasync/sync_file_range once the budget is spent, as a
//                              disk that cannot allocate the dirty pages does);
//   BARREL_FAULT_COUNT=FILE    writes the number of such calls the process made to FILE at exit
//                              (a run without faults tells the suite which N to iterate over);
//   BARREL_FAULT_KILL_ON=SUF   raises SIGKILL at the first such call on a file whose path ends
//                              with SUF (".sst": an import killed when its close starts flushing
//                              the memtable, which leaves every block in the WAL and none in an
//                              SST — a deterministic crash point, not a timed one);
//   BARREL_FAULT_CONTROL=FILE  fails every such call (and fsync, and the info log) with ENOSPC
//                              while FILE exists: a disk that fills and empties at the suite's
//                              say, under a process that keeps running (`barrel-node run`).
// Reads, mmaps for reading and fds 0-2 (a pipe or a terminal, or /dev/stdout) are left alone.
// RocksDB's info log (LOG, LOG.old.*) is not counted — it is diagnostics, written line by line,
// and would make the positions to iterate over many times more — but once the budget is spent
// its writes fail too, as every write on a full disk does.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long fail_at = -1;             // 1-based call number that fails first; -1: never
static const char* count_file = 0;    // where the count goes at exit
static const char* kill_suffix = 0;   // SIGKILL at the first write to a path with this suffix
static const char* control_file = 0;  // the disk is full while this file exists
static atomic_long calls;

__attribute__((constructor)) static void shim_init(void) {
    const char* at = getenv("BARREL_FAULT_FAIL_AT");
    if (at && *at) fail_at = strtol(at, 0, 10);
    count_file = getenv("BARREL_FAULT_COUNT");
    kill_suffix = getenv("BARREL_FAULT_KILL_ON");
    if (kill_suffix && !*kill_suffix) kill_suffix = 0;
    control_file = getenv("BARREL_FAULT_CONTROL");
    if (control_file && !*control_file) control_file = 0;
}

// Whether the suite has made the disk full now (its control file exists).
static int switched_full(void) { return control_file && access(control_file, F_OK) == 0; }

__attribute__((destructor)) static void shim_report(void) {
    if (!count_file || !*count_file) return;
    FILE* f = fopen(count_file, "w");
    if (!f) return;
    fprintf(f, "%ld\n", atomic_load(&calls));
    fclose(f);
}

static void* real(const char* name) {
    void* p = dlsym(RTLD_NEXT, name);
    if (!p) abort();
    return p;
}

static int is_regular(int fd) {
    struct stat st;
    return fd > 2 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

// The path fd is open on, or "" if unknown.
static const char* path_of(int fd, char* path, size_t size) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, path, size - 1);
    path[n > 0 ? n : 0] = 0;
    return path;
}

static int ends_with(const char* s, const char* suffix) {
    const size_t n = strlen(s), len = strlen(suffix);
    return n >= len && strcmp(s + n - len, suffix) == 0;
}

static int is_info_log(const char* path) {
    const char* slash = strrchr(path, '/');
    const char* name = slash ? slash + 1 : path;
    return strcmp(name, "LOG") == 0 || strncmp(name, "LOG.old", 7) == 0;
}

// Whether the budget is already spent (for fsync and the info log: not counted).
static int exhausted(int fd) {
    if (!is_regular(fd)) return 0;
    return (fail_at > 0 && atomic_load(&calls) >= fail_at) || switched_full();
}

// Counts one write call on fd; 1 when it is to fail with ENOSPC.
static int spent(int fd) {
    if (!is_regular(fd)) return 0;
    char path[4096];
    path_of(fd, path, sizeof path);
    if (kill_suffix && ends_with(path, kill_suffix)) raise(SIGKILL);
    if (is_info_log(path)) return exhausted(fd);
    const long n = atomic_fetch_add(&calls, 1) + 1;
    return (fail_at > 0 && n >= fail_at) || switched_full();
}

// Fails the call with ENOSPC when `cond`, else returns `expr` (the real call).
#define ENOSPC_IF(cond, expr) \
    do {                      \
        if (cond) {           \
            errno = ENOSPC;   \
            return -1;        \
        }                     \
        return expr;          \
    } while (0)
#define ENOSPC_OR(expr) ENOSPC_IF(spent(fd), expr)

ssize_t write(int fd, const void* buf, size_t n) {
    static ssize_t (*f)(int, const void*, size_t);
    if (!f) f = real("write");
    ENOSPC_OR(f(fd, buf, n));
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
    static ssize_t (*f)(int, const void*, size_t, off_t);
    if (!f) f = real("pwrite");
    ENOSPC_OR(f(fd, buf, n, off));
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
    static ssize_t (*f)(int, const void*, size_t, off64_t);
    if (!f) f = real("pwrite64");
    ENOSPC_OR(f(fd, buf, n, off));
}

ssize_t writev(int fd, const struct iovec* iov, int cnt) {
    static ssize_t (*f)(int, const struct iovec*, int);
    if (!f) f = real("writev");
    ENOSPC_OR(f(fd, iov, cnt));
}

ssize_t pwritev(int fd, const struct iovec* iov, int cnt, off_t off) {
    static ssize_t (*f)(int, const struct iovec*, int, off_t);
    if (!f) f = real("pwritev");
    ENOSPC_OR(f(fd, iov, cnt, off));
}

ssize_t pwritev2(int fd, const struct iovec* iov, int cnt, off_t off, int flags) {
    static ssize_t (*f)(int, const struct iovec*, int, off_t, int);
    if (!f) f = real("pwritev2");
    ENOSPC_OR(f(fd, iov, cnt, off, flags));
}

int fallocate(int fd, int mode, off_t off, off_t len) {
    static int (*f)(int, int, off_t, off_t);
    if (!f) f = real("fallocate");
    ENOSPC_OR(f(fd, mode, off, len));
}

int fallocate64(int fd, int mode, off64_t off, off64_t len) {
    static int (*f)(int, int, off64_t, off64_t);
    if (!f) f = real("fallocate64");
    ENOSPC_OR(f(fd, mode, off, len));
}

// posix_fallocate returns the error instead of setting errno.
int posix_fallocate(int fd, off_t off, off_t len) {
    static int (*f)(int, off_t, off_t);
    if (!f) f = real("posix_fallocate");
    return spent(fd) ? ENOSPC : f(fd, off, len);
}

int posix_fallocate64(int fd, off64_t off, off64_t len) {
    static int (*f)(int, off64_t, off64_t);
    if (!f) f = real("posix_fallocate64");
    return spent(fd) ? ENOSPC : f(fd, off, len);
}

static int grows(int fd, off64_t len) {
    struct stat st;
    return fstat(fd, &st) == 0 && len > st.st_size;
}

int ftruncate(int fd, off_t len) {
    static int (*f)(int, off_t);
    if (!f) f = real("ftruncate");
    ENOSPC_IF(grows(fd, len) && spent(fd), f(fd, len));
}

int ftruncate64(int fd, off64_t len) {
    static int (*f)(int, off64_t);
    if (!f) f = real("ftruncate64");
    ENOSPC_IF(grows(fd, len) && spent(fd), f(fd, len));
}

// glibc's stdio writes through its internal __write, which no preload reaches: a stream write
// is counted (and failed) where it enters, at fwrite.
size_t fwrite(const void* buf, size_t size, size_t n, FILE* stream) {
    static size_t (*f)(const void*, size_t, size_t, FILE*);
    if (!f) f = real("fwrite");
    const int fd = fileno(stream);
    if (fd >= 0 && spent(fd)) {
        errno = ENOSPC;
        return 0;
    }
    return f(buf, size, n, stream);
}

int fsync(int fd) {
    static int (*f)(int);
    if (!f) f = real("fsync");
    ENOSPC_IF(exhausted(fd), f(fd));
}

int fdatasync(int fd) {
    static int (*f)(int);
    if (!f) f = real("fdatasync");
    ENOSPC_IF(exhausted(fd), f(fd));
}

// With no flags it writes nothing: RocksDB calls it so to probe whether the file system has it,
// and takes any error but ENOSYS for a bug (an assertion), which a full disk never causes.
int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags) {
    static int (*f)(int, off64_t, off64_t, unsigned int);
    if (!f) f = real("sync_file_range");
    if (flags == 0) return f(fd, off, n, flags);
    ENOSPC_IF(exhausted(fd), f(fd, off, n, flags));
}
