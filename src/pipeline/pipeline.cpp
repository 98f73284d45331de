#include <barrel/core/hex.hpp>
#include <barrel/pipeline/pipeline.hpp>

#include "pipeline/testing.hpp"
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <type_traits>
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

std::string_view to_string(LinkErrorCode code) noexcept {
    switch (code) {
        case LinkErrorCode::conflicts_with_stored: return "conflicts_with_stored";
        case LinkErrorCode::blocks_missing: return "blocks_missing";
        case LinkErrorCode::parent_mismatch: return "parent_mismatch";
        case LinkErrorCode::not_child_of_head: return "not_child_of_head";
    }
    return "unknown";
}

std::string describe(const LinkError& e) {
    switch (e.code) {
        case LinkErrorCode::conflicts_with_stored:
            return "conflicts with stored block " + std::to_string(e.number);
        case LinkErrorCode::blocks_missing:
            return "expected block " + std::to_string(e.head_number + 1) + " (blocks missing)";
        case LinkErrorCode::parent_mismatch:
            return "parent hash " + to_hex(e.parent_hash) + " is not the head " +
                   to_hex(e.head_hash);
        case LinkErrorCode::not_child_of_head:
            return "not a child of the head (block " + std::to_string(e.head_number) + ")";
    }
    return std::string{to_string(e.code)};
}

std::string describe(const StageError& e) {
    return std::visit(
        [](const auto& error) -> std::string {
            using E = std::decay_t<decltype(error)>;
            if constexpr (std::is_same_v<E, exec::SealErrorCode>)
                return std::string{exec::to_string(error)};
            else if constexpr (std::is_same_v<E, store::StoreError>)
                return error.message;
            else if constexpr (std::is_same_v<E, LinkError>)
                return describe(error);
            else if constexpr (std::is_same_v<E, block::BlockError>)
                return block::describe(error);
            else
                return exec::describe(error);
        },
        e);
}

std::string describe(const PipelineError& e) {
    std::string out = e.block_number ? "block " + std::to_string(*e.block_number)
                                     : "block at position " + std::to_string(e.block_index);
    out += ": ";
    out += to_string(e.stage);
    out += ": ";
    out += describe(e.error);
    return out;
}

