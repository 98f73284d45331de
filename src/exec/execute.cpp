#include <barrel/block/merkle.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/rlp/encode.hpp>

#include "core/parallel.hpp"
#include "exec/dag.hpp"
#include <tbb/parallel_for_each.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <span>
#include <vector>

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
        case ExecErrorCode::gas_price_below_base_fee: return "gas_price_below_base_fee";
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
    if (h.receipts_root != o.receipts_root)
        return unexpected(SealErrorCode::receipts_root_mismatch);
    if (h.state_root != o.state_root) return unexpected(SealErrorCode::state_root_mismatch);
    return {};
}

// exec::execute is five steps, each a function of what it is given (execute() below reads as
// their sequence):
//   1. plan          each transaction's kind, gas and conflict keys, from the block alone;
//   2. static checks what needs no state (fee cap, block gas), and the DAG of the keys;
//   3. load          every key's value in the parent state, before any transaction runs;
//   4. run           the transactions in an order the DAG allows, under the chosen schedule;
//   5. finish        receipt hashes and roots, fees, the write set and the state root.
// The receipts live in the Outcome from the start: the static checks write their cumulative gas,
// the run their status, gas and output, and the finish step hashes them where they are.

namespace {

// ---- what the steps share ----------------------------------------------------------------------

enum class TxKind : uint8_t {
    transfer,     ///< value transfer to an account without code
    dag_call,     ///< a well-formed DagTransfer call
    failed_call,  ///< a malformed or payable call to the precompile: status 0, all gas
    creation,     ///< unsupported: status 0, all gas, conflicts with everything
};

/// What planning learns of one transaction without reading state.
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

/// FISCO BCOS 2.x's DagTransferPrecompiled refuses an empty user name, in every function, before
/// anything else.
bool has_valid_names(const DagCall& call) noexcept {
    return !call.user.empty() && (call.function != DagFunction::user_transfer || !call.to.empty());
}

std::string_view address_key(const Address& a) noexcept {
    return std::string_view{reinterpret_cast<const char*>(a.data()), Address::size()};
}

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

// ---- step 1: plan ------------------------------------------------------------------------------
// (plan_tx decides each transaction's gas as exec::gas_used does, with the decoded call it keeps.)

/// Transaction i's kind, gas used and conflict keys (no state needed).
void plan_tx(const block::Block& b, size_t i, Plan& plan, TxKeys& keys) {
    const tx::Transaction& t = b.txs[i];
    keys.add(KeyKind::account, address_key(b.senders[i]));
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
        // A call refused for its names touches no user (FISCO's getParallelTag gives it no tags).
        if (!has_valid_names(*call)) return;
        keys.add(KeyKind::user, call->user);
        if (call->function == DagFunction::user_transfer) keys.add(KeyKind::user, call->to);
        // Keep key positions fixed for the executor: user at 1, receiver at 2 (absent if equal).
        return;
    }
    plan.kind = TxKind::transfer;
    plan.gas_used = intrinsic;
    keys.add(KeyKind::account, address_key(*t.to));
}

/// Every transaction's plan and conflict keys, by index.
struct BlockPlan {
    std::vector<Plan> txs;
    std::vector<TxKeys> keys;
};

BlockPlan plan_block(const block::Block& block, bool parallel) {
    const size_t n = block.size();
    BlockPlan plan;
    plan.txs.resize(n);
    plan.keys.resize(n);
    for_each_index(n, parallel, [&](size_t i) { plan_tx(block, i, plan.txs[i], plan.keys[i]); });
    return plan;
}

// ---- step 2: static checks ---------------------------------------------------------------------

/// What the static checks found.
struct StaticChecks {
    uint64_t gas_used{0};               ///< the block's gas, up to the rejected transaction
    std::optional<ExecError> rejected;  ///< the first transaction they reject

    /// How many transactions may run: those before the rejected one. It must not run either:
    /// its nonce and balance checks come after these and would overwrite its error.
    size_t runnable(size_t n) const noexcept { return rejected ? rejected->tx_index : n; }
};

