#include <barrel/core/hex.hpp>
#include <barrel/pipeline/pipeline.hpp>

#include <tbb/parallel_pipeline.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace barrel::pipeline {

std::string_view to_string(Stage s) noexcept {
    switch (s) {
        case Stage::decode: return "decode";
        case Stage::link: return "link";
        case Stage::verify: return "verify";
        case Stage::execute: return "execute";
        case Stage::seal: return "seal";
        case Stage::commit: return "commit";
    }
    return "unknown";
}

std::string describe(const PipelineError& e) {
    std::string out = e.block_number ? "block " + std::to_string(*e.block_number)
                                     : "block at position " + std::to_string(e.block_index);
    out += ": ";
    out += to_string(e.stage);
    out += ": ";
    out += e.message;
    return out;
}

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// The number in the header at the front of a block that may not decode (a bad transaction
/// slot, a truncated tail), so that its error can still name the block. Only the outer list
/// prefix is skipped, without checking its length against the input, and only the header list
/// has to be intact.
std::optional<uint64_t> peek_number(BytesView wire) noexcept {
    if (wire.empty() || wire[0] < 0xc0) return std::nullopt;
    const size_t prefix = wire[0] <= 0xf7 ? 1 : 1 + static_cast<size_t>(wire[0] - 0xf7);
    if (wire.size() < prefix) return std::nullopt;
    BytesView rest = wire.subspan(prefix);
    const auto header = block::decode_header(rest);
    if (!header) return std::nullopt;
    return header->number;
}
}  // namespace

struct Pipeline::Decoded {
    block::Block block;
    size_t index{0};
    bool already_stored{false};
    StageTimes times;
    size_t executed_over{0};
    std::shared_ptr<const exec::Outcome> outcome;  ///< set by execute, read by commit
};

namespace {
/// The state a streamed block executes against while the blocks before it may still be
/// committing: their write sets, newest first, over the store. Each write set is sorted by key,
/// so a lookup is a binary search per pending block.
class PendingState final : public state::StateReader {
public:
    PendingState(const state::StateReader& store, std::vector<std::shared_ptr<const exec::Outcome>> pending)
        : m_store{store}, m_pending{std::move(pending)} {}

    state::ReadResult<state::Account> account(const Address& address) const override {
        for (auto it = m_pending.rbegin(); it != m_pending.rend(); ++it)
            if (const auto* v = find((*it)->writes.accounts, address)) return std::optional<state::Account>{*v};
        return m_store.account(address);
    }
    state::ReadResult<u256> user(std::string_view name) const override {
        for (auto it = m_pending.rbegin(); it != m_pending.rend(); ++it)
            if (const auto* v = find((*it)->writes.users, name)) return std::optional<u256>{*v};
        return m_store.user(name);
    }

private:
    template <class Entries, class Key>
    static const typename Entries::value_type::second_type* find(const Entries& entries, const Key& key) {
        const auto it = std::lower_bound(entries.begin(), entries.end(), key,
                                         [](const auto& e, const Key& k) { return e.first < k; });
        return it != entries.end() && it->first == key ? &it->second : nullptr;
    }

    const state::StateReader& m_store;
    std::vector<std::shared_ptr<const exec::Outcome>> m_pending;  ///< oldest first
};
}  // namespace

Pipeline::Pipeline(store::Store& store, const Config& config) : m_store{store}, m_config{config} {}

Expected<Pipeline::Decoded, PipelineError> Pipeline::decode_and_verify(Bytes wire, size_t index) {
    Decoded d;
    d.index = index;
    auto t0 = Clock::now();
    const std::optional<uint64_t> peeked = peek_number(wire);
    auto decoded = block::decode_block(std::move(wire), m_config.parallel);
    d.times.decode_ms = ms_since(t0);
    if (!decoded) return unexpected(PipelineError{Stage::decode, peeked, index, block::describe(decoded.error())});
    d.block = std::move(decoded).value();
    const uint64_t number = d.block.header->number;

    // A block the store already has needs no verification; the link stage confirms the skip.
    auto stored = m_store.block_number(d.block.hash);
    if (!stored) return unexpected(PipelineError{Stage::link, number, index, stored.error().message});
    if (*stored && **stored == number) {
        d.already_stored = true;
        return d;
    }

    t0 = Clock::now();
    auto verified = block::recover_senders(d.block, m_store.genesis().config.chain_id, m_config.sender_cache,
                                           m_config.parallel);
    d.times.verify_ms = ms_since(t0);
    if (!verified) return unexpected(PipelineError{Stage::verify, number, index, block::describe(verified.error())});
    return d;
}

