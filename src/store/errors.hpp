#pragma once
/// @file
/// RocksDB statuses become StoreErrors here, at the boundary (docs/architecture.md, "Errors"):
/// no rocksdb::Status leaves the store. Internal to the store.

#include <barrel/store/store.hpp>

#include <rocksdb/status.h>

#include <string>
#include <string_view>

namespace barrel::store {

/// The StoreErrorCode of a failed RocksDB status (docs/library.md, "Store errors"): Corruption
/// is corruption, IOError (no space, a missing path, a failed read or write) is io,
/// InvalidArgument and NotSupported are what the caller asked for, a memory limit is
/// out_of_memory, and the other statuses, which barrel never provokes (Busy, TimedOut, Aborted,
/// TryAgain, …), are internal. A NotFound status reaches this only when RocksDB misses a file its
/// datadir lists (a point read's NotFound is "absent", handled before): that datadir is damaged.
StoreErrorCode code_of(const rocksdb::Status& status) noexcept;

inline Unexpected<StoreError> fail(StoreErrorCode code, std::string message) {
    return unexpected(StoreError{code, std::move(message)});
}

/// A failed status as a StoreError whose message starts with `what`.
inline Unexpected<StoreError> from_status(const rocksdb::Status& status, std::string_view what) {
    return fail(code_of(status), std::string{what} + ": " + status.ToString());
}

}  // namespace barrel::store
