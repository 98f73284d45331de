#include <barrel/block/block.hpp>
#include <barrel/seal/sealer.hpp>

#include <algorithm>

namespace barrel::seal {

namespace {

/// Whether an execution error is the fault of the transaction it names (else of the state).
bool blames_transaction(exec::ExecErrorCode code) noexcept {
    switch (code) {
        case exec::ExecErrorCode::nonce_mismatch:
        case exec::ExecErrorCode::insufficient_balance:
        case exec::ExecErrorCode::fee_cap_below_base_fee:
        case exec::ExecErrorCode::block_gas_exceeded:
        case exec::ExecErrorCode::balance_overflow: return true;
        case exec::ExecErrorCode::missing_header:
        case exec::ExecErrorCode::missing_senders:
        case exec::ExecErrorCode::state_unreadable:
        case exec::ExecErrorCode::state_corrupt: return false;
    }
    return false;
}

}  // namespace

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
               const Config& config, OnSealed on_sealed, OnError on_error, Clock clock)
    : m_pipeline{pipeline},
      m_pool{pool},
      m_store{store},
      m_config{config},
      m_on_sealed{std::move(on_sealed)},
      m_on_error{std::move(on_error)},
      m_clock{std::move(clock)},
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

std::optional<Bytes> Sealer::next_template(bool ignore_block_time) {
    {
        std::lock_guard lock{m_mutex};
        if (m_stopping) return std::nullopt;
    }
    const size_t ready = m_pool.ready();
    if (ready == 0) return std::nullopt;
    const bool full = ready >= m_config.max_block_txs;
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
    bool first = true;
    // The first template of a round may be due by time alone; the later ones of the same
    // stream only when a full block is ready, so that blocks follow each other without a wait
    // under load and one block-time apart otherwise.
    auto source = [&]() -> std::optional<Bytes> {
        const bool any = first && ignore_block_time;
        first = false;
        return next_template(any);
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
    const auto result = m_pipeline.seal_stream(source, progress);
    if (!result) {
        // What was taken for the failed block and after it can be taken again. A transaction
        // the block failed on leaves the pool, so the next block does not fail the same way.
        const pipeline::PipelineError& e = result.error();
        std::lock_guard lock{m_mutex};
        if (const auto* exec_error = std::get_if<exec::ExecError>(&e.error);
            exec_error && blames_transaction(exec_error->code) && !m_in_flight.empty() &&
            exec_error->tx_index < m_in_flight.front().size())
            m_pool.drop(m_in_flight.front()[exec_error->tx_index]);
        m_in_flight.clear();
        m_pool.abandon_taken();
        if (m_on_error) m_on_error(e);
    }
    return sealed;
}

void Sealer::run() {
    while (true) {
        {
            std::unique_lock lock{m_mutex};
            // Wake when the next block is due, on admission (a full block may be ready), or to
            // stop.
            auto due = m_last_seal + m_config.block_time;
            if (due <= m_clock.now()) due = m_clock.now() + m_config.block_time;
            m_wake.wait_until(lock, due, [&] { return m_stopping || m_notified; });
            m_notified = false;
            if (m_stopping) return;
        }
        seal_ready(false);
    }
}

}  // namespace barrel::seal
