#include <barrel/block/block.hpp>
#include <barrel/seal/sealer.hpp>

#include <algorithm>
#include <optional>
#include <utility>

namespace barrel::seal {

Bytes block_template(const pool::Selection& selection, const Config& config, uint64_t gas_limit,
                     uint64_t chain_id, uint64_t timestamp) {
    block::Header h;
    h.timestamp = timestamp;
    h.coinbase = config.coinbase;
    h.gas_limit = gas_limit;
    h.chain_id = chain_id;
    std::vector<BytesView> encodings;
    encodings.reserve(selection.txs.size());
    for (const pool::TxPtr& t : selection.txs) encodings.emplace_back(t->encoding);
    return block::encode_block(h, encodings);
}

Sealer::Sealer(pipeline::Pipeline& pipeline, pool::Pool& pool, const store::Store& store,
               const Config& config, OnSealed on_sealed, OnError on_error, Clock clock,
               OnDropped on_dropped)
    : m_pipeline{pipeline},
      m_pool{pool},
      m_store{store},
      m_config{config},
      m_on_sealed{std::move(on_sealed)},
      m_on_error{std::move(on_error)},
      m_clock{std::move(clock)},
      m_on_dropped{std::move(on_dropped)},
      m_last_seal{m_clock.now()} {}

void Sealer::notify() {
    {
        std::lock_guard lock{m_mutex};
        m_notified = true;
    }
    m_wake.notify_one();
}

void Sealer::stop() {
    {
        std::lock_guard lock{m_mutex};
        m_stopping = true;
    }
    m_wake.notify_one();
}

std::optional<Bytes> Sealer::next_template(bool ignore_block_time, bool only_full) {
    {
        std::lock_guard lock{m_mutex};
        if (m_stopping) return std::nullopt;
    }
    const size_t ready = m_pool.ready();
    if (ready == 0) return std::nullopt;
    const bool full = ready >= m_config.max_block_txs;
    if (only_full && !full) return std::nullopt;
    const bool due = m_clock.now() - m_last_seal >= m_config.block_time;
    if (!full && !due && !ignore_block_time) return std::nullopt;
    const uint64_t gas_limit = m_store.genesis().gas_limit;
    pool::Selection selection = m_pool.take(m_config.max_block_txs, gas_limit);
    if (selection.txs.empty()) return std::nullopt;
    m_last_seal = m_clock.now();
    // Timestamps never go back, whatever the system clock does.
    m_last_timestamp = std::max(m_last_timestamp, m_clock.unix_seconds());
    std::vector<Hash> hashes;
    hashes.reserve(selection.txs.size());
    for (const pool::TxPtr& t : selection.txs) hashes.push_back(t->hash);
    {
        // The commit filter pops from another thread while this one reads ahead.
        std::lock_guard lock{m_mutex};
        m_in_flight.push_back(std::move(hashes));
    }
    return block_template(selection, m_config, gas_limit, m_store.genesis().config.chain_id,
                          m_last_timestamp);
}

size_t Sealer::seal_ready(bool ignore_block_time) {
    size_t sealed = 0;
    // Each failure a transaction is to blame for drops it from the pool, so this ends: at the
    // latest when the pool has nothing ready. Bounded all the same (a block's worth of drops),
    // so that a pool that failed to drop one cannot hold the caller here; run() comes back.
    for (size_t round = 0; round <= m_config.max_block_txs; ++round) {
        const auto failure = seal_round(round == 0 ? ignore_block_time : true, sealed);
        if (!failure) return sealed;
        if (!drop_blamed(*failure)) {
            // The store's failure (a full disk), not a transaction's: run() waits before the
            // next attempt, which the store resumes from if it can.
            m_retry_after = m_clock.now() + m_config.retry_interval;
            if (m_on_error) m_on_error(*failure);
            return sealed;
        }
        // The block the transaction stopped was due (its template had been taken): sealed now,
        // without it, rather than one block time later.
    }
    return sealed;
}

std::optional<pipeline::PipelineError> Sealer::seal_round(bool ignore_block_time, size_t& sealed) {
    bool first = true;
    // The first template of a round may be due by time alone; the later ones of the same
    // stream only when a full block is ready, so that blocks follow each other without a wait
    // under load and one block-time apart otherwise. With block time 0 every template would be
    // "due": the stream reads its next template as soon as the previous one is handed out, so
    // each transaction arriving meanwhile would become a block of its own. Those arrivals wait
    // for the round to end instead and go into the next block together.
    auto source = [&]() -> std::optional<Bytes> {
        const bool any = first && ignore_block_time;
        const bool only_full = !first && m_config.block_time.count() == 0;
        first = false;
        return next_template(any, only_full);
    };
    auto progress = [&](const pipeline::BlockResult& r) {
        Sealed s;
        s.result = r;
        {
            std::lock_guard lock{m_mutex};
            s.transactions = std::move(m_in_flight.front());
            m_in_flight.pop_front();
        }
        m_pool.committed(r.number, s.transactions, {});
        s.pool = m_pool.status();
        ++sealed;
        if (m_on_sealed) m_on_sealed(s);
    };
    auto result = m_pipeline.seal_stream(source, progress);
    if (result) return std::nullopt;
    return std::move(result).error();
}

bool Sealer::drop_blamed(const pipeline::PipelineError& e) {
    // What was taken for the failed block and after it can be taken again. The failed block is
    // the oldest one in flight: the blocks before it were committed (and left the queue).
    std::optional<Dropped> dropped;
    {
        std::lock_guard lock{m_mutex};
        const auto blamed = pipeline::blamed_transaction(e);
        if (blamed && !m_in_flight.empty() && blamed->tx_index < m_in_flight.front().size()) {
            dropped = Dropped{m_in_flight.front()[blamed->tx_index], blamed->reason, e};
            // A transaction the block failed on leaves the pool, so the next block does not
            // fail the same way; its sender's later ones wait behind the gap it leaves.
            m_pool.drop(dropped->transaction);
        }
        m_in_flight.clear();
        m_pool.abandon_taken();
    }
    if (!dropped) return false;
    if (m_on_dropped) m_on_dropped(*dropped);
    return true;
}

void Sealer::run() {
    while (true) {
        {
            std::unique_lock lock{m_mutex};
            // After the store's failure, no attempt before the retry interval has passed, however
            // many transactions arrive (each would fail the same way until the store resumes).
            if (m_clock.now() < m_retry_after)
                m_wake.wait_until(lock, m_retry_after, [&] { return m_stopping; });
            if (m_stopping) return;
            if (immediate()) {
                // Nothing to wait for but transactions: sleep until one is admitted.
                m_wake.wait(lock, [&] { return m_stopping || m_notified; });
            } else {
                // Wake when the next block is due, on admission (a full block may be ready), or
                // to stop.
                auto due = m_last_seal + m_config.block_time;
                if (due <= m_clock.now()) due = m_clock.now() + m_config.block_time;
                m_wake.wait_until(lock, due, [&] { return m_stopping || m_notified; });
            }
            m_notified = false;
            if (m_stopping) return;
        }
        const size_t sealed = seal_ready(false);
        // With block time 0, what is left (more than a block's worth, or what arrived while the
        // round ran) is sealed at once, and a failed commit retried after its interval, with no
        // admission to wake for.
        if (immediate() && (sealed > 0 || m_clock.now() < m_retry_after)) {
            std::lock_guard lock{m_mutex};
            m_notified = true;
        }
    }
}

}  // namespace barrel::seal