Expected<void, PipelineError> Pipeline::execute(Decoded& d, const store::Head& parent,
                                                const state::StateReader& state) {
    const block::Header& h = *d.block.header;
    auto fail = [&](Stage stage, std::string message) {
        return unexpected(PipelineError{stage, h.number, d.index, std::move(message)});
    };
    if (h.number <= parent.number) return fail(Stage::link, "conflicts with stored block " + std::to_string(h.number));
    if (h.number != parent.number + 1)
        return fail(Stage::link, "expected block " + std::to_string(parent.number + 1) + " (blocks missing)");
    if (h.parent_hash != parent.hash)
        return fail(Stage::link, "parent hash " + to_hex(h.parent_hash) + " is not the head " + to_hex(parent.hash));

    const auto t0 = Clock::now();
    exec::ExecOptions options;
    options.schedule = m_config.parallel ? m_config.schedule : exec::Schedule::serial;
    auto outcome = exec::execute(d.block, state, parent.state_root, m_store.genesis().config, options);
    d.times.execute_ms = ms_since(t0);
    if (!outcome) return fail(Stage::execute, exec::describe(outcome.error()));
    if (auto sealed = exec::check_seal(h, *outcome); !sealed) return fail(Stage::seal, std::string{exec::to_string(sealed.error())});
    d.outcome = std::make_shared<const exec::Outcome>(std::move(outcome).value());
    return {};
}

Expected<BlockResult, PipelineError> Pipeline::commit(Decoded& d) {
    BlockResult r;
    r.number = d.block.header->number;
    r.hash = d.block.hash;
    r.transactions = d.block.size();
    r.skipped = d.already_stored;
    r.times = d.times;
    r.executed_over = d.executed_over;
    if (d.already_stored) return r;
    r.dag = d.outcome->dag;
    const auto t0 = Clock::now();
    auto committed = m_store.commit(d.block, *d.outcome, m_config.parallel);
    r.times.commit_ms = ms_since(t0);
    if (!committed) return unexpected(PipelineError{Stage::commit, r.number, d.index, committed.error().message});
    return r;
}

Expected<BlockResult, PipelineError> Pipeline::execute_and_commit(Decoded& d) {
    if (!d.already_stored)
        if (auto e = execute(d, m_store.head(), m_store); !e) return unexpected(e.error());
    return commit(d);
}

Expected<BlockResult, PipelineError> Pipeline::import_block(Bytes wire) {
    auto d = decode_and_verify(std::move(wire), 0);
    if (!d) return unexpected(d.error());
    return execute_and_commit(*d);
}

