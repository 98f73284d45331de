#pragma once
/// @file
/// Crash points for the crash-safety tests (test/unit/store_crash_test.cpp): with
/// BARREL_TEST_CRASH_AT set, the process SIGKILLs itself at one chosen point of the commit, so a
/// test asserts where each kill landed instead of hoping a timed kill lands somewhere useful.
/// Unset (always, outside those tests), nothing is installed: the store reads the variable once
/// per process, and a commit tests one bool. Internal to the store.
///
///   BARREL_TEST_CRASH_AT=built:N     block N's WriteBatch is built, not yet written
///   BARREL_TEST_CRASH_AT=written:N   block N's WriteBatch is written (DB::Write returned), the
///                                    COMMITTED record not yet updated
///   BARREL_TEST_CRASH_AT=marked:N    COMMITTED names block N, the caches have not moved on
///   BARREL_TEST_CRASH_AT=wal:K       the K-th write of this process to a write-ahead log file has
///                                    reached the operating system (below any code of barrel's,
///                                    so a commit split into two writes shows as two)
///
/// A value that does not parse aborts the process with a message (a test that meant to crash
/// somewhere must not pass because nothing happened).

#include <rocksdb/listener.h>

#include <cstdint>
#include <memory>

namespace barrel::store {

enum class CrashPoint { built, written, marked, wal };

/// Whether BARREL_TEST_CRASH_AT names a commit point (built, written, marked) in this process.
bool commit_crash_points_armed();

/// SIGKILLs the process if BARREL_TEST_CRASH_AT names `point` of block `number`.
void crash_at(CrashPoint point, uint64_t number);

/// The listener that SIGKILLs the process at the chosen write-ahead-log write, or nullptr when
/// BARREL_TEST_CRASH_AT does not name one.
std::shared_ptr<rocksdb::EventListener> wal_crash_listener();

}  // namespace barrel::store