/// The checks that need no state, in block order: the fee cap (EIP-1559) or the gas price (the
/// other types, whose max_fee_per_gas holds it) against the base fee, and the block gas limit (gas
/// used is a function of the transaction alone, so the cumulative sums are known now; they are
/// written to the receipts).
StaticChecks check_static(const block::Block& block, std::span<const Plan> plans,
                          const ChainConfig& config, std::span<Receipt> receipts) noexcept {
    const uint64_t gas_limit = block.header->gas_limit;
    StaticChecks out;
    uint64_t cumulative = 0;
    for (size_t i = 0; i < plans.size(); ++i) {
        const tx::Transaction& t = block.txs[i];
        // One comparison for every type: a legacy or EIP-2930 transaction priced below the base
        // fee would otherwise be mined for less than the chain charges (even for nothing).
        if (t.max_fee_per_gas < config.base_fee) {
            out.rejected = ExecError{t.type == tx::TxType::dynamic_fee
                                         ? ExecErrorCode::fee_cap_below_base_fee
                                         : ExecErrorCode::gas_price_below_base_fee,
                                     i};
            break;
        }
        if (t.gas_limit > gas_limit - cumulative) {
            out.rejected = ExecError{ExecErrorCode::block_gas_exceeded, i};
            break;
        }
        cumulative += plans[i].gas_used;
        receipts[i].cumulative_gas_used = cumulative;
    }
    out.gas_used = cumulative;
    return out;
}

// ---- step 3: load ------------------------------------------------------------------------------

/// The parent's value of one key (a user's balance as an account's), nullopt if absent: the one
/// place execution reads the parent state.
state::ReadResult<state::Account> read_parent(const state::StateReader& parent,
                                              const ConflictKey& key) {
    if (key.kind == KeyKind::account)
        return parent.account(Address::from_view(as_bytes(key.bytes)));
    const auto balance = parent.user(key.bytes);
    if (!balance) return unexpected(balance.error());
    if (!*balance) return std::optional<state::Account>{};
    return std::optional<state::Account>{state::Account{0, **balance}};
}

/// A parent state that cannot be read fails the block: there is no state to execute against.
ExecErrorCode read_failure(state::ReadErrorCode code) noexcept {
    return code == state::ReadErrorCode::corruption ? ExecErrorCode::state_corrupt
                                                    : ExecErrorCode::state_unreadable;
}

/// Every key's value before the block, by slot number, and the slot numbers in write-set order.
struct Loaded {
    std::vector<Slot> slots;
    std::vector<uint32_t> key_order;
};

/// Every key's parent value into `slots` (zeroed, one per DAG key), or state_corrupt /
/// state_unreadable if any read failed (corruption wins when both happened: it is the one a user
/// must act on).
Expected<Loaded, ExecError> load(const state::StateReader& parent, const Dag& dag,
                                 std::vector<Slot> slots, bool parallel) {
    Loaded out{std::move(slots), {}};
    std::atomic<bool> unreadable{false}, corrupt{false};
    // The reads are independent of each other, and after a commit each one waits on memory (or on
    // RocksDB); inside the DAG, a chain of transactions would wait on its reads one after another.
    auto read_all = [&] {
        for_each_index(dag.slots.size(), parallel, [&](size_t i) {
            // Written in place: the slots start zeroed, so an absent key needs no copy.
            Slot& s = out.slots[i];
            const auto value = read_parent(parent, dag.slots[i]);
            if (!value) {
                auto& failed =
                    value.error().code == state::ReadErrorCode::corruption ? corrupt : unreadable;
                failed.store(true, std::memory_order_relaxed);
                return;
            }
            s.existed = s.exists = value->has_value();
            if (*value) s.original = s.account = **value;
        });
    };
    // The order the write set will need, so that nothing is sorted after execution. It is serial
    // and reads every key's bytes (out of the CPU caches after a commit), so it runs beside the
    // reads rather than on the serial path of planning.
    auto order_keys = [&] { out.key_order = slots_in_key_order(dag); };
    both(parallel, read_all, order_keys);
    if (corrupt || unreadable)
        return unexpected(
            ExecError{corrupt ? ExecErrorCode::state_corrupt : ExecErrorCode::state_unreadable, 0});
    return out;
}

