#pragma once
// Test-only: holds the streamed import's commits behind its execution through the hooks of
// src/pipeline/testing.hpp, so that blocks provably execute over uncommitted ones whatever the
// machine's timing. Run the import in an arena of at least two threads: a held commit blocks
// its own.

#include "pipeline/testing.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace barrel::test {

/// Holds the commit of the block at each position until the block `depth` positions later has
/// left the execute filter, or the stream has no such block, or a block failed there (nothing
/// later leaves it then). A depth of max_in_flight - 1 is the most the tokens allow.
class CommitHold {
public:
    CommitHold(size_t depth, size_t blocks) : m_depth{depth}, m_blocks{blocks} {
        m_hooks.executed = [this](size_t index, pipeline::testing::Executed what) {
            std::lock_guard lock{m_mutex};
            m_done = std::max(m_done, index + 1);
            m_failed = m_failed || what == pipeline::testing::Executed::failed;
            m_changed.notify_all();
        };
        m_hooks.before_commit = [this](size_t index) {
            const size_t wanted = std::min(index + m_depth, m_blocks - 1);
            std::unique_lock lock{m_mutex};
            // Not a timing assumption: the wait ends as soon as the block leaves execute. The
            // limit only turns a pipeline that never gets there (a bug) into a failure, not a
            // hang.
            if (!m_changed.wait_for(lock, std::chrono::seconds{60},
                                    [&] { return m_done > wanted || m_failed; }))
                ADD_FAILURE() << "block at position " << wanted
                              << " never left execute before the commit of " << index;
        };
    }
    const pipeline::testing::StreamHooks& hooks() const noexcept { return m_hooks; }
    /// Blocks that left the execute filter (executed, skipped or failed) so far.
    size_t executed() {
        std::lock_guard lock{m_mutex};
        return m_done;
    }

private:
    const size_t m_depth;
    const size_t m_blocks;
    pipeline::testing::StreamHooks m_hooks;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    size_t m_done{0};  // positions 0 .. m_done - 1 have left the execute filter
    bool m_failed{false};
};

}  // namespace barrel::test
