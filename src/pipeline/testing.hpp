#pragma once
/// @file
/// Seams in the streamed import for tests, never installed: a test forces an interleaving of the
/// pipeline's filters through these instead of hoping that the thread timing gives it.

#include <barrel/pipeline/pipeline.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace barrel::pipeline::testing {

/// What the execute filter did with a block.
enum class Executed : uint8_t {
    executed,  ///< linked, executed and sealed: it will be committed
    skipped,   ///< already in the chain (stored, or executed earlier in the stream)
    failed,    ///< failed here or at an earlier stage: the stream ends with its error
};

/// Each hook runs on its filter's thread and may block to hold that filter back. Whatever it
/// waits for then needs another thread: run the import in an arena of at least two.
struct StreamHooks {
    /// After the execute filter is done with the block at `index` (0-based position in the
    /// stream). Called for every block up to and including the first that failed, in order, and
    /// for none after it.
    std::function<void(size_t index, Executed what)> executed;
    /// Before the commit filter commits the block at `index`; not called for a skipped block or
    /// an error.
    std::function<void(size_t index)> before_commit;
};

struct Access {
    /// Installs `hooks` for the later import_stream calls of `pipeline` (nullptr removes them);
    /// the caller keeps them alive meanwhile.
    static void set_stream_hooks(Pipeline& pipeline, const StreamHooks* hooks) noexcept {
        pipeline.m_stream_hooks = hooks;
    }
};

}  // namespace barrel::pipeline::testing
