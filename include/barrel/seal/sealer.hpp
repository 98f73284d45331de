#pragma once
/// @file
/// Block production from a transaction pool. By default (`block_time` 0) a block as soon as
/// transactions are pending and the previous block is through the stages, so the sealer never
/// idles while work waits (go-ethereum's `--dev` period 0, anvil's automine); with a block time,
/// a block at most every `block_time`, or at once when a full block's worth is pending. No empty
/// blocks either way. Each block is the pool's
/// selection (pool::Pool::take: by sender nonce, senders by effective tip then arrival) sealed
/// through the four stages (pipeline::Pipeline::seal_stream), and while one block commits the
/// next is decoded, verified and executed. A consensus leader links this as it is; the node's
/// `run` command drives it from its own thread.

#include <barrel/core/bytes.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/pool/pool.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace barrel::seal {

struct Config {
    /// 0: seal whenever transactions are pending and the previous block has been committed (a
    /// full block's worth is sealed while the previous one is still in the stages, as a streamed
    /// import overlaps blocks). Otherwise at most this often, or at once when a block is full.
    std::chrono::milliseconds block_time{0};
    size_t max_block_txs{2500};
    Address coinbase{};
    /// After a failure that is no transaction's (the store could not commit: a full disk), how
    /// long run() waits before it tries again, whatever the block time (with block time 0 it
    /// would otherwise retry without pause).
    std::chrono::milliseconds retry_interval{1000};
};

/// A transaction that failed while its block was built (an invalidity the pool could not
/// foresee: the state changed under it, a nonce, the base fee, a cost the pool summed wrong):
/// it left the pool, and the block was sealed again at once without it.
struct Dropped {
    Hash transaction;
    /// The failure's code name (pipeline::Blame::reason): a metric label.
    std::string reason;
    pipeline::PipelineError error;  ///< the failed block's error, naming the transaction's index
};

/// What a sealed and committed block reports, in order.
struct Sealed {
    pipeline::BlockResult result;
    pool::Status pool;               ///< after its transactions left the pool
    std::vector<Hash> transactions;  ///< in block order
};

/// The template of the next block: the selection's transactions under a header that carries
/// their context (timestamp, coinbase, gas limit, chain id). Parent, number, gas used and roots
/// are left for the execute stage to fill in.
Bytes block_template(const pool::Selection& selection, const Config& config, uint64_t gas_limit,
                     uint64_t chain_id, uint64_t timestamp);

/// The clock blocks are timed and stamped by (a test seam; steady for intervals, system seconds
/// for timestamps).
struct Clock {
    std::function<std::chrono::steady_clock::time_point()> now = [] {
        return std::chrono::steady_clock::now();
    };
    std::function<uint64_t()> unix_seconds = [] {
        return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count());
    };
};

class Sealer {
public:
    using OnSealed = std::function<void(const Sealed&)>;
    /// A failed block that no transaction is to blame for (the store's): nothing was dropped,
    /// and run() tries again after Config::retry_interval.
    using OnError = std::function<void(const pipeline::PipelineError&)>;
    using OnDropped = std::function<void(const Dropped&)>;
    Sealer(pipeline::Pipeline& pipeline, pool::Pool& pool, const store::Store& store,
           const Config& config, OnSealed on_sealed, OnError on_error = {}, Clock clock = {},
           OnDropped on_dropped = {});

    /// Runs until stop(): waits for transactions, seals blocks, reports each. Call from one
    /// thread.
    void run();

    /// Transactions were admitted: a full block may be ready before the block time.
    void notify();

    /// Makes run() return once the block being sealed (and those already taken) are committed.
    void stop();

    /// Seals what is ready now, if anything, without waiting (tests; run() does this in a loop).
    /// A block that fails for one of its transactions is sealed again at once without it (the
    /// sealer never stalls on a transaction). Returns the number of blocks committed.
    size_t seal_ready(bool ignore_block_time);

private:
    /// One seal_stream over the templates ready now; its error, if a block failed (the blocks
    /// before it are committed and counted in `sealed`).
    std::optional<pipeline::PipelineError> seal_round(bool ignore_block_time, size_t& sealed);
    /// After a failed round: drops the transaction the failure names, if any, and reports it;
    /// whether one was dropped. Makes what was taken available again either way.
    bool drop_blamed(const pipeline::PipelineError& e);

    /// The next template, or nothing: no full block and the block time has not passed (or no
    /// transaction at all; or `only_full` and no full block), or stop() was called.
    std::optional<Bytes> next_template(bool ignore_block_time, bool only_full);
    /// Block time 0: a block whenever transactions are pending.
    bool immediate() const noexcept { return m_config.block_time.count() == 0; }

    pipeline::Pipeline& m_pipeline;
    pool::Pool& m_pool;
    const store::Store& m_store;
    Config m_config;
    OnSealed m_on_sealed;
    OnError m_on_error;
    Clock m_clock;
    OnDropped m_on_dropped;

    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping{false};
    /// Set by notify(); starts set so that the first pass of run() seals what is already pooled
    /// (a journal re-admitted before the sealer started) without waiting for an admission.
    bool m_notified{true};
    std::chrono::steady_clock::time_point m_last_seal;
    /// run() makes no attempt before this: set after a failure no transaction is to blame for.
    std::chrono::steady_clock::time_point m_retry_after{};
    uint64_t m_last_timestamp{0};
    std::deque<std::vector<Hash>> m_in_flight;  ///< transactions of the templates handed out
};

}  // namespace barrel::seal