// ---- step 4: run -------------------------------------------------------------------------------

/// Runs one transaction at a time against the slots. It reads the block, the plans and the DAG,
/// and writes only the slots of the transaction's keys and its receipt, so transactions the DAG
/// leaves unordered can run at once.
class TxRunner {
public:
    TxRunner(const block::Block& block, std::span<const Plan> plans, const Dag& dag,
             std::span<Slot> slots, const ChainConfig& config, std::span<Receipt> receipts) noexcept
        : m_block{block},
          m_plans{plans},
          m_dag{dag},
          m_slots{slots},
          m_config{config},
          m_receipts{receipts} {}

    /// Runs transaction i; returns an error if it makes the block invalid (then nothing changed).
    std::optional<ExecErrorCode> run(size_t i) const;

private:
    const block::Block& m_block;
    std::span<const Plan> m_plans;
    const Dag& m_dag;
    std::span<Slot> m_slots;
    const ChainConfig& m_config;
    std::span<Receipt> m_receipts;

    Slot& slot(size_t tx, size_t key) const noexcept {
        return m_slots[m_dag.key_slot[tx * 3 + key]];
    }
    DagCode run_dag_call(size_t i, const DagCall& call, Bytes& output) const;
    DagCode transfer_between_users(size_t i, const DagCall& call, Slot& user) const;
};

/// Fee caps below this cannot overflow 256 bits times a 64-bit gas limit.
const u256 kSafeFeeCap = u256{1} << 192;

std::optional<ExecErrorCode> TxRunner::run(size_t i) const {
    const tx::Transaction& t = m_block.txs[i];
    const Plan& plan = m_plans[i];
    Slot& sender = slot(i, 0);
    if (t.nonce != sender.account.nonce) return ExecErrorCode::nonce_mismatch;
    // Stage 2 proved gas_limit × max fee fits 256 bits (tx::validate's fee_cap_overflow), but a
    // block a library user assembled may have skipped it, and a wrapped product would let a
    // sender pay nearly nothing: a cost past 2^256 is more than any balance. A fee cap below
    // 2^192 cannot overflow with a 64-bit gas limit (kSafeFeeCap), so a real block pays one
    // comparison.
    if (t.max_fee_per_gas >= kSafeFeeCap && !checked_mul(u256{t.gas_limit}, t.max_fee_per_gas))
        return ExecErrorCode::insufficient_balance;
    const u256 max_cost = u256{t.gas_limit} * t.max_fee_per_gas;
    const auto upfront = checked_add(max_cost, t.value);
    if (!upfront || sender.account.balance < *upfront) return ExecErrorCode::insufficient_balance;

    const bool moves_value =
        plan.kind == TxKind::transfer && t.value != 0 && *t.to != m_block.senders[i];
    Slot* recipient = nullptr;
    if (moves_value) {
        recipient = &slot(i, 1);
        if (!checked_add(recipient->account.balance, t.value))
            return ExecErrorCode::balance_overflow;
    }

    // Valid: from here on the transaction only succeeds or fails with a receipt.
    const u256 fee = u256{plan.gas_used} * tx::effective_gas_price(t, m_config.base_fee);
    sender.exists = true;
    sender.account.nonce += 1;
    sender.account.balance -= fee;
    Receipt& r = m_receipts[i];
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
        case TxKind::dag_call:
            r.status = true;
            run_dag_call(i, plan.call, r.output);
            break;
        case TxKind::failed_call:
        case TxKind::creation: r.status = false; break;
    }
    return std::nullopt;
}