namespace {
/// Whether an execution error is the fault of the transaction it names (else of the state).
bool blames_transaction(exec::ExecErrorCode code) noexcept {
    switch (code) {
        case exec::ExecErrorCode::nonce_mismatch:
        case exec::ExecErrorCode::insufficient_balance:
        case exec::ExecErrorCode::fee_cap_below_base_fee:
        case exec::ExecErrorCode::gas_price_below_base_fee:
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

std::optional<Blame> blamed_transaction(const PipelineError& e) {
    if (const auto* x = std::get_if<exec::ExecError>(&e.error)) {
        if (!blames_transaction(x->code)) return std::nullopt;
        return Blame{x->tx_index, std::string{exec::to_string(x->code)}};
    }
    // A template holds only pooled transactions, which admission checked, but a pool is a
    // library others may feed differently: decode and verify may still name one.
    if (const auto* b = std::get_if<block::BlockError>(&e.error); b && b->tx_index)
        return Blame{*b->tx_index, std::string{block::to_string(b->code)}};
    return std::nullopt;
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

/// A block follows `parent` if it is its child: the next number, and the parent's hash.
Expected<void, LinkError> check_link(const block::Header& h, const store::Head& parent) noexcept {
    auto fail = [&](LinkErrorCode code) {
        return unexpected(LinkError{code, h.number, h.parent_hash, parent.number, parent.hash});
    };
    if (h.number <= parent.number) return fail(LinkErrorCode::conflicts_with_stored);
    if (h.number != parent.number + 1) return fail(LinkErrorCode::blocks_missing);
    if (h.parent_hash != parent.hash) return fail(LinkErrorCode::parent_mismatch);
    return {};
}
}  // namespace

struct Pipeline::Decoded {
    block::Block block;
    size_t index{0};
    bool already_stored{false};  ///< in the chain already: skipped, never verified
    /// Streamed: why verification failed. It counts only once the block is known not to be in
    /// the chain already, which the execute filter decides (a repeat of an earlier block of the
    /// stream is skipped unverified, as one at a time).
    std::optional<PipelineError> verify_error;
    bool is_template{false};  ///< seal_stream: execute fills the header in (Pipeline::seal)
    StageTimes times;
    size_t executed_over{0};
    std::shared_ptr<const exec::Outcome> outcome;  ///< set by execute, read by commit
};

namespace {
/// A streamed block executed but not yet committed.
struct Uncommitted {
    Hash hash;
    std::shared_ptr<const exec::Outcome> outcome;
};

/// The state a streamed block executes against while the blocks before it may still be
/// committing: their write sets, newest first, over the store. Each write set is sorted by key,
/// so a lookup is a binary search per pending block.
class PendingState final : public state::StateReader {
public:
    PendingState(const state::StateReader& store, const std::vector<Uncommitted>& pending)
        : m_store{store}, m_pending{pending} {}

    state::ReadResult<state::Account> account(const Address& address) const override {
        for (auto it = m_pending.rbegin(); it != m_pending.rend(); ++it)
            if (const auto* v = find(it->outcome->writes.accounts, address))
                return std::optional<state::Account>{*v};
        return m_store.account(address);
    }
    state::ReadResult<u256> user(std::string_view name) const override {
        for (auto it = m_pending.rbegin(); it != m_pending.rend(); ++it)
            if (const auto* v = find(it->outcome->writes.users, name))
                return std::optional<u256>{*v};
        return m_store.user(name);
    }

private:
    template <class Entries, class Key>
    static const typename Entries::value_type::second_type* find(const Entries& entries,
                                                                 const Key& key) {
        const auto it = std::lower_bound(entries.begin(), entries.end(), key,
                                         [](const auto& e, const Key& k) { return e.first < k; });
        return it != entries.end() && it->first == key ? &it->second : nullptr;
    }

    const state::StateReader& m_store;
    const std::vector<Uncommitted>& m_pending;  ///< oldest first
};

exec::ExecOptions exec_options(const Config& config) noexcept {
    exec::ExecOptions options;
    options.schedule = config.parallel ? config.schedule : exec::Schedule::serial;
    return options;
}
}  // namespace

Pipeline::Pipeline(store::Store& store, const Config& config) : m_store{store}, m_config{config} {}

Expected<Pipeline::Decoded, PipelineError> Pipeline::decode(Bytes wire, size_t index,
                                                            bool is_template) {
    Decoded d;
    d.index = index;
    const auto t0 = Clock::now();
    const std::optional<uint64_t> peeked = peek_number(wire);
    auto decoded = block::decode_block(std::move(wire), m_config.parallel);
    d.times.decode_ms = ms_since(t0);
    if (!decoded) return unexpected(PipelineError{Stage::decode, peeked, index, decoded.error()});
    d.block = std::move(decoded).value();
    d.is_template = is_template;
    if (d.is_template) return d;  // not a block yet: it has no hash to be stored under
    auto stored = is_stored(d);
    if (!stored) return unexpected(stored.error());
    d.already_stored = *stored;
    return d;
}

Expected<bool, PipelineError> Pipeline::is_stored(const Decoded& d) const {
    const uint64_t number = d.block.header->number;
    auto stored = m_store.block_number(d.block.hash);
    if (!stored) return unexpected(PipelineError{Stage::link, number, d.index, stored.error()});
    return *stored && **stored == number;
}

Expected<void, PipelineError> Pipeline::verify(Decoded& d) {
    const auto t0 = Clock::now();
    auto verified = block::recover_senders(d.block, m_store.genesis().config.chain_id,
                                           m_config.sender_cache, m_config.parallel);
    d.times.verify_ms = ms_since(t0);
    if (!verified)
        return unexpected(
            PipelineError{Stage::verify, d.block.header->number, d.index, verified.error()});
    return {};
}

Expected<Pipeline::Decoded, PipelineError> Pipeline::decode_and_verify(Bytes wire, size_t index,
                                                                       bool is_template) {
    auto d = decode(std::move(wire), index, is_template);
    if (!d) return d;
    // A block the store already has needs no verification.
    if (d->already_stored) return d;
    if (auto verified = verify(*d); !verified) return unexpected(verified.error());
    return d;
}

Expected<void, PipelineError> Pipeline::execute(Decoded& d, const store::Head& parent,
                                                const state::Lattice& parent_lattice,
                                                const state::StateReader& state) {
    block::Header& h = *d.block.header;
    auto fail = [&](Stage stage, StageError error) {
        return unexpected(PipelineError{stage, h.number, d.index, std::move(error)});
    };
    if (d.is_template) {
        // A template that names its place (a consensus height, the head it was built on) must
        // be this parent's child; one that does not (a sealer's) is made its child.
        const bool names_number = h.number != 0 && h.number != parent.number + 1;
        const bool names_parent = h.parent_hash != Hash{} && h.parent_hash != parent.hash;
        if (names_number || names_parent)
            return fail(Stage::link, LinkError{LinkErrorCode::not_child_of_head, h.number,
                                               h.parent_hash, parent.number, parent.hash});
        h.parent_hash = parent.hash;
        h.number = parent.number + 1;
    }
    if (auto linked = check_link(h, parent); !linked) return fail(Stage::link, linked.error());

    const auto t0 = Clock::now();
    auto outcome = exec::execute(d.block, state, parent_lattice, m_store.genesis().config,
                                 exec_options(m_config));
    if (!outcome) {
        d.times.execute_ms = ms_since(t0);
        return fail(Stage::execute, outcome.error());
    }
    if (d.is_template) {
        seal(d, *outcome);
    } else if (auto sealed = exec::check_seal(h, *outcome); !sealed) {
        d.times.execute_ms = ms_since(t0);
        return fail(Stage::seal, sealed.error());
    }
    d.times.execute_ms = ms_since(t0);
    d.outcome = std::make_shared<const exec::Outcome>(std::move(outcome).value());
    return {};
}

void Pipeline::seal(Decoded& d, const exec::Outcome& outcome) const {
    block::Header h = *d.block.header;
    h.gas_used = outcome.gas_used;
    h.txs_root = outcome.txs_root;
    h.receipts_root = outcome.receipts_root;
    h.state_root = outcome.state_root;
    // The header is at the front of the wire block and its length may change, so the block is
    // encoded again around the same transaction bytes; what was decoded from them (and the
    // senders, verified) carries over, its views moved into the new wire for the commit.
    d.block = block::with_header(std::move(d.block), h);
}

Expected<BlockResult, PipelineError> Pipeline::commit(const Decoded& d, BytesView consensus_hash) {
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
    auto committed = m_store.commit(d.block, *d.outcome, m_config.parallel, consensus_hash);
    r.times.commit_ms = ms_since(t0);
    if (!committed)
        return unexpected(PipelineError{Stage::commit, r.number, d.index, committed.error()});
    r.commit_bytes = committed->bytes;
    return r;
}

Expected<BlockResult, PipelineError> Pipeline::execute_and_commit(Decoded& d) {
    if (!d.already_stored)
        if (auto e = execute(d, m_store.head(), m_store.lattice(), m_store); !e)
            return unexpected(e.error());
    return commit(d);
}

Expected<BlockResult, PipelineError> Pipeline::import_block(Bytes wire) {
    auto d = decode_and_verify(std::move(wire), 0, false);
    if (!d) return unexpected(d.error());
    return execute_and_commit(*d);
}

/// One streamed import: a tbb::parallel_pipeline of four filters (read, decode+verify, execute,
/// commit) over the state they share. Each token is one block; an error travels with its block
/// to the in-order commit filter, so the error reported is always that of the earliest failing
/// block.
///
/// Execute and commit are separate in-order filters, so block N+1 executes while block N
/// commits: it reads the state through the write sets of the blocks executed but not yet
/// committed (PendingState), and links to the last executed block instead of the store's head.
/// A write set leaves `m_uncommitted` only after its commit returned, by which time the store
/// (and its cache) answer with the same values; a reader that took it before keeps its copy.
///
/// The outcome is the one-block-at-a-time outcome whatever the thread count and the number in
/// flight (docs/architecture.md, "The pipeline"): whether a block is already in the chain, and
/// so skipped, is decided in the execute filter, in order, against the blocks executed before it
/// as well as the store; decode's early answer only saves verifying a block stored before.
class Pipeline::Stream {
public:
    Stream(Pipeline& pipeline, const BlockSource& next, const Progress& progress)
        : m_pipeline{pipeline},
          m_next{next},
          m_progress{progress},
          m_tip{pipeline.m_store.head()},
          m_tip_lattice{pipeline.m_store.lattice()} {}

    Expected<void, PipelineError> run() {
        tbb::parallel_pipeline(
            m_pipeline.m_config.max_in_flight,
            tbb::make_filter<void, Item>(tbb::filter_mode::serial_in_order,
                                         [this](tbb::flow_control& fc) {
                                             return isolated_for_hooks([&] { return read(fc); });
                                         }) &
                filter(tbb::filter_mode::parallel, &Stream::decode_and_verify) &
                filter(tbb::filter_mode::serial_in_order, &Stream::execute) &
                filter(tbb::filter_mode::serial_in_order, &Stream::commit));
        if (m_first_error) return unexpected(*m_first_error);
        return {};
    }

private:
    // Shared so that a token is cheap to pass between filters; Decoded itself is move-only.
    using Item = std::shared_ptr<Expected<Decoded, PipelineError>>;

    /// Serial, in order: the next block's bytes, numbered by their position in the stream. Ends
    /// at the end of the source, or once a block failed.
    Item read(tbb::flow_control& fc) {
        std::optional<Bytes> wire;
        if (!m_stop.load(std::memory_order_relaxed)) wire = m_next();
        if (!wire) {
            fc.stop();
            return {};
        }
        auto item = std::make_shared<Expected<Decoded, PipelineError>>(Decoded{});
        (*item)->index = m_next_index++;
        (*item)->block.wire = std::move(*wire);
        return item;
    }

    /// Parallel: decodes and verifies several blocks at once. A verify failure waits in the
    /// block for the execute filter, which alone knows whether it counts.
    Item decode_and_verify(Item item) {
        const size_t index = (*item)->index;
        Bytes wire = std::move((*item)->block.wire);
        auto d = m_pipeline.decode(std::move(wire), index, m_pipeline.m_sealing);
        if (d && !d->already_stored)
            if (auto verified = m_pipeline.verify(*d); !verified)
                d->verify_error = verified.error();
        *item = std::move(d);
        return item;
    }

    /// Serial, in order: skips a block already in the chain, else links it to the last one
    /// executed and executes it over the write sets not yet committed. After a failure nothing
    /// later executes: its parent would be missing.
    Item execute(Item item) {
        if (m_execute_failed) return item;
        const size_t index = *item ? (*item)->index : item->error().block_index;
        const testing::Executed what = execute_one(*item);
        if (what == testing::Executed::failed) {
            m_execute_failed = true;
            m_stop.store(true, std::memory_order_relaxed);
        }
        if (hooks() && hooks()->executed) hooks()->executed(index, what);
        return item;
    }

    /// The execute filter's work on one block: what it did, and `item` its error if it failed.
    testing::Executed execute_one(Expected<Decoded, PipelineError>& item) {
        auto fail = [&](const PipelineError& e) {
            item = unexpected(e);
            return testing::Executed::failed;
        };
        if (!item) return testing::Executed::failed;
        Decoded& d = *item;
        std::vector<Uncommitted> pending;
        {
            std::lock_guard lock{m_uncommitted_mutex};
            pending.assign(m_uncommitted.begin(), m_uncommitted.end());
        }
        if (!d.already_stored && !d.is_template) {
            auto repeat = executed_before(d, pending);
            if (!repeat) return fail(repeat.error());
            d.already_stored = *repeat;
        }
        // As one at a time, a block in the chain already is skipped unverified.
        if (d.already_stored) return testing::Executed::skipped;
        if (d.verify_error) return fail(*d.verify_error);
        d.executed_over = pending.size();
        const PendingState state{m_pipeline.m_store, pending};
        if (auto e = m_pipeline.execute(d, m_tip, m_tip_lattice, state); !e) return fail(e.error());
        m_tip = store::Head{d.block.header->number, d.block.hash, d.outcome->state_root};
        m_tip_lattice = d.outcome->lattice;
        std::lock_guard lock{m_uncommitted_mutex};
        m_uncommitted.push_back(Uncommitted{d.block.hash, d.outcome});
        return testing::Executed::executed;
    }

    /// Whether `d`, not stored when it was decoded, is nevertheless the chain's block at its
    /// height: executed earlier in this stream, and still `pending` or committed since. One at a
    /// time it would be stored by now and skipped; so it is here, however far the commits lag.
    Expected<bool, PipelineError> executed_before(const Decoded& d,
                                                  const std::vector<Uncommitted>& pending) const {
        // Only the blocks up to the tip are in the chain. Above it, nothing to look up.
        if (d.block.header->number > m_tip.number) return false;
        for (const Uncommitted& u : pending)
            if (u.hash == d.block.hash) return true;
        // Not pending when `pending` was taken: committed before that (the store has it now) or
        // never executed.
        return m_pipeline.is_stored(d);
    }

    /// Serial, in order: commits the block (or reports a skipped one), or keeps the first error.
    void commit(Item item) {
        if (m_first_error) return;
        if (!*item) return fail(item->error());
        if (!(*item)->already_stored && hooks() && hooks()->before_commit)
            hooks()->before_commit((*item)->index);
        auto r = m_pipeline.commit(**item);
        if (!r) return fail(r.error());
        if (!r->skipped) {
            std::lock_guard lock{m_uncommitted_mutex};
            m_uncommitted.pop_front();
        }
        if (m_progress) m_progress(*r);
    }

    void fail(const PipelineError& e) {
        m_first_error = e;
        m_stop.store(true, std::memory_order_relaxed);
    }

    /// The filter that runs `step` on each block.
    template <class Out>
    tbb::filter<Item, Out> filter(tbb::filter_mode mode, Out (Stream::*step)(Item)) {
        return tbb::make_filter<Item, Out>(mode, [this, step](Item item) {
            return isolated_for_hooks([&] { return (this->*step)(std::move(item)); });
        });
    }

    const testing::StreamHooks* hooks() const noexcept { return m_pipeline.m_stream_hooks; }

    /// Runs a filter's body. A test hook may block its thread (testing.hpp). A thread waiting
    /// inside a stage's own parallel loop may pick up any task of the arena, another filter's
    /// too; if it then blocked in a hook, the loop under it could not finish, and the blocks the
    /// hook waits for might need that loop: a deadlock. Isolating each body keeps such waits to
    /// their own loop. Only with hooks: without them the schedule stays the one measured.
    template <class F>
    std::invoke_result_t<F&> isolated_for_hooks(F&& body) const {
        if (hooks()) return tbb::this_task_arena::isolate(body);
        return body();
    }

    Pipeline& m_pipeline;
    const BlockSource& m_next;
    const Progress& m_progress;
    size_t m_next_index{0};  // read's alone
    // Set by the last two filters, read by the first: they are serial but run on different
    // threads at the same time, so this must be atomic.
    std::atomic<bool> m_stop{false};
    store::Head m_tip;             // the last block executed (execute's alone)
    state::Lattice m_tip_lattice;  // its lattice: a copy, as the commit filter moves the store's
    bool m_execute_failed{false};  // execute's alone too
    std::mutex m_uncommitted_mutex;
    std::deque<Uncommitted> m_uncommitted;       // executed, not yet committed
    std::optional<PipelineError> m_first_error;  // commit's alone
};

Expected<void, PipelineError> Pipeline::import_stream(const BlockSource& next,
                                                      const Progress& progress) {
    if (!m_config.parallel || m_config.max_in_flight < 2) {
        for (size_t index = 0;; ++index) {
            auto wire = next();
            if (!wire) return {};
            auto d = decode_and_verify(std::move(*wire), index, m_sealing);
            if (!d) return unexpected(d.error());
            auto r = execute_and_commit(*d);
            if (!r) return unexpected(r.error());
            if (progress) progress(*r);
        }
    }
    return Stream{*this, next, progress}.run();
}

Expected<void, PipelineError> Pipeline::seal_stream(const BlockSource& templates,
                                                    const Progress& progress) {
    m_sealing = true;
    struct Reset {
        bool& flag;
        ~Reset() { flag = false; }
    } reset{m_sealing};
    return import_stream(templates, progress);
}

Expected<ProposalCheck, PipelineError> Pipeline::check_proposal(Bytes wire) {
    auto d = decode_and_verify(std::move(wire), 0, false);
    if (!d) return unexpected(d.error());
    const block::Header& h = *d->block.header;
    const store::Head& head = m_store.head();
    auto fail = [&](Stage stage, StageError error) {
        return unexpected(PipelineError{stage, h.number, 0, std::move(error)});
    };
    if (h.number != head.number + 1 || h.parent_hash != head.hash)
        return fail(Stage::link, LinkError{LinkErrorCode::not_child_of_head, h.number,
                                           h.parent_hash, head.number, head.hash});
    ProposalCheck check;
    check.block_hash = d->block.hash;
    check.times = d->times;
    const auto t0 = Clock::now();
    auto outcome = exec::execute(d->block, m_store, m_store.lattice(), m_store.genesis().config,
                                 exec_options(m_config));
    check.times.execute_ms = ms_since(t0);
    if (!outcome) return fail(Stage::execute, outcome.error());
    check.outcome = std::move(outcome).value();
    return check;
}

Expected<CheckedBlock, PipelineError> Pipeline::check_template(Bytes template_wire) {
    auto d = decode_and_verify(std::move(template_wire), 0, true);
    if (!d) return unexpected(d.error());
    return check_decoded_template(std::move(d).value());
}

Expected<CheckedBlock, PipelineError> Pipeline::check_template(block::Block decoded_template) {
    Decoded d;
    d.block = std::move(decoded_template);
    d.is_template = true;
    return check_decoded_template(std::move(d));
}

Expected<CheckedBlock, PipelineError> Pipeline::check_decoded_template(Decoded d) {
    // The head is read once: the block is linked to, and executed over, the same one.
    const store::Head head = m_store.head();
    const state::Lattice lattice = m_store.lattice();
    if (auto e = execute(d, head, lattice, m_store); !e) return unexpected(e.error());
    return CheckedBlock{std::make_unique<Decoded>(std::move(d))};
}

Expected<BlockResult, PipelineError> Pipeline::commit_checked(const CheckedBlock& checked,
                                                              BytesView consensus_hash) {
    const Decoded& d = *checked.m_decoded;
    // The same parent hash is the same parent state: the outcome still applies.
    if (auto linked = check_link(*d.block.header, m_store.head()); !linked)
        return unexpected(
            PipelineError{Stage::link, d.block.header->number, d.index, linked.error()});
    return commit(d, consensus_hash);
}

CheckedBlock::CheckedBlock(std::unique_ptr<Pipeline::Decoded> decoded) noexcept
    : m_decoded{std::move(decoded)} {}
CheckedBlock::CheckedBlock(CheckedBlock&&) noexcept = default;
CheckedBlock& CheckedBlock::operator=(CheckedBlock&&) noexcept = default;
CheckedBlock::~CheckedBlock() = default;
const block::Block& CheckedBlock::block() const noexcept { return m_decoded->block; }
const exec::Outcome& CheckedBlock::outcome() const noexcept { return *m_decoded->outcome; }
const StageTimes& CheckedBlock::times() const noexcept { return m_decoded->times; }

}  // namespace barrel::pipeline
