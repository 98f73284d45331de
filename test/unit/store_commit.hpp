#pragma once
// Test-only: commits the blocks of a generated workload straight through the store (decode with
// the generator's senders, execute on the store's state, commit), and lists a directory, for the
// store_*_test.cpp files that build or damage datadirs block by block.

#include <barrel/exec/execute.hpp>
#include <barrel/gen/workload.hpp>
#include <barrel/store/store.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace barrel::test {

/// Commits block `k` (0-based) of `w` on `s`, whose head must be its parent; the commit's result.
inline Expected<store::CommitStats, store::StoreError> commit_block(store::Store& s,
                                                                    const gen::Workload& w,
                                                                    size_t k) {
    auto b = block::decode_block(w.blocks[k]);
    if (!b) {
        ADD_FAILURE() << "block " << k + 1 << " does not decode";
        return unexpected(store::StoreError{store::StoreErrorCode::internal, "decode"});
    }
    b->senders = w.senders[k];
    const auto outcome = exec::execute(*b, s, s.lattice(), w.genesis.config);
    if (!outcome) {
        ADD_FAILURE() << exec::describe(outcome.error());
        return unexpected(store::StoreError{store::StoreErrorCode::internal, "execute"});
    }
    return s.commit(*b, *outcome);
}

/// Commits the blocks of `w` after the head up to block `up_to`; the first failed commit's error.
inline std::optional<store::StoreError> commit_blocks(store::Store& s, const gen::Workload& w,
                                                      size_t up_to) {
    for (size_t k = s.head().number; k < up_to && k < w.blocks.size(); ++k)
        if (auto c = commit_block(s, w, k); !c) return c.error();
    return std::nullopt;
}

/// The names in `dir`, sorted.
inline std::vector<std::string> directory_entries(const std::filesystem::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator{dir})
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace barrel::test