/// userAdd, userSave and userDraw on the user's slot (an amount is checked before the table, as
/// FISCO BCOS does).
DagCode add_user(Slot& user, const u256& amount) {
    if (user.exists) return DagCode::user_exists;
    user.exists = true;
    user.account.balance = amount;
    return DagCode::ok;
}

DagCode save_to_user(Slot& user, const u256& amount) {
    if (amount == 0) return DagCode::invalid_amount;
    if (!user.exists) {
        user.exists = true;
        user.account.balance = amount;
        return DagCode::ok;
    }
    const auto sum = checked_add(user.account.balance, amount);
    if (!sum) return DagCode::overflow;
    user.account.balance = *sum;
    return DagCode::ok;
}

DagCode draw_from_user(Slot& user, const u256& amount) {
    if (amount == 0) return DagCode::invalid_amount;
    if (!user.exists) return DagCode::user_not_found;
    if (user.account.balance < amount) return DagCode::insufficient_balance;
    user.account.balance -= amount;
    return DagCode::ok;
}

DagCode TxRunner::run_dag_call(size_t i, const DagCall& call, Bytes& output) const {
    // The checks in the order of FISCO BCOS 2.x's DagTransferPrecompiled: the names, then the
    // amount, then the table (docs/formats.md, "DagTransfer precompile"). userBalance answers a
    // balance beside the code, every other function the code alone.
    const bool answers_balance = call.function == DagFunction::user_balance;
    if (!has_valid_names(call)) {
        output = answers_balance ? encode_return(DagCode::invalid_user_name, 0)
                                 : encode_return(DagCode::invalid_user_name);
        return DagCode::invalid_user_name;
    }
    // Keys: 0 = sender, 1 = call.user, 2 = call.to (userTransfer with distinct users); a call
    // with an invalid name has none of its own, so its slots are looked up only from here on.
    Slot& user = slot(i, 1);
    if (answers_balance) {
        const DagCode code = user.exists ? DagCode::ok : DagCode::user_not_found;
        output = encode_return(code, user.exists ? user.account.balance : u256{0});
        return code;
    }
    DagCode code = DagCode::ok;
    switch (call.function) {
        case DagFunction::user_add: code = add_user(user, call.amount); break;
        case DagFunction::user_save: code = save_to_user(user, call.amount); break;
        case DagFunction::user_draw: code = draw_from_user(user, call.amount); break;
        case DagFunction::user_transfer: code = transfer_between_users(i, call, user); break;
        case DagFunction::user_balance: break;  // answered above
    }
    output = encode_return(code);
    return code;
}

DagCode TxRunner::transfer_between_users(size_t i, const DagCall& call, Slot& user) const {
    if (call.amount == 0) return DagCode::invalid_amount;
    if (call.user == call.to) return DagCode::ok;
    if (!user.exists) return DagCode::user_not_found;
    if (user.account.balance < call.amount) return DagCode::insufficient_balance;
    // FISCO creates an absent receiver at 0 before its overflow check; 0 + amount cannot
    // overflow, so a receiver is created only by a transfer that succeeds.
    Slot& to = slot(i, 2);
    const auto sum = checked_add(to.exists ? to.account.balance : u256{0}, call.amount);
    if (!sum) return DagCode::overflow;
    user.account.balance -= call.amount;
    to.exists = true;
    to.account.balance = *sum;
    return DagCode::ok;
}

/// The schedule that runs: serial on one thread; `automatic` resolved by the DAG's shape.
Schedule choose_schedule(Schedule requested, bool parallel, const DagStats& dag) noexcept {
    if (!parallel) return Schedule::serial;
    if (requested != Schedule::automatic) return requested;
    // A DAG without width gains nothing from threads and would pay for the scheduling.
    return dag.levels * 2 > dag.transactions ? Schedule::serial : Schedule::dynamic;
}