Expected<void, PipelineError> Pipeline::import_stream(const BlockSource& next, const Progress& progress) {
    if (!m_config.parallel || m_config.max_in_flight < 2) {
        for (size_t index = 0;; ++index) {
            auto wire = next();
            if (!wire) return {};
            auto d = decode_and_verify(std::move(*wire), index);
            if (!d) return unexpected(d.error());
            auto r = execute_and_commit(*d);
            if (!r) return unexpected(r.error());
            if (progress) progress(*r);
        }
    }

    // Each token is one block; an error travels with its block to the in-order last stage, so the
    // error reported is always that of the earliest failing block.
    //
    // Execute and commit are separate in-order filters, so block N+1 executes while block N
    // commits: it reads the state through the write sets of the blocks executed but not yet
    // committed (PendingState), and links to the last executed block instead of the store's head.
    // A write set leaves `uncommitted` only after its commit returned, by which time the store
    // (and its cache) answer with the same values; a reader that took it before keeps its copy.
    using Item = std::shared_ptr<Expected<Decoded, PipelineError>>;
    std::optional<PipelineError> first_error;
    size_t next_index = 0;
    // Set by the last filters, read by the first: they are serial but run on different threads at
    // the same time, so this must be atomic.
    std::atomic<bool> stop{false};
    store::Head tip = m_store.head();  // the last block executed (the execute filter's alone)
    bool execute_failed = false;       // the execute filter's alone too
    std::mutex uncommitted_mutex;
    std::deque<std::shared_ptr<const exec::Outcome>> uncommitted;  // executed, not yet committed
    tbb::parallel_pipeline(
        m_config.max_in_flight,
        tbb::make_filter<void, Bytes>(tbb::filter_mode::serial_in_order,
                                      [&](tbb::flow_control& fc) -> Bytes {
                                          std::optional<Bytes> wire;
                                          if (!stop.load(std::memory_order_relaxed)) wire = next();
                                          if (!wire) {
                                              fc.stop();
                                              return {};
                                          }
                                          return std::move(*wire);
                                      }) &
            tbb::make_filter<Bytes, Item>(tbb::filter_mode::serial_in_order,
                                          [&](Bytes wire) {
                                              // Numbering only; the work happens in the next filter.
                                              auto item = std::make_shared<Expected<Decoded, PipelineError>>(Decoded{});
                                              (*item)->index = next_index++;
                                              (*item)->block.wire = std::move(wire);
                                              return item;
                                          }) &
            tbb::make_filter<Item, Item>(tbb::filter_mode::parallel,
                                         [&](Item item) {
                                             const size_t index = (*item)->index;
                                             Bytes wire = std::move((*item)->block.wire);
                                             *item = decode_and_verify(std::move(wire), index);
                                             return item;
                                         }) &
            tbb::make_filter<Item, Item>(tbb::filter_mode::serial_in_order,
                                         [&](Item item) {
                                             // After a failure nothing later may execute: its
                                             // parent would be missing.
                                             if (!*item) execute_failed = true;
                                             if (execute_failed || (*item)->already_stored) return item;
                                             std::vector<std::shared_ptr<const exec::Outcome>> pending;
                                             {
                                                 std::lock_guard lock{uncommitted_mutex};
                                                 pending.assign(uncommitted.begin(), uncommitted.end());
                                             }
                                             (*item)->executed_over = pending.size();
                                             const PendingState state{m_store, std::move(pending)};
                                             if (auto e = execute(**item, tip, state); !e) {
                                                 execute_failed = true;
                                                 stop.store(true, std::memory_order_relaxed);
                                                 *item = unexpected(e.error());
                                                 return item;
                                             }
                                             const Decoded& d = **item;
                                             tip = store::Head{d.block.header->number, d.block.hash, d.outcome->state_root};
                                             std::lock_guard lock{uncommitted_mutex};
                                             uncommitted.push_back(d.outcome);
                                             return item;
                                         }) &
            tbb::make_filter<Item, void>(tbb::filter_mode::serial_in_order, [&](Item item) {
                if (first_error) return;
                if (!*item) {
                    first_error = item->error();
                    stop.store(true, std::memory_order_relaxed);
                    return;
                }
                auto r = commit(**item);
                if (!r) {
                    first_error = r.error();
                    stop.store(true, std::memory_order_relaxed);
                    return;
                }
                if (!r->skipped) {
                    std::lock_guard lock{uncommitted_mutex};
                    uncommitted.pop_front();
                }
                if (progress) progress(*r);
            }));
    if (first_error) return unexpected(*first_error);
    return {};
}

Expected<ProposalCheck, PipelineError> Pipeline::check_proposal(Bytes wire) {
    auto d = decode_and_verify(std::move(wire), 0);
    if (!d) return unexpected(d.error());
    const block::Header& h = *d->block.header;
    const store::Head& head = m_store.head();
    auto fail = [&](Stage stage, std::string message) {
        return unexpected(PipelineError{stage, h.number, 0, std::move(message)});
    };
    if (h.number != head.number + 1 || h.parent_hash != head.hash)
        return fail(Stage::link, "not a child of the head (block " + std::to_string(head.number) + ")");
    ProposalCheck check;
    check.block_hash = d->block.hash;
    check.times = d->times;
    const auto t0 = Clock::now();
    exec::ExecOptions options;
    options.schedule = m_config.parallel ? m_config.schedule : exec::Schedule::serial;
    auto outcome = exec::execute(d->block, m_store, head.state_root, m_store.genesis().config, options);
    check.times.execute_ms = ms_since(t0);
    if (!outcome) return fail(Stage::execute, exec::describe(outcome.error()));
    check.outcome = std::move(outcome).value();
    return check;
}

}  // namespace barrel::pipeline
