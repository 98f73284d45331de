#pragma once
/// @file
/// A full disk's recovery left to the store (commit.cpp, resume_after_failure) on every file
/// system. RocksDB's own recovery from a write that found no room waits, on its SstFileManager's
/// thread, until the disk has as much free space as the largest write buffer (16 MiB here) and
/// holds the database "in recovery" meanwhile, so that every DB::Resume answers Busy: a disk
/// that frees less than that (a 20 MiB tmpfs, a volume that had a few MiB cleaned up) left a
/// running node refusing every block until it restarted. Without it, the store's next commit
/// resumes the database itself as soon as a flush fits. Internal to the store.

#include <rocksdb/env.h>
#include <rocksdb/listener.h>
#include <rocksdb/status.h>

#include <memory>

namespace barrel::store {

/// Whether RocksDB's automatic recovery from the background error `bg_error` is turned off, for
/// the store's DB::Resume to do: a full disk's, when it stops writes (a soft error, a
/// compaction's, leaves writes on, so the store never sees it and RocksDB's recovery stays).
bool store_resumes(const rocksdb::Status& bg_error) noexcept;

/// The listener that turns RocksDB's recovery off where store_resumes says so, writing a line
/// saying why to `info_log` (the datadir's LOG, info_log.hpp).
std::shared_ptr<rocksdb::EventListener> resume_listener(std::shared_ptr<rocksdb::Logger> info_log);

}  // namespace barrel::store