/// Schedule::levels: level by level, block order inside a level.
template <class Body>
void run_levels(const Dag& dag, Body&& body) {
    const size_t n = dag.size();
    const size_t levels = dag.stats.levels;
    // Bucket the transactions by level, keeping block order inside a level.
    std::vector<uint32_t> begin(levels + 1, 0);
    for (uint32_t l : dag.level) ++begin[l + 1];
    for (size_t l = 0; l < levels; ++l) begin[l + 1] += begin[l];
    std::vector<uint32_t> order(n);
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (uint32_t i = 0; i < n; ++i) order[fill[dag.level[i]]++] = i;
    for (size_t l = 0; l < levels; ++l)
        for_each_index(begin[l + 1] - begin[l], true, [&](size_t k) { body(order[begin[l] + k]); });
}

/// Schedule::dynamic: a ready queue, each transaction fed once its last predecessor has run.
template <class Body>
void run_dynamic(const Dag& dag, Body&& body) {
    const size_t n = dag.size();
    std::vector<std::atomic<uint32_t>> pending(n);
    std::vector<uint32_t> ready;
    for (size_t i = 0; i < n; ++i) {
        const auto preds = static_cast<uint32_t>(dag.preds_of(i).size());
        pending[i].store(preds, std::memory_order_relaxed);
        if (preds == 0) ready.push_back(static_cast<uint32_t>(i));
    }
    tbb::parallel_for_each(ready.begin(), ready.end(),
                           [&](uint32_t i, tbb::feeder<uint32_t>& feeder) {
                               // Acquire what every predecessor released when it decremented this
                               // counter; the hand-over through TBB's queue alone would be
                               // invisible to ThreadSanitizer.
                               (void)pending[i].load(std::memory_order_acquire);
                               body(i);
                               for (uint32_t s : dag.succs_of(i))
                                   if (pending[s].fetch_sub(1, std::memory_order_acq_rel) == 1)
                                       feeder.add(s);
                           });
}

/// Runs the first `runnable` transactions under `schedule` (the rest only pass through); returns
/// the lowest-index one that is invalid, if any. Because invalid transactions change nothing and
/// the DAG orders conflicting ones, that is the one serial execution finds first.
std::optional<ExecError> run_transactions(const TxRunner& runner, const Dag& dag, Schedule schedule,
                                          size_t runnable) {
    LowestIndex bad{runnable};
    std::vector<ExecErrorCode> errors(runnable);
    auto run_one = [&](size_t i) {
        if (i >= runnable || bad.beyond(i)) return;
        if (auto e = runner.run(i)) {
            errors[i] = *e;
            bad.record(i);
        }
    };
    switch (schedule) {
        case Schedule::automatic:
        case Schedule::serial:
            for (size_t i = 0; i < runnable; ++i) run_one(i);
            break;
        case Schedule::levels: run_levels(dag, run_one); break;
        case Schedule::dynamic: run_dynamic(dag, run_one); break;
    }
    if (!bad.any()) return std::nullopt;
    return ExecError{errors[bad.lowest()], bad.lowest()};
}

// ---- step 5: finish ----------------------------------------------------------------------------

/// receipt_hash of each receipt, four per keccak permutation.
void hash_receipts(std::span<const Hash> tx_hashes, std::span<const Receipt> receipts,
                   bool parallel, std::span<Hash> hashes) {
    for_each_group(receipts.size(), 4, parallel, [&](size_t begin, size_t end) {
        thread_local Bytes encodings[4];
        BytesView views[4];
        for (size_t i = begin; i < end; ++i) {
            Bytes& e = encodings[i - begin];
            e.clear();
            encode_receipt(e, tx_hashes[i], receipts[i]);
            views[i - begin] = e;
        }
        keccak256_many(std::span{views, end - begin}, hashes.subspan(begin, end - begin));
    });
}

