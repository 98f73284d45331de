#include <barrel/block/merkle.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/core/parallel.hpp>
#include <barrel/exec/dag.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/rlp/encode.hpp>

#include <tbb/parallel_for_each.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include <algorithm>

namespace barrel::exec {

std::string_view to_string(Schedule s) noexcept {
    switch (s) {
        case Schedule::automatic: return "automatic";
        case Schedule::serial: return "serial";
        case Schedule::levels: return "levels";
        case Schedule::dynamic: return "dynamic";
    }
    return "unknown";
}

std::string_view to_string(ExecErrorCode code) noexcept {
    switch (code) {
        case ExecErrorCode::missing_header: return "missing_header";
        case ExecErrorCode::missing_senders: return "missing_senders";
        case ExecErrorCode::nonce_mismatch: return "nonce_mismatch";
        case ExecErrorCode::insufficient_balance: return "insufficient_balance";
        case ExecErrorCode::fee_cap_below_base_fee: return "fee_cap_below_base_fee";
        case ExecErrorCode::block_gas_exceeded: return "block_gas_exceeded";
        case ExecErrorCode::balance_overflow: return "balance_overflow";
        case ExecErrorCode::state_unreadable: return "state_unreadable";
        case ExecErrorCode::state_corrupt: return "state_corrupt";
    }
    return "unknown";
}

std::string describe(const ExecError& e) {
    if (e.code == ExecErrorCode::state_unreadable || e.code == ExecErrorCode::state_corrupt)
        return "parent state: " + std::string{to_string(e.code)};
    return "transaction " + std::to_string(e.tx_index) + ": " + std::string{to_string(e.code)};
}

std::string_view to_string(SealErrorCode code) noexcept {
    switch (code) {
        case SealErrorCode::gas_used_mismatch: return "gas_used_mismatch";
        case SealErrorCode::txs_root_mismatch: return "txs_root_mismatch";
        case SealErrorCode::receipts_root_mismatch: return "receipts_root_mismatch";
        case SealErrorCode::state_root_mismatch: return "state_root_mismatch";
    }
    return "unknown";
}

namespace {
/// The bytes behind a receipt hash (docs/formats.md), appended to `out`.
void encode_receipt(Bytes& out, const Hash& tx_hash, const Receipt& r) {
    // A block encodes thousands of receipts: one scratch buffer per thread, not one per receipt.
    thread_local Bytes payload;
    payload.clear();
    rlp::encode(payload, tx_hash);
    rlp::encode(payload, uint64_t{r.status ? 1u : 0u});
    rlp::encode(payload, r.gas_used);
    rlp::encode(payload, r.cumulative_gas_used);
    rlp::encode(payload, BytesView{r.output});
    rlp::encode_list(out, payload);
}
}  // namespace

Hash receipt_hash(const Hash& tx_hash, const Receipt& r) {
    Bytes encoding;
    encode_receipt(encoding, tx_hash, r);
    return keccak256(encoding);
}

Expected<void, SealErrorCode> check_seal(const block::Header& h, const Outcome& o) noexcept {
    if (h.gas_used != o.gas_used) return unexpected(SealErrorCode::gas_used_mismatch);
    if (h.txs_root != o.txs_root) return unexpected(SealErrorCode::txs_root_mismatch);
    if (h.receipts_root != o.receipts_root) return unexpected(SealErrorCode::receipts_root_mismatch);
    if (h.state_root != o.state_root) return unexpected(SealErrorCode::state_root_mismatch);
    return {};
}

namespace {

enum class TxKind : uint8_t {
    transfer,     ///< value transfer to an account without code
    dag_call,     ///< a well-formed DagTransfer call
    failed_call,  ///< a malformed or payable call to the precompile: status 0, all gas
    creation,     ///< unsupported: status 0, all gas, conflicts with everything
};

struct Plan {
    TxKind kind{TxKind::transfer};
    DagCall call;
    uint64_t gas_used{0};
};

/// The value of one conflict key during the block, loaded from the parent before any
/// transaction runs. The DAG gives each key to one transaction at a time, so slots need no locks.
struct Slot {
    bool existed{false};
    bool exists{false};
    state::Account original;
    state::Account account;  ///< account slots; user slots keep their balance in account.balance
};

/// Everything one execution shares between its transactions.
class BlockRun {
public:
    BlockRun(const block::Block& block, const state::StateReader& parent, const ChainConfig& config)
        : m_block{block}, m_parent{parent}, m_config{config} {}

