#pragma once
/// @file
/// Hooks into the io module for tests (this header is not installed): what cannot be seen from
/// outside a process, such as whether a rename's directory was synced.

#include <cstddef>

namespace barrel::io::testing {

/// Directories fsynced so far by this process (sync_directory, and every commit of a
/// FileReplacement, rename_durably included).
size_t directory_syncs() noexcept;

namespace detail {
void count_directory_sync() noexcept;
}  // namespace detail

}  // namespace barrel::io::testing