/// The block's fees. Every transaction ran (the block is valid), so each fee is its gas times its
/// price and fits (its sender paid it); their sum need not.
std::optional<u256> sum_fees(const block::Block& block, std::span<const Receipt> receipts,
                             const ChainConfig& config) noexcept {
    u256 fees = 0;
    for (size_t i = 0; i < receipts.size(); ++i) {
        const auto sum =
            checked_add(fees, u256{receipts[i].gas_used} *
                                  tx::effective_gas_price(block.txs[i], config.base_fee));
        if (!sum) return std::nullopt;
        fees = *sum;
    }
    return fees;
}

/// The write set: every key whose value differs from the parent's, already in key order, with
/// `fees` credited to the coinbase; balance_overflow if the coinbase's balance would overflow, or
/// the read failure of the coinbase's parent account.
Expected<state::WriteSet, ExecErrorCode> collect_writes(const Dag& dag, const Loaded& loaded,
                                                        const Address& coinbase, const u256& fees,
                                                        const state::StateReader& parent) {
    auto changed = [](const Slot& slot) {
        return slot.exists != slot.existed || !(slot.account == slot.original);
    };
    size_t accounts = 0, users = 0;
    for (uint32_t s : loaded.key_order) {
        if (!changed(loaded.slots[s])) continue;
        ++(dag.slots[s].kind == KeyKind::account ? accounts : users);
    }
    state::WriteSet writes;
    writes.accounts.reserve(accounts + 1);  // + the coinbase
    writes.accounts_before.reserve(accounts + 1);
    writes.users.reserve(users);
    writes.users_before.reserve(users);
    for (uint32_t s : loaded.key_order) {
        const Slot& slot = loaded.slots[s];
        if (!changed(slot)) continue;
        const ConflictKey& key = dag.slots[s];
        if (key.kind == KeyKind::account) {
            writes.accounts.emplace_back(Address::from_view(as_bytes(key.bytes)), slot.account);
            writes.accounts_before.push_back(slot.existed ? std::optional{slot.original}
                                                          : std::nullopt);
        } else {
            writes.users.emplace_back(std::string{key.bytes}, slot.account.balance);
            writes.users_before.push_back(slot.existed ? std::optional{slot.original.balance}
                                                       : std::nullopt);
        }
    }
    // Fees reach the coinbase once, after every transaction, so they never serialise the DAG.
    if (fees != 0) {
        auto& written = writes.accounts;
        auto it = std::lower_bound(written.begin(), written.end(), coinbase,
                                   [](const auto& e, const Address& a) { return e.first < a; });
        if (it == written.end() || it->first != coinbase) {
            const auto before = parent.account(coinbase);
            if (!before) return unexpected(read_failure(before.error().code));
            // Appended, then rotated into the coinbase's place (vector::insert of an optional
            // trips GCC 12's -Wmaybe-uninitialized at -O1 under TSan).
            const auto at = it - written.begin();
            auto& befores = writes.accounts_before;
            befores.push_back(*before);
            std::rotate(befores.begin() + at, befores.end() - 1, befores.end());
            it = written.emplace(it, coinbase, before->value_or(state::Account{}));
        }
        const auto credited = checked_add(it->second.balance, fees);
        if (!credited) return unexpected(ExecErrorCode::balance_overflow);
        it->second.balance = *credited;
    }
    return writes;
}

