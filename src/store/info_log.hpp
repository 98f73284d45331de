#pragma once
/// @file
/// The info LOG a writer keeps in its datadir, written with plain write(2). RocksDB's own logger
/// (EnvLogger) writes through a WritableFileWriter, which after one failed append (a full disk)
/// asserts on the next line it is given: the Debian build keeps assertions, so the process
/// aborted (SIGABRT) on the log line that reported the failed write, before the error could
/// reach barrel. A line this logger cannot write is dropped; the failure that filled the disk
/// reaches the caller as a status anyway. Internal to the store.

#include <rocksdb/env.h>

#include <filesystem>
#include <memory>

namespace barrel::store {

/// `dir/LOG`, the previous one kept as `dir/LOG.old`; a logger that drops every line if it
/// cannot be created (which loses nothing barrel needs).
std::shared_ptr<rocksdb::Logger> open_info_log(const std::filesystem::path& dir);

/// A logger that drops every line: read-only opens write nothing into a datadir.
std::shared_ptr<rocksdb::Logger> null_info_log();

}  // namespace barrel::store