    const block::Block& m_block;
    const state::StateReader& m_parent;
    const ChainConfig& m_config;
    std::vector<Plan> plans;
    std::vector<TxKeys> keys;
    Dag dag;
    std::vector<uint32_t> key_order;  ///< slot numbers in write-set order
    std::vector<Slot> slots;
    std::vector<Receipt> receipts;

    Slot& slot(size_t tx, size_t key) noexcept { return slots[dag.key_slot[tx * 3 + key]]; }

    /// The parent's value of `key` into `s`, or why it could not be read.
    std::optional<state::ReadErrorCode> load(Slot& s, const ConflictKey& key) const {
        if (key.kind == KeyKind::account) {
            const auto a = m_parent.account(Address::from_view(as_bytes(key.bytes)));
            if (!a) return a.error().code;
            s.existed = a->has_value();
            if (*a) s.original = **a;
        } else {
            const auto b = m_parent.user(key.bytes);
            if (!b) return b.error().code;
            s.existed = b->has_value();
            if (*b) s.original.balance = **b;
        }
        s.exists = s.existed;
        s.account = s.original;
        return std::nullopt;
    }

    /// Runs transaction i; returns an error if it makes the block invalid (then nothing changed).
    std::optional<ExecErrorCode> run(size_t i);

private:
    DagCode run_dag_call(size_t i, const DagCall& call, Bytes& output);
};

u256 effective_price(const tx::Transaction& t, const ChainConfig& config) {
    if (t.type != tx::TxType::dynamic_fee) return t.max_fee_per_gas;
    const auto tip_cap = checked_add(config.base_fee, t.max_priority_fee_per_gas);
    return tip_cap && *tip_cap < t.max_fee_per_gas ? *tip_cap : t.max_fee_per_gas;
}

std::optional<ExecErrorCode> BlockRun::run(size_t i) {
    const tx::Transaction& t = m_block.txs[i];
    const Plan& plan = plans[i];
    Slot& sender = slot(i, 0);
    if (t.nonce != sender.account.nonce) return ExecErrorCode::nonce_mismatch;
    // Stage 2 proved gas_limit × max fee fits 256 bits.
    const u256 max_cost = u256{t.gas_limit} * t.max_fee_per_gas;
    const auto upfront = checked_add(max_cost, t.value);
    if (!upfront || sender.account.balance < *upfront) return ExecErrorCode::insufficient_balance;

    const bool moves_value = plan.kind == TxKind::transfer && t.value != 0 && *t.to != m_block.senders[i];
    Slot* recipient = nullptr;
    if (moves_value) {
        recipient = &slot(i, 1);
        if (!checked_add(recipient->account.balance, t.value)) return ExecErrorCode::balance_overflow;
    }

    // Valid: from here on the transaction only succeeds or fails with a receipt.
    const u256 fee = u256{plan.gas_used} * effective_price(t, m_config);
    sender.exists = true;
    sender.account.nonce += 1;
    sender.account.balance -= fee;
    Receipt& r = receipts[i];
    r.gas_used = plan.gas_used;
    switch (plan.kind) {
        case TxKind::transfer:
            r.status = true;
            if (recipient != nullptr) {
                sender.account.balance -= t.value;
                recipient->account.balance += t.value;
                recipient->exists = true;
            }
            break;
        case TxKind::dag_call: r.status = true; run_dag_call(i, plan.call, r.output); break;
        case TxKind::failed_call:
        case TxKind::creation: r.status = false; break;
    }
    return std::nullopt;
}

DagCode BlockRun::run_dag_call(size_t i, const DagCall& call, Bytes& output) {
    // Keys: 0 = sender, 1 = call.user, 2 = call.to (userTransfer with distinct users).
    Slot& user = slot(i, 1);
    auto finish = [&output](DagCode code) {
        output = encode_return(code);
        return code;
    };
    switch (call.function) {
        case DagFunction::user_add:
            if (user.exists) return finish(DagCode::user_exists);
            user.exists = true;
            user.account.balance = call.amount;
            return finish(DagCode::ok);
        case DagFunction::user_save: {
            if (call.amount == 0) return finish(DagCode::invalid_amount);
            if (!user.exists) {
                user.exists = true;
                user.account.balance = call.amount;
                return finish(DagCode::ok);
            }
            const auto sum = checked_add(user.account.balance, call.amount);
            if (!sum) return finish(DagCode::overflow);
            user.account.balance = *sum;
            return finish(DagCode::ok);
        }
        case DagFunction::user_draw:
            if (!user.exists) return finish(DagCode::user_not_found);
            if (user.account.balance < call.amount) return finish(DagCode::insufficient_balance);
            user.account.balance -= call.amount;
            return finish(DagCode::ok);
        case DagFunction::user_balance:
            if (!user.exists) {
                output = encode_return(DagCode::user_not_found, 0);
                return DagCode::user_not_found;
            }
            output = encode_return(DagCode::ok, user.account.balance);
            return DagCode::ok;
        case DagFunction::user_transfer: {
            if (call.amount == 0) return finish(DagCode::invalid_amount);
            if (call.user == call.to) return finish(DagCode::ok);
            if (!user.exists) return finish(DagCode::user_not_found);
            if (user.account.balance < call.amount) return finish(DagCode::insufficient_balance);
            Slot& to = slot(i, 2);
            const auto sum = checked_add(to.exists ? to.account.balance : u256{0}, call.amount);
            if (!sum) return finish(DagCode::overflow);
            user.account.balance -= call.amount;
            to.exists = true;
            to.account.balance = *sum;
            return finish(DagCode::ok);
        }
    }
    return finish(DagCode::ok);
}

/// Stage-3 analysis of one transaction: its kind, gas and conflict keys (no state needed).
void plan_tx(const block::Block& b, size_t i, Plan& plan, TxKeys& keys) {
    const tx::Transaction& t = b.txs[i];
    const Address& sender = b.senders[i];
    auto address_key = [](const Address& a) {
        return std::string_view{reinterpret_cast<const char*>(a.data()), Address::size()};
    };
    keys.add(KeyKind::account, address_key(sender));
    const uint64_t intrinsic = tx::intrinsic_gas(t);
    if (t.is_creation()) {
        plan.kind = TxKind::creation;
        plan.gas_used = t.gas_limit;
        keys.barrier = true;
        return;
    }
    if (*t.to == kDagTransferAddress) {
        auto call = decode_call(t.data);
        if (!call || t.value != 0) {  // the precompile is not payable
            plan.kind = TxKind::failed_call;
            plan.gas_used = t.gas_limit;
            return;
        }
        plan.kind = TxKind::dag_call;
        plan.call = *call;
        plan.gas_used = intrinsic;
        keys.add(KeyKind::user, call->user);
        if (call->function == DagFunction::user_transfer) keys.add(KeyKind::user, call->to);
        // Keep key positions fixed for the executor: user at 1, receiver at 2 (absent if equal).
        return;
    }
    plan.kind = TxKind::transfer;
    plan.gas_used = intrinsic;
    keys.add(KeyKind::account, address_key(*t.to));
}

bool use_parallel(Schedule s) noexcept { return s != Schedule::serial; }

/// Runs two independent pieces of work, side by side when `parallel`.
template <class A, class B>
void both(bool parallel, A&& a, B&& b) {
    if (parallel) {
        tbb::parallel_invoke(a, b);
    } else {
        a();
        b();
    }
}

}  // namespace

Expected<Outcome, ExecError> execute(const block::Block& block, const state::StateReader& parent,
                                     const Hash& parent_state_root, const ChainConfig& config,
                                     const ExecOptions& options) {
    if (!block.header) return unexpected(ExecError{ExecErrorCode::missing_header, 0});
    const size_t n = block.size();
    // A block a library user assembled by hand may lack what stages 1 and 2 fill in.
    if (block.senders.size() != n || block.tx_hashes.size() != n)
        return unexpected(ExecError{ExecErrorCode::missing_senders, 0});
    const block::Header& header = *block.header;
    const bool parallel = use_parallel(options.schedule) && tbb::this_task_arena::max_concurrency() > 1;

    BlockRun run{block, parent, config};
    run.plans.resize(n);
    run.keys.resize(n);
    LowestIndex bad{n};
    size_t static_bad = n;  // the first transaction the static checks reject
    std::vector<ExecErrorCode> errors(n);
    Outcome out;
    out.receipts.resize(n);

    // Planning first, on every thread: beside the transactions root below, the root's hashing
    // would hold the second thread while the first planned alone.
    for_each_index(n, parallel, [&](size_t i) { plan_tx(block, i, run.plans[i], run.keys[i]); });

    auto check_and_order = [&] {
        // Static validity, in block order: fee cap against the base fee, and the block gas
        // limit (gas used is a function of the transaction alone, so the cumulative sums are
        // known now).
        uint64_t cumulative = 0;
        for (size_t i = 0; i < n; ++i) {
            const tx::Transaction& t = block.txs[i];
            if (t.type == tx::TxType::dynamic_fee && t.max_fee_per_gas < config.base_fee) {
                errors[i] = ExecErrorCode::fee_cap_below_base_fee;
                bad.record(i);
                static_bad = i;
                break;
            }
            if (t.gas_limit > header.gas_limit - cumulative) {
                errors[i] = ExecErrorCode::block_gas_exceeded;
                bad.record(i);
                static_bad = i;
                break;
            }
            cumulative += run.plans[i].gas_used;
            out.receipts[i].cumulative_gas_used = cumulative;
        }
        out.gas_used = cumulative;
        run.dag = build_dag(run.keys);
        run.slots.resize(run.dag.slots.size());
    };
    // The transactions root depends on nothing that execution computes: it is hashed beside the
    // serial part of planning (the static checks and the DAG build).
    auto hash_transactions = [&] { out.txs_root = block::merkle_root(block.tx_hashes, parallel); };
    both(parallel, check_and_order, hash_transactions);

    // Every key's parent value, before any transaction runs. The reads are independent of each
    // other, and after a commit each one waits on memory (or on RocksDB); inside the DAG, a chain
    // of transactions would wait on its reads one after another.
    // A read that fails fails the block (state_unreadable or state_corrupt), whichever fails.
    std::atomic<bool> unreadable{false}, corrupt{false};
    auto load_parents = [&] {
        for_each_index(run.slots.size(), parallel, [&](size_t s) {
            if (const auto e = run.load(run.slots[s], run.dag.slots[s]))
                (*e == state::ReadErrorCode::corruption ? corrupt : unreadable).store(true, std::memory_order_relaxed);
        });
    };
    // The order the write set will need, so that nothing is sorted after execution. It is serial
    // and reads every key's bytes (out of the CPU caches after a commit), so it runs beside the
    // loads rather than on the serial path of planning.
    auto order_keys = [&] { run.key_order = slots_in_key_order(run.dag); };
    both(parallel, load_parents, order_keys);
    if (corrupt || unreadable)
        return unexpected(ExecError{corrupt ? ExecErrorCode::state_corrupt : ExecErrorCode::state_unreadable, 0});

    out.dag = run.dag.stats;
    run.receipts = std::move(out.receipts);

    auto run_one = [&](size_t i) {
        // The statically rejected transaction must not run either: its nonce and balance checks
        // come after the fee-cap and block-gas checks, and would overwrite the error it has.
        if (i >= static_bad || bad.beyond(i)) return;
        if (auto e = run.run(i)) {
            errors[i] = *e;
            bad.record(i);
        }
    };

    Schedule schedule = parallel ? options.schedule : Schedule::serial;
    if (schedule == Schedule::automatic) {
        // A DAG without width gains nothing from threads and would pay for the scheduling.
        const bool narrow = run.dag.stats.levels * 2 > n;
        schedule = narrow ? Schedule::serial : Schedule::dynamic;
    }
    out.dag.used = schedule;
    switch (schedule) {
        case Schedule::automatic:
        case Schedule::serial:
            for (size_t i = 0; i < n; ++i) run_one(i);
            break;
        case Schedule::levels: {
            // Bucket the transactions by level, keeping block order inside a level.
            std::vector<uint32_t> begin(run.dag.stats.levels + 1, 0);
            for (uint32_t l : run.dag.level) ++begin[l + 1];
            for (size_t l = 0; l < run.dag.stats.levels; ++l) begin[l + 1] += begin[l];
            std::vector<uint32_t> order(n);
            std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
            for (uint32_t i = 0; i < n; ++i) order[fill[run.dag.level[i]]++] = i;
            for (size_t l = 0; l < run.dag.stats.levels; ++l)
                for_each_index(begin[l + 1] - begin[l], true, [&](size_t k) { run_one(order[begin[l] + k]); });
            break;
        }
        case Schedule::dynamic: {
            std::vector<std::atomic<uint32_t>> pending(n);
            std::vector<uint32_t> ready;
            for (size_t i = 0; i < n; ++i) {
                const auto preds = static_cast<uint32_t>(run.dag.preds_of(i).size());
                pending[i].store(preds, std::memory_order_relaxed);
                if (preds == 0) ready.push_back(static_cast<uint32_t>(i));
            }
            tbb::parallel_for_each(ready.begin(), ready.end(), [&](uint32_t i, tbb::feeder<uint32_t>& feeder) {
                // Acquire what every predecessor released when it decremented this counter; the
                // hand-over through TBB's queue alone would be invisible to ThreadSanitizer.
                (void)pending[i].load(std::memory_order_acquire);
                run_one(i);
                for (uint32_t s : run.dag.succs_of(i))
                    if (pending[s].fetch_sub(1, std::memory_order_acq_rel) == 1) feeder.add(s);
            });
            break;
        }
    }
    if (bad.any()) return unexpected(ExecError{errors[bad.lowest()], bad.lowest()});

    out.receipts = std::move(run.receipts);

    // What remains is two independent chains: receipt hashes → receipts root, and write set →
    // state root. The second is serial by nature (one keccak stream over the sorted write set),
    // so it runs beside the first instead of after it.
    auto hash_receipts = [&] {
        out.receipt_hashes.resize(n);
        // receipt_hash of each, four per keccak permutation.
        for_each_group(n, 4, parallel, [&](size_t begin, size_t end) {
            thread_local Bytes encodings[4];
            BytesView views[4];
            for (size_t i = begin; i < end; ++i) {
                Bytes& e = encodings[i - begin];
                e.clear();
                encode_receipt(e, block.tx_hashes[i], out.receipts[i]);
                views[i - begin] = e;
            }
            keccak256_many(std::span{views, end - begin}, std::span{out.receipt_hashes}.subspan(begin, end - begin));
        });
        out.receipts_root = block::merkle_root(out.receipt_hashes, parallel);
    };
    bool fee_overflow = false;
    std::optional<state::ReadErrorCode> coinbase_unreadable;
    auto commit_state = [&] {
        // Every transaction ran (the block is valid), so its fee is its gas times its price. Each
        // fee fits (its sender paid it); their sum need not, and then neither would the coinbase.
        for (size_t i = 0; i < n; ++i) {
            const auto sum = checked_add(out.fees, u256{out.receipts[i].gas_used} * effective_price(block.txs[i], config));
            if (!sum) {
                fee_overflow = true;
                return;
            }
            out.fees = *sum;
        }
        // The write set: every key whose value differs from the parent's, already in key order.
        auto changed = [](const Slot& slot) {
            return (slot.exists != slot.existed || !(slot.account == slot.original));
        };
        size_t accounts = 0, users = 0;
        for (uint32_t s : run.key_order) {
            if (!changed(run.slots[s])) continue;
            ++(run.dag.slots[s].kind == KeyKind::account ? accounts : users);
        }
        out.writes.accounts.reserve(accounts + 1);  // + the coinbase
        out.writes.users.reserve(users);
        for (uint32_t s : run.key_order) {
            const Slot& slot = run.slots[s];
            if (!changed(slot)) continue;
            const ConflictKey& key = run.dag.slots[s];
            if (key.kind == KeyKind::account)
                out.writes.accounts.emplace_back(Address::from_view(as_bytes(key.bytes)), slot.account);
            else
                out.writes.users.emplace_back(std::string{key.bytes}, slot.account.balance);
        }
        // Fees reach the coinbase once, after every transaction, so they never serialise the DAG.
        if (out.fees != 0) {
            auto& written = out.writes.accounts;
            auto it = std::lower_bound(written.begin(), written.end(), header.coinbase,
                                       [](const auto& e, const Address& a) { return e.first < a; });
            if (it == written.end() || it->first != header.coinbase) {
                const auto coinbase = parent.account(header.coinbase);
                if (!coinbase) {
                    coinbase_unreadable = coinbase.error().code;
                    return;
                }
                it = written.emplace(it, header.coinbase, coinbase->value_or(state::Account{}));
            }
            const auto credited = checked_add(it->second.balance, out.fees);
            if (!credited) {
                fee_overflow = true;
                return;
            }
            it->second.balance = *credited;
        }
        out.state_root = state::next_state_root(parent_state_root, out.writes, parallel);
    };
    both(parallel, hash_receipts, commit_state);
    if (fee_overflow) return unexpected(ExecError{ExecErrorCode::balance_overflow, n == 0 ? 0 : n - 1});
    if (coinbase_unreadable)
        return unexpected(ExecError{*coinbase_unreadable == state::ReadErrorCode::corruption
                                        ? ExecErrorCode::state_corrupt
                                        : ExecErrorCode::state_unreadable,
                                    0});
    return out;
}

}  // namespace barrel::exec