/// Fills the outcome's receipt hashes and roots, fees, write set and state root from the receipts
/// and the slots after the run; balance_overflow (at the last transaction) if the fees cannot be
/// credited.
Expected<void, ExecError> finish(const block::Block& block, const Dag& dag, const Loaded& loaded,
                                 const state::StateReader& parent,
                                 const state::Lattice& parent_lattice, const ChainConfig& config,
                                 bool parallel, bool commitment, Outcome& out) {
    // Two independent chains: receipt hashes → receipts root, and write set → lattice → state
    // root. Both are parallel inside; side by side, each fills the other's idle moments.
    auto receipts_root = [&] {
        out.receipt_hashes.resize(out.receipts.size());
        hash_receipts(block.tx_hashes, out.receipts, parallel, out.receipt_hashes);
        out.receipts_root = block::merkle_root(out.receipt_hashes, parallel);
    };
    std::optional<ExecErrorCode> failed;
    auto state_root = [&] {
        const auto fees = sum_fees(block, out.receipts, config);
        if (!fees) {
            failed = ExecErrorCode::balance_overflow;
            return;
        }
        auto writes = collect_writes(dag, loaded, block.header->coinbase, *fees, parent);
        if (!writes) {
            failed = writes.error();
            return;
        }
        out.fees = *fees;
        out.writes = std::move(*writes);
        out.lattice =
            commitment ? state::next_lattice(parent_lattice, out.writes, parallel) : parent_lattice;
        out.state_root = out.lattice.root();
    };
    both(parallel, receipts_root, state_root);
    const size_t n = block.size();
    if (failed == ExecErrorCode::balance_overflow)
        return unexpected(ExecError{ExecErrorCode::balance_overflow, n == 0 ? 0 : n - 1});
    if (failed) return unexpected(ExecError{*failed, 0});
    return {};
}

}  // namespace

Expected<Outcome, ExecError> execute(const block::Block& block, const state::StateReader& parent,
                                     const state::Lattice& parent_lattice,
                                     const ChainConfig& config, const ExecOptions& options) {
    if (!block.header) return unexpected(ExecError{ExecErrorCode::missing_header, 0});
    const size_t n = block.size();
    // A block a library user assembled by hand may lack what stages 1 and 2 fill in.
    if (block.senders.size() != n || block.tx_hashes.size() != n)
        return unexpected(ExecError{ExecErrorCode::missing_senders, 0});
    const bool parallel =
        options.schedule != Schedule::serial && tbb::this_task_arena::max_concurrency() > 1;
    Outcome out;
    out.receipts.resize(n);

    // 1. Plan first, on every thread: beside the transactions root below, the root's hashing
    //    would hold the second thread while the first planned alone.
    const BlockPlan plan = plan_block(block, parallel);

    // 2. Static checks and the DAG. The transactions root depends on nothing that execution
    //    computes: it is hashed beside this serial part of planning.
    StaticChecks checked;
    Dag dag;
    std::vector<Slot> slots;
    both(
        parallel,
        [&] {
            checked = check_static(block, plan.txs, config, out.receipts);
            dag = build_dag(plan.keys);
            // Zeroed here, beside the root's hashing, rather than on load's serial path.
            slots.resize(dag.slots.size());
        },
        [&] { out.txs_root = block::merkle_root(block.tx_hashes, parallel); });
    out.gas_used = checked.gas_used;

    // 3. Load every key's parent value, before any transaction runs.
    auto loaded_or = load(parent, dag, std::move(slots), parallel);
    if (!loaded_or) return unexpected(loaded_or.error());
    Loaded& loaded = *loaded_or;

    // 4. Run the transactions before the statically rejected one, if any: an invalid one among
    //    them has the lower index, so it is the error to report; else the static one is.
    out.dag = dag.stats;
    out.dag.used = choose_schedule(options.schedule, parallel, dag.stats);
    const TxRunner runner{block, plan.txs, dag, loaded.slots, config, out.receipts};
    if (auto e = run_transactions(runner, dag, out.dag.used, checked.runnable(n)))
        return unexpected(*e);
    if (checked.rejected) return unexpected(*checked.rejected);

    // 5. Finish.
    if (auto done = finish(block, dag, loaded, parent, parent_lattice, config, parallel,
                           options.commitment, out);
        !done)
        return unexpected(done.error());
    return out;
}

uint64_t gas_used(const tx::Transaction& tx) noexcept {
    if (tx.is_creation()) return tx.gas_limit;
    if (*tx.to == kDagTransferAddress && (tx.value != 0 || !decode_call(tx.data)))
        return tx.gas_limit;  // a failed call
    return tx::intrinsic_gas(tx);
}

}  // namespace barrel::exec
