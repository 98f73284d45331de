// The transaction pool (barrel/pool/pool.hpp): admission in two steps (parallel and lock-free,
// then serial under the lock), per-sender nonce lists, block selection and the update after a
// committed block.

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/pool/pool.hpp>

#include "core/parallel.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <queue>
#include <shared_mutex>
#include <unordered_map>

namespace barrel::pool {

std::string_view to_string(RejectCode code) noexcept {
    switch (code) {
        case RejectCode::malformed: return "malformed";
        case RejectCode::oversized: return "oversized";
        case RejectCode::invalid: return "invalid";
        case RejectCode::invalid_sender: return "invalid_sender";
        case RejectCode::exceeds_block_gas_limit: return "exceeds_block_gas_limit";
        case RejectCode::fee_cap_below_base_fee: return "fee_cap_below_base_fee";
        case RejectCode::already_known: return "already_known";
        case RejectCode::nonce_too_low: return "nonce_too_low";
        case RejectCode::nonce_too_high: return "nonce_too_high";
        case RejectCode::insufficient_funds: return "insufficient_funds";
        case RejectCode::replacement_underpriced: return "replacement_underpriced";
        case RejectCode::account_limit: return "account_limit";
        case RejectCode::pool_full: return "pool_full";
        case RejectCode::state_unreadable: return "state_unreadable";
        case RejectCode::unprotected: return "unprotected";
    }
    return "unknown";
}

namespace {

Unexpected<Rejection> reject(RejectCode code, std::string message) {
    return unexpected(Rejection{code, std::move(message)});
}

constexpr std::string_view kInsufficientFunds = "insufficient funds for gas * price + value";

/// go-ethereum's words for a transaction that fails a stateless rule.
Rejection stateless_rejection(const tx::TxError& e, const tx::Transaction& t, uint64_t chain_id) {
    using tx::TxErrorCode;
    switch (e.code) {
        case TxErrorCode::malformed_rlp:
        case TxErrorCode::too_few_fields:
        case TxErrorCode::too_many_fields:
            return {RejectCode::malformed, "rlp: " + tx::describe(e)};
        case TxErrorCode::unsupported_type:
            return {RejectCode::malformed, "transaction type not supported"};
        case TxErrorCode::invalid_v:
        case TxErrorCode::invalid_signature:
        case TxErrorCode::high_s:
        case TxErrorCode::recovery_failed:
            return {RejectCode::invalid_sender,
                    "invalid sender: invalid transaction v, r, s values"};
        case TxErrorCode::wrong_chain_id:
            return {RejectCode::invalid_sender,
                    "invalid sender: invalid chain id for signer: have " +
                        std::to_string(t.chain_id.value_or(0)) + " want " +
                        std::to_string(chain_id)};
        case TxErrorCode::nonce_too_big: return {RejectCode::invalid, "nonce has max value"};
        case TxErrorCode::intrinsic_gas_too_low:
            return {RejectCode::invalid, "intrinsic gas too low: gas " +
                                             std::to_string(t.gas_limit) + ", minimum needed " +
                                             std::to_string(tx::intrinsic_gas(t))};
        case TxErrorCode::fee_cap_overflow:
            return {RejectCode::insufficient_funds,
                    std::string{kInsufficientFunds} + ": tx cost does not fit 256 bits"};
        case TxErrorCode::priority_fee_above_cap:
            return {RejectCode::invalid, "max priority fee per gas higher than max fee per gas"};
        case TxErrorCode::init_code_too_large:
            return {RejectCode::invalid, "max initcode size exceeded: code size " +
                                             std::to_string(t.data.size()) + " limit " +
                                             std::to_string(tx::kMaxInitCodeSize)};
    }
    return {RejectCode::invalid, tx::describe(e)};
}

/// How many encodings one task of admission's parallel step prepares together: keccak256_many's
/// width, so that their hashes, signing hashes and recovered keys are hashed four at a time.
constexpr size_t kPrepareGroup = 4;

/// What the parallel step of admission learned about one encoding.
struct Prepared {
    std::optional<Rejection> rejection;
    std::shared_ptr<PooledTx> tx;
    /// The sender's account as read before the lock, and the pool's block epoch then: valid
    /// under the lock only if no block was committed in between.
    state::ReadResult<state::Account> account{std::optional<state::Account>{}};
    uint64_t epoch{0};
    TxPtr admitted;  ///< set by insert() when admitted
};

/// The most a transaction can take from its sender, or nullopt if that does not fit 256 bits.
std::optional<u256> cost_of(const tx::Transaction& t) {
    const auto fees = checked_mul(u256{t.gas_limit}, t.max_fee_per_gas);
    if (!fees) return std::nullopt;
    return checked_add(*fees, t.value);
}

/// `old` × (100 + percent) / 100, which a replacement's fee must reach.
u256 bumped(const u256& old, unsigned percent) {
    const u512 wide = u512{old} * (100 + percent) / 100;
    return wide > u512{std::numeric_limits<u256>::max()} ? std::numeric_limits<u256>::max()
                                                         : static_cast<u256>(wide);
}

// ---- The pool's state ------------------------------------------------------------------------

/// Where a pooled transaction is: in a block being built (taken), pending, or queued. Pending
/// and queued ones are in the price indexes, queued ones in the age index too.
enum class Where : uint8_t { none, taken, pending, queued };

struct Slot {
    TxPtr tx;
    Where where{Where::none};
};

/// The eviction order: the lowest effective tip first, then the latest arrival (the one that
/// has waited least loses a tie).
struct PriceKey {
    u256 tip;
    uint64_t sequence{0};
    bool operator<(const PriceKey& o) const noexcept {
        if (tip != o.tip) return tip < o.tip;
        return sequence > o.sequence;
    }
};
using PriceIndex = std::map<PriceKey, const PooledTx*>;

/// One sender's pooled transactions and the account they are checked against.
struct Sender {
    uint64_t nonce{0};  ///< the account's nonce at the last committed block the pool saw
    u256 balance;
    std::map<uint64_t, Slot>
        txs;                  ///< by nonce: taken, pending (from `nonce` without a gap), queued
    u256 total_cost;          ///< sum of the costs of `txs` (never above 2^256 − 1: checked)
    uint64_t pending_end{0};  ///< first nonce from `nonce` on that the pool does not hold
    uint64_t taken_end{0};    ///< nonces [nonce, taken_end) are in blocks being built

    size_t pending() const noexcept { return static_cast<size_t>(pending_end - nonce); }
    size_t queued() const noexcept { return txs.size() - pending(); }
    Where class_of(uint64_t n) const noexcept {
        return n < taken_end ? Where::taken : n < pending_end ? Where::pending : Where::queued;
    }
    void update_pending_end() {
        pending_end = nonce;
        extend_pending_end();
    }
    /// update_pending_end after an insert, which can only close the gap at pending_end: the
    /// walk starts there, not at `nonce` (from `nonce` it made admitting a sender's k-th
    /// transaction cost k steps: 3 % of a validator's CPU at 100 per sender).
    void extend_pending_end() {
        for (auto it = txs.find(pending_end); it != txs.end() && it->first == pending_end; ++it)
            ++pending_end;
    }
};

/// What left the pool with one recent block, for readers whose snapshot is older.
struct Departed {
    uint64_t block{0};
    std::vector<TxPtr> txs;
};

struct SenderNonce {
    Address sender;
    uint64_t nonce{0};
    bool operator==(const SenderNonce&) const = default;
};
struct SenderNonceHasher {
    size_t operator()(const SenderNonce& k) const noexcept {
        return FixedBytesHasher{}(k.sender) ^ (k.nonce * 0x9e3779b97f4a7c15ull);
    }
};

}  // namespace

struct Pool::Impl {
    Config config;
    const state::StateReader& state;
    block::SenderCache* cache;

    mutable std::shared_mutex mutex;  // guards everything below
    std::unordered_map<Hash, TxPtr, FixedBytesHasher> by_hash;
    std::unordered_map<Address, Sender, FixedBytesHasher> senders;
    size_t pending{0};  ///< transactions in [nonce, pending_end) of every sender, taken included
    PriceIndex pending_index;                        ///< pending and not taken
    PriceIndex queued_index;                         ///< queued
    std::map<uint64_t, const PooledTx*> queued_age;  ///< queued, by sequence (= admission time)
    uint64_t next_sequence{0};
    /// Counts committed blocks; admission's state reads before the lock are tagged with it.
    std::atomic<uint64_t> epoch{0};

    /// What left with the last Config::recent_blocks blocks, by hash and by sender and nonce
    /// (the block it left with, the latest if twice).
    std::deque<Departed> recent;
    std::unordered_map<Hash, std::pair<uint64_t, TxPtr>, FixedBytesHasher> recent_by_hash;
    std::unordered_map<SenderNonce, uint64_t, SenderNonceHasher> recent_by_nonce;
    /// While committed() runs: where remove() records what leaves.
    std::vector<TxPtr>* departing{nullptr};

    JournalWriter* journal{nullptr};
    size_t journal_entries{0};

    Impl(const Config& c, const state::StateReader& s, block::SenderCache* sc)
        : config{c}, state{s}, cache{sc} {}

    std::chrono::steady_clock::time_point now() const {
        return config.clock ? config.clock() : std::chrono::steady_clock::now();
    }
    size_t queued() const noexcept { return by_hash.size() - pending; }

    /// The parallel step of admission for up to kPrepareGroup encodings: everything that needs
    /// no lock but the shared one, recovery included.
    void prepare(std::span<const BytesView> encodings, std::span<const Hash> hashes, Origin origin,
                 Unprotected unprotected, std::span<Prepared> out) const;
    /// The transactions of a group still in the running after a step of prepare(): their
    /// indexes in the group, in order.
    struct Live {
        std::array<size_t, kPrepareGroup> index{};
        size_t count{0};
    };
    /// Copies the encodings within the size bound into new pooled transactions and decodes
    /// them there (the only decoding of a transaction on its way into the pool), refusing
    /// unprotected ones when asked.
    Live copy_and_decode(std::span<const BytesView> encodings, Origin origin,
                         Unprotected unprotected, std::span<Prepared> out) const;
    /// Hashes the group together and rejects those the pool holds (one shared lock per group);
    /// or takes the hashes the caller `given`, who looked them up already (Pool::admit).
    void hash_and_look_up(const Live& live, std::span<const Hash> hashes,
                          std::span<Prepared> out) const;
    /// check_stateless() of each transaction not rejected yet: those that pass.
    Live check_stateless(const Live& live, std::span<Prepared> out) const;
    /// Recovers the group's senders together, caches them and reads their accounts.
    void recover_and_read(const Live& live, std::span<Prepared> out) const;
    /// The stateless rules of one decoded transaction, its hash set: why it is rejected, if it
    /// is; else its cost and tip set.
    std::optional<Rejection> check_stateless(PooledTx& ptx) const;
    /// The serial step of admission, under the lock: the checks against the sender's pooled
    /// transactions and the pool's bounds, then the transaction held.
    AdmitResult insert(Prepared& p, std::chrono::steady_clock::time_point now);
    /// What a transaction that passes admission's checks evicts to fit: pending transactions of
    /// other senders (with their later nonces), or one queued transaction of another sender.
    struct Room {
        std::vector<const PooledTx*> pending_victims;
        const PooledTx* queued_victim{nullptr};
    };
    /// The checks of insert(), in the order their rejections are reported: nonce, balance, then
    /// as a replacement or as a new nonce.
    Expected<Room, Rejection> room_for(const Sender& s, const PooledTx& ptx) const;
    std::optional<Rejection> check_replacement(const Sender& s, const PooledTx& old,
                                               const PooledTx& ptx) const;
    Expected<Room, Rejection> room_for_new_nonce(const Sender& s, const PooledTx& ptx) const;
    Expected<Room, Rejection> room_in_pending(const Sender& s, const PooledTx& ptx) const;
    Expected<Room, Rejection> room_in_queued(const Sender& s, const PooledTx& ptx) const;
    void make_room(const Room& room);
    /// Holds an admitted transaction (in place of the one at its nonce, if any) and places it
    /// and the sender's transactions whose class it changed.
    Admitted hold(Sender& held, Prepared& p, std::chrono::steady_clock::time_point now);
    Expected<Sender, Rejection> sender_for_new(const Prepared& p) const;
    /// Pending transactions of other senders than `sender`, each cheaper than `tip`, whose
    /// eviction (with their senders' later nonces) frees `needed` pending slots; empty if there
    /// are not enough.
    std::vector<const PooledTx*> pending_victims(const Address& sender, const u256& tip,
                                                 size_t needed) const;

    void place(Slot& slot, Where to);
    /// Places the transactions whose class may have changed since `s` had these ends.
    void reclassify(Sender& s, uint64_t old_taken_end, uint64_t old_pending_end);
    void remove(Sender& s, std::map<uint64_t, Slot>::iterator it);
    /// Removes `sender`'s transactions from `nonce` on, and the sender if none is left.
    // By value: the address is often a removed transaction's own member, which the removal
    // may free.
    void remove_from(Address sender, uint64_t nonce);
    void erase_if_empty(Address address);
    void refresh(const Address& address, Sender& s, const state::Account& account);
    /// Evicts the cheapest until pending and queued are within their bounds again (after a
    /// block or a drop moved transactions between them), and the furthest queued nonces of
    /// `demoted` past its own queue bound.
    void trim(const Address* demoted = nullptr);
    void expire(std::chrono::steady_clock::time_point now);
    void remember(uint64_t block, std::vector<TxPtr> departed);
    std::vector<TxPtr> all() const;
    std::vector<TxPtr> local() const {
        std::vector<TxPtr> out = all();
        std::erase_if(out, [](const TxPtr& t) { return t->origin != Origin::local; });
        return out;
    }
};

void Pool::Impl::prepare(std::span<const BytesView> encodings, std::span<const Hash> hashes,
                         Origin origin, Unprotected unprotected, std::span<Prepared> out) const {
    // Each step runs over the group's transactions that passed the one before, in the order of
    // a single transaction's checks, so that hashing and recovery can take the group together.
    const size_t n = std::min(encodings.size(), kPrepareGroup);
    Live live = copy_and_decode(encodings.first(n), origin, unprotected, out);
    hash_and_look_up(live, hashes.first(std::min(hashes.size(), n)), out);
    live = check_stateless(live, out);
    recover_and_read(live, out);
    // Rejected transactions hold nothing: insert() looks at the rejection alone.
    for (size_t i = 0; i < n; ++i)
        if (out[i].rejection) out[i].tx.reset();
}

Pool::Impl::Live Pool::Impl::copy_and_decode(std::span<const BytesView> encodings, Origin origin,
                                             Unprotected unprotected,
                                             std::span<Prepared> out) const {
    Live live;
    for (size_t i = 0; i < encodings.size(); ++i) {
        const BytesView encoding = encodings[i];
        if (encoding.size() > config.max_transaction_bytes) {
            out[i].rejection =
                Rejection{RejectCode::oversized, "oversized data: transaction size " +
                                                     std::to_string(encoding.size()) + ", limit " +
                                                     std::to_string(config.max_transaction_bytes)};
            continue;
        }
        auto ptx = std::make_shared<PooledTx>();
        ptx->encoding.assign(encoding.begin(), encoding.end());
        ptx->origin = origin;
        // Decoded where it is kept: the calldata views the encoding, which never moves again.
        auto decoded = tx::decode(ptx->encoding);
        if (!decoded) {
            out[i].rejection = stateless_rejection(decoded.error(), {}, config.chain_id);
            continue;
        }
        ptx->tx = std::move(decoded).value();
        // Before the look-up: go-ethereum's RPC refuses it before its pool is asked.
        if (unprotected == Unprotected::refused && !ptx->tx.chain_id) {
            out[i].rejection =
                Rejection{RejectCode::unprotected,
                          "only replay-protected (EIP-155) transactions allowed over RPC"};
            continue;
        }
        out[i].tx = std::move(ptx);
        live.index[live.count++] = i;
    }
    return live;
}

void Pool::Impl::hash_and_look_up(const Live& live, std::span<const Hash> given,
                                  std::span<Prepared> out) const {
    if (!given.empty()) {
        for (size_t k = 0; k < live.count; ++k) out[live.index[k]].tx->hash = given[live.index[k]];
        return;
    }
    std::array<BytesView, kPrepareGroup> views;
    std::array<Hash, kPrepareGroup> hashes;
    for (size_t k = 0; k < live.count; ++k) views[k] = out[live.index[k]].tx->encoding;
    keccak256_many(std::span{views}.first(live.count), hashes);  // tx::hash_of, four at a time
    std::shared_lock lock{mutex};
    for (size_t k = 0; k < live.count; ++k) {
        out[live.index[k]].tx->hash = hashes[k];
        if (by_hash.contains(hashes[k]))
            out[live.index[k]].rejection = Rejection{RejectCode::already_known, "already known"};
    }
}

Pool::Impl::Live Pool::Impl::check_stateless(const Live& live, std::span<Prepared> out) const {
    Live passed;
    for (size_t k = 0; k < live.count; ++k) {
        Prepared& p = out[live.index[k]];
        if (p.rejection) continue;
        if (auto rejection = check_stateless(*p.tx)) {
            p.rejection = std::move(rejection);
            continue;
        }
        passed.index[passed.count++] = live.index[k];
    }
    return passed;
}

void Pool::Impl::recover_and_read(const Live& live, std::span<Prepared> out) const {
    // A sender the cache holds is not recovered again: on a validator, a block's verify stage
    // recovers the transactions it meets before their gossip does (the proposer had them first),
    // and their CheckTx comes after (measured: 10,312 of a 17,926-transaction block, each then
    // recovered twice). The same hash is the same bytes, hence the same sender.
    std::array<const tx::Transaction*, kPrepareGroup> to_recover;
    std::array<size_t, kPrepareGroup> recovering;  // live positions of to_recover's entries
    std::array<Expected<Address, tx::TxError>, kPrepareGroup> recovered;
    size_t misses = 0;
    for (size_t k = 0; k < live.count; ++k) {
        const PooledTx& ptx = *out[live.index[k]].tx;
        if (const auto known = cache ? cache->peek(ptx.hash) : std::nullopt) {
            recovered[k] = *known;
            continue;
        }
        to_recover[misses] = &ptx.tx;
        recovering[misses++] = k;
    }
    std::array<Expected<Address, tx::TxError>, kPrepareGroup> fresh;
    tx::recover_senders(std::span{to_recover}.first(misses), fresh);
    for (size_t j = 0; j < misses; ++j) {
        recovered[recovering[j]] = fresh[j];
        // Recovered once, here: the verify stage of the block that includes it finds it cached.
        if (fresh[j] && cache) cache->insert(out[live.index[recovering[j]]].tx->hash, *fresh[j]);
    }
    for (size_t k = 0; k < live.count; ++k) {
        Prepared& p = out[live.index[k]];
        if (!recovered[k]) {
            p.rejection = stateless_rejection(recovered[k].error(), p.tx->tx, config.chain_id);
            continue;
        }
        p.tx->sender = *recovered[k];
        p.epoch = epoch.load(std::memory_order_acquire);
        p.account = state.account(p.tx->sender);
    }
}

std::optional<Rejection> Pool::Impl::check_stateless(PooledTx& ptx) const {
    const tx::Transaction& t = ptx.tx;
    if (t.gas_limit > config.block_gas_limit)
        return Rejection{RejectCode::exceeds_block_gas_limit, "exceeds block gas limit"};
    if (auto valid = tx::validate(t, config.chain_id); !valid)
        return stateless_rejection(valid.error(), t, config.chain_id);
    // Every type: a legacy or EIP-2930 gas price (held in max_fee_per_gas) below the base fee
    // could never be included either (DESIGN, "Execution semantics").
    if (t.max_fee_per_gas < config.base_fee)
        return Rejection{RejectCode::fee_cap_below_base_fee,
                         "max fee per gas less than block base fee: maxFeePerGas: " +
                             to_decimal(t.max_fee_per_gas) +
                             ", baseFee: " + to_decimal(config.base_fee)};
    const auto cost = cost_of(t);
    if (!cost)
        return Rejection{RejectCode::insufficient_funds,
                         std::string{kInsufficientFunds} + ": tx cost does not fit 256 bits"};
    ptx.cost = *cost;
    ptx.tip = tx::effective_tip(t, config.base_fee);
    return std::nullopt;
}

/// The Sender record for an address the pool holds nothing of: from the account read before the
/// lock if no block was committed since, else read again now.
Expected<Sender, Rejection> Pool::Impl::sender_for_new(const Prepared& p) const {
    auto account = p.account;
    if (p.epoch != epoch.load(std::memory_order_acquire)) account = state.account(p.tx->sender);
    if (!account)
        return reject(
            RejectCode::state_unreadable,
            "cannot read the account of " + to_hex(p.tx->sender) + ": " + account.error().message);
    Sender s;
    if (*account) {
        s.nonce = (*account)->nonce;
        s.balance = (*account)->balance;
    }
    s.pending_end = s.taken_end = s.nonce;
    return s;
}

namespace {

Unexpected<Rejection> insufficient(const u256& balance, const u256& pooled, std::string_view what,
                                   const u256& added) {
    // The sum is formed in 512 bits: an overflow of 256 is a rejection like any other.
    const u512 need = u512{pooled} + u512{added};
    const u512 over = need - u512{balance};
    return reject(
        RejectCode::insufficient_funds,
        std::string{kInsufficientFunds} + ": balance " + to_decimal(balance) + ", queued cost " +
            to_decimal(pooled) + ", " + std::string{what} + " " + to_decimal(added) +
            ", overshot " +
            (over > u512{std::numeric_limits<u256>::max()} ? std::string{"more than 2^256"}
                                                           : to_decimal(static_cast<u256>(over))));
}

}  // namespace

std::vector<const PooledTx*> Pool::Impl::pending_victims(const Address& sender, const u256& tip,
                                                         size_t needed) const {
    std::vector<const PooledTx*> victims;
    size_t freed = 0;
    auto frees = [&](const PooledTx& t) {
        return static_cast<size_t>(senders.at(t.sender).pending_end - t.tx.nonce);
    };
    for (auto it = pending_index.begin(); it != pending_index.end() && freed < needed; ++it) {
        const PooledTx& v = *it->second;
        if (!(v.tip < tip)) break;  // the rest pay at least as much as the newcomer
        if (v.sender == sender) continue;
        // A victim of the same sender at a lower nonce takes this one with it; at a higher
        // nonce, this one takes it.
        const auto same = std::find_if(victims.begin(), victims.end(),
                                       [&](const PooledTx* c) { return c->sender == v.sender; });
        if (same != victims.end()) {
            if ((*same)->tx.nonce < v.tx.nonce) continue;
            freed -= frees(**same);
            *same = &v;
        } else {
            victims.push_back(&v);
        }
        freed += frees(v);
    }
    if (freed < needed) victims.clear();
    return victims;
}

Expected<Pool::Impl::Room, Rejection> Pool::Impl::room_for(const Sender& s,
                                                           const PooledTx& ptx) const {
    const tx::Transaction& t = ptx.tx;
    if (t.nonce < s.taken_end)
        return reject(RejectCode::nonce_too_low, "nonce too low: next nonce " +
                                                     std::to_string(s.taken_end) + ", tx nonce " +
                                                     std::to_string(t.nonce));
    if (s.balance < ptx.cost)
        return reject(RejectCode::insufficient_funds,
                      std::string{kInsufficientFunds} + ": balance " + to_decimal(s.balance) +
                          ", tx cost " + to_decimal(ptx.cost) + ", overshot " +
                          to_decimal(ptx.cost - s.balance));
    if (const auto existing = s.txs.find(t.nonce); existing != s.txs.end()) {
        if (auto rejection = check_replacement(s, *existing->second.tx, ptx))
            return unexpected(std::move(*rejection));
        return Room{};
    }
    return room_for_new_nonce(s, ptx);
}

std::optional<Rejection> Pool::Impl::check_replacement(const Sender& s, const PooledTx& old,
                                                       const PooledTx& ptx) const {
    // total_cost − old.cost cannot wrap (old is part of it); adding may pass 2^256.
    const u256 others = s.total_cost - old.cost;
    const auto need = checked_add(others, ptx.cost);
    if (ptx.cost > old.cost && (!need || s.balance < *need))
        return insufficient(s.balance, s.total_cost, "tx bumped", ptx.cost - old.cost).error;
    const tx::Transaction& t = ptx.tx;
    const tx::Transaction& o = old.tx;
    const bool raises = t.max_fee_per_gas > o.max_fee_per_gas &&
                        t.max_priority_fee_per_gas > o.max_priority_fee_per_gas;
    if (!raises || t.max_fee_per_gas < bumped(o.max_fee_per_gas, config.price_bump_percent) ||
        t.max_priority_fee_per_gas < bumped(o.max_priority_fee_per_gas, config.price_bump_percent))
        return Rejection{RejectCode::replacement_underpriced,
                         "replacement transaction underpriced"};
    return std::nullopt;
}

Expected<Pool::Impl::Room, Rejection> Pool::Impl::room_for_new_nonce(const Sender& s,
                                                                     const PooledTx& ptx) const {
    const tx::Transaction& t = ptx.tx;
    const auto need = checked_add(s.total_cost, ptx.cost);
    if (!need || s.balance < *need)
        return insufficient(s.balance, s.total_cost, "tx cost", ptx.cost);
    if (t.nonce > s.pending_end && t.nonce - s.pending_end > config.max_nonce_gap)
        return reject(RejectCode::nonce_too_high,
                      "nonce too high: next nonce " + std::to_string(s.pending_end) +
                          ", tx nonce " + std::to_string(t.nonce) + ", more than " +
                          std::to_string(config.max_nonce_gap) + " ahead");
    if (s.txs.size() >= config.max_per_sender)
        return reject(RejectCode::account_limit,
                      "account limit exceeded: pooled " + std::to_string(s.txs.size()) + " txs");
    return t.nonce == s.pending_end ? room_in_pending(s, ptx) : room_in_queued(s, ptx);
}

Expected<Pool::Impl::Room, Rejection> Pool::Impl::room_in_pending(const Sender& s,
                                                                  const PooledTx& ptx) const {
    // Pending, with the queued transactions whose gap it closes.
    const uint64_t nonce = ptx.tx.nonce;
    size_t promoted = 0;
    for (auto it = s.txs.find(nonce + 1); it != s.txs.end() && it->first == nonce + 1 + promoted;
         ++it)
        ++promoted;
    Room room;
    if (pending + 1 + promoted > config.max_pending) {
        room.pending_victims =
            pending_victims(ptx.sender, ptx.tip, pending + 1 + promoted - config.max_pending);
        if (room.pending_victims.empty()) return reject(RejectCode::pool_full, "txpool is full");
    }
    return room;
}

Expected<Pool::Impl::Room, Rejection> Pool::Impl::room_in_queued(const Sender& s,
                                                                 const PooledTx& ptx) const {
    if (s.queued() >= config.max_queued_per_sender)
        return reject(RejectCode::account_limit,
                      "account limit exceeded: queued " + std::to_string(s.queued()) + " txs");
    Room room;
    if (queued() >= config.max_queued) {
        // A queued newcomer competes with queued transactions only: a nonce gap never pushes
        // out what can execute.
        for (const auto& [key, v] : queued_index) {
            if (!(v->tip < ptx.tip)) break;
            if (v->sender == ptx.sender) continue;
            room.queued_victim = v;
            break;
        }
        if (!room.queued_victim) return reject(RejectCode::pool_full, "txpool is full");
    }
    return room;
}

void Pool::Impl::make_room(const Room& room) {
    for (const PooledTx* v : room.pending_victims) remove_from(v->sender, v->tx.nonce);
    if (room.queued_victim) {
        // Copied first: the removal may free the victim.
        const Address victim = room.queued_victim->sender;
        Sender& vs = senders.at(victim);
        remove(vs, vs.txs.find(room.queued_victim->tx.nonce));
        erase_if_empty(victim);
    }
}

Admitted Pool::Impl::hold(Sender& held, Prepared& p, std::chrono::steady_clock::time_point now) {
    const uint64_t nonce = p.tx->tx.nonce;
    p.tx->sequence = next_sequence++;
    p.tx->arrival_block = epoch.load(std::memory_order_relaxed);
    p.tx->admitted_at = now;
    TxPtr shared = std::move(p.tx);
    const uint64_t old_taken_end = held.taken_end, old_pending_end = held.pending_end;
    const size_t pending_before = held.pending();
    auto [it, added] = held.txs.try_emplace(nonce);
    Slot& slot = it->second;
    if (!added) {  // a replacement: the old transaction leaves every index
        by_hash.erase(slot.tx->hash);
        held.total_cost -= slot.tx->cost;
        place(slot, Where::none);
    }
    slot.tx = shared;
    held.total_cost += shared->cost;  // checked by room_for: no wrap
    by_hash.emplace(shared->hash, shared);
    held.extend_pending_end();
    place(slot, held.class_of(nonce));
    reclassify(held, old_taken_end, old_pending_end);
    pending += held.pending() - pending_before;
    p.admitted = shared;
    return Admitted{shared->hash, shared->sender, shared->tx.gas_limit, nonce < held.pending_end,
                    !added};
}

AdmitResult Pool::Impl::insert(Prepared& p, std::chrono::steady_clock::time_point now) {
    if (p.rejection) return unexpected(*p.rejection);
    const PooledTx& ptx = *p.tx;
    if (by_hash.contains(ptx.hash)) return reject(RejectCode::already_known, "already known");

    auto found = senders.find(ptx.sender);
    std::optional<Sender> fresh;
    if (found == senders.end()) {
        auto s = sender_for_new(p);
        if (!s) return unexpected(s.error());
        fresh = std::move(s).value();
    }
    auto room = room_for(fresh ? *fresh : found->second, ptx);
    if (!room) return unexpected(room.error());
    // Admitted: make room first (other senders only, so `found` stays valid; a fresh sender is
    // not in the map yet).
    make_room(*room);
    if (fresh) found = senders.emplace(ptx.sender, std::move(*fresh)).first;
    return hold(found->second, p, now);
}

void Pool::Impl::place(Slot& slot, Where to) {
    if (slot.where == to) return;
    const PooledTx& t = *slot.tx;
    const PriceKey key{t.tip, t.sequence};
    switch (slot.where) {
        case Where::pending: pending_index.erase(key); break;
        case Where::queued:
            queued_index.erase(key);
            queued_age.erase(t.sequence);
            break;
        case Where::none:
        case Where::taken: break;
    }
    switch (to) {
        case Where::pending: pending_index.emplace(key, &t); break;
        case Where::queued:
            queued_index.emplace(key, &t);
            queued_age.emplace(t.sequence, &t);
            break;
        case Where::none:
        case Where::taken: break;
    }
    slot.where = to;
}

void Pool::Impl::reclassify(Sender& s, uint64_t old_taken_end, uint64_t old_pending_end) {
    auto span = [&](uint64_t a, uint64_t b) {
        for (auto it = s.txs.lower_bound(std::min(a, b));
             it != s.txs.end() && it->first < std::max(a, b); ++it)
            place(it->second, s.class_of(it->first));
    };
    span(old_taken_end, s.taken_end);
    span(old_pending_end, s.pending_end);
}

void Pool::Impl::remove(Sender& s, std::map<uint64_t, Slot>::iterator it) {
    if (departing) departing->push_back(it->second.tx);
    place(it->second, Where::none);
    by_hash.erase(it->second.tx->hash);
    s.total_cost -= it->second.tx->cost;
    s.txs.erase(it);
}

void Pool::Impl::erase_if_empty(Address address) {
    const auto it = senders.find(address);
    if (it != senders.end() && it->second.txs.empty()) senders.erase(it);
}

void Pool::Impl::remove_from(Address address, uint64_t nonce) {
    Sender& s = senders.at(address);
    const uint64_t old_taken_end = s.taken_end, old_pending_end = s.pending_end;
    const size_t pending_before = s.pending();
    for (auto it = s.txs.lower_bound(nonce); it != s.txs.end();) remove(s, it++);
    s.update_pending_end();
    s.taken_end = std::min(s.taken_end, s.pending_end);
    reclassify(s, old_taken_end, old_pending_end);
    pending = pending - pending_before + s.pending();
    erase_if_empty(address);
}

/// Re-checks a sender against its account after a block: what is below the new nonce leaves,
/// and so does everything from the first transaction the balance no longer covers (they could
/// never all execute; what follows it would be gapped).
void Pool::Impl::refresh(const Address& address, Sender& s, const state::Account& account) {
    const uint64_t old_taken_end = s.taken_end, old_pending_end = s.pending_end;
    const size_t pending_before = s.pending();
    s.nonce = account.nonce;
    s.balance = account.balance;
    while (!s.txs.empty() && s.txs.begin()->first < s.nonce) remove(s, s.txs.begin());
    s.taken_end = std::max(s.taken_end, s.nonce);
    u256 spent = 0;
    for (auto it = s.txs.begin(); it != s.txs.end(); ++it) {
        const auto sum = checked_add(spent, it->second.tx->cost);
        // Transactions in a block being built stay: that block is checked when it executes.
        if (it->first >= s.taken_end && (!sum || *sum > s.balance)) {
            while (it != s.txs.end()) remove(s, it++);
            break;
        }
        spent = *sum;
    }
    s.update_pending_end();
    reclassify(s, old_taken_end, old_pending_end);
    pending = pending - pending_before + s.pending();
    if (s.txs.empty()) senders.erase(address);
}

void Pool::Impl::trim(const Address* demoted) {
    // A sender whose later transactions a drop demoted may hold more queued ones than its
    // bound: it loses its furthest nonces. (A block never adds to a queue: it only removes
    // transactions and promotes queued ones.)
    if (demoted)
        if (const auto it = senders.find(*demoted); it != senders.end()) {
            Sender& s = it->second;
            while (s.queued() > config.max_queued_per_sender) remove(s, std::prev(s.txs.end()));
            erase_if_empty(*demoted);
        }
    while (queued() > config.max_queued && !queued_index.empty()) {
        const PooledTx& v = *queued_index.begin()->second;
        Sender& vs = senders.at(v.sender);
        const Address sender = v.sender;
        remove(vs, vs.txs.find(v.tx.nonce));
        erase_if_empty(sender);
    }
    while (pending > config.max_pending && !pending_index.empty()) {
        const PooledTx& v = *pending_index.begin()->second;
        remove_from(Address{v.sender}, v.tx.nonce);
    }
}

void Pool::Impl::expire(std::chrono::steady_clock::time_point now) {
    // Sequence order is admission-time order: the oldest queued transaction is the first.
    while (!queued_age.empty()) {
        const PooledTx& t = *queued_age.begin()->second;
        if (now - t.admitted_at < config.queued_lifetime) break;
        const Address sender = t.sender;
        Sender& s = senders.at(sender);
        remove(s, s.txs.find(t.tx.nonce));  // queued: the ends do not move
        erase_if_empty(sender);
    }
}

void Pool::Impl::remember(uint64_t block, std::vector<TxPtr> departed) {
    for (const TxPtr& t : departed) {
        recent_by_hash[t->hash] = {block, t};
        uint64_t& b = recent_by_nonce[SenderNonce{t->sender, t->tx.nonce}];
        b = std::max(b, block);
    }
    recent.push_back(Departed{block, std::move(departed)});
    while (recent.size() > config.recent_blocks) {
        for (const TxPtr& t : recent.front().txs) {
            const auto h = recent_by_hash.find(t->hash);
            if (h != recent_by_hash.end() && h->second.first == recent.front().block)
                recent_by_hash.erase(h);
            const auto n = recent_by_nonce.find(SenderNonce{t->sender, t->tx.nonce});
            if (n != recent_by_nonce.end() && n->second == recent.front().block)
                recent_by_nonce.erase(n);
        }
        recent.pop_front();
    }
}

std::vector<TxPtr> Pool::Impl::all() const {
    std::vector<std::pair<uint64_t, const Sender*>> keyed;
    keyed.reserve(senders.size());
    for (const auto& [address, s] : senders) {
        uint64_t first = UINT64_MAX;
        for (const auto& [nonce, slot] : s.txs) first = std::min(first, slot.tx->sequence);
        keyed.emplace_back(first, &s);
    }
    std::sort(keyed.begin(), keyed.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<TxPtr> out;
    out.reserve(by_hash.size());
    for (const auto& [arrival, s] : keyed)
        for (const auto& [nonce, slot] : s->txs) out.push_back(slot.tx);
    return out;
}

// ---- Pool ------------------------------------------------------------------------------------

Pool::Pool(const Config& config, const state::StateReader& state, block::SenderCache* cache)
    : m_impl{std::make_unique<Impl>(config, state, cache)} {}

Pool::~Pool() = default;

std::vector<AdmitResult> Pool::admit(std::span<const BytesView> encodings, Origin origin,
                                     std::span<const Hash> hashes, Unprotected unprotected) {
    std::vector<Prepared> prepared(encodings.size());
    for_each_group(encodings.size(), kPrepareGroup, true, [&](size_t begin, size_t end) {
        m_impl->prepare(encodings.subspan(begin, end - begin),
                        hashes.empty() ? hashes : hashes.subspan(begin, end - begin), origin,
                        unprotected, std::span{prepared}.subspan(begin, end - begin));
    });
    std::vector<AdmitResult> results;
    results.reserve(prepared.size());
    JournalWriter* journal = nullptr;
    uint64_t ticket = 0;
    bool rewrite = false;
    std::vector<TxPtr> to_journal;
    {
        std::unique_lock lock{m_impl->mutex};
        const auto now = m_impl->now();
        m_impl->expire(now);
        for (Prepared& p : prepared) results.push_back(m_impl->insert(p, now));
        for (Prepared& p : prepared)
            if (p.admitted && p.admitted->origin == Origin::local)
                to_journal.push_back(std::move(p.admitted));
        if (m_impl->journal && !to_journal.empty()) {
            // The ticket keeps the journal in admission order without holding the pool's lock
            // while it writes.
            journal = m_impl->journal;
            ticket = journal->take_ticket();
            if (m_impl->journal_entries + to_journal.size() > journal_capacity(m_impl->config)) {
                to_journal = m_impl->local();  // includes this batch
                rewrite = true;
                m_impl->journal_entries = to_journal.size();
            } else {
                m_impl->journal_entries += to_journal.size();
            }
        }
    }
    if (journal) journal->write(ticket, to_journal, rewrite);
    return results;
}

AdmitResult Pool::admit_one(BytesView encoding, Origin origin, Unprotected unprotected) {
    const BytesView one[] = {encoding};
    return std::move(admit(one, origin, {}, unprotected).front());
}

AdmitResult Pool::admit_one(BytesView encoding, const Hash& hash, Origin origin) {
    const BytesView one[] = {encoding};
    return std::move(admit(one, origin, {&hash, 1}).front());
}

TxPtr Pool::find(const Hash& hash, uint64_t as_of) const {
    std::shared_lock lock{m_impl->mutex};
    if (const auto it = m_impl->by_hash.find(hash); it != m_impl->by_hash.end()) return it->second;
    const auto left = m_impl->recent_by_hash.find(hash);
    if (left != m_impl->recent_by_hash.end() && left->second.first > as_of)
        return left->second.second;
    return nullptr;
}

uint64_t Pool::pending_nonce(const Address& sender, uint64_t account_nonce, uint64_t as_of) const {
    std::shared_lock lock{m_impl->mutex};
    const auto found = m_impl->senders.find(sender);
    const Sender* s = found == m_impl->senders.end() ? nullptr : &found->second;
    uint64_t n = account_nonce;
    while (true) {
        if (s && n >= s->nonce && n < s->pending_end) {
            n = s->pending_end;
            continue;
        }
        if (s && s->txs.contains(n)) {  // a reader ahead of the pool: its queue is pending
            ++n;
            continue;
        }
        const auto left = m_impl->recent_by_nonce.find(SenderNonce{sender, n});
        if (left != m_impl->recent_by_nonce.end() && left->second > as_of) {
            ++n;
            continue;
        }
        return n;
    }
}

Status Pool::status() const {
    std::shared_lock lock{m_impl->mutex};
    return {m_impl->pending, m_impl->queued()};
}

size_t Pool::ready() const {
    std::shared_lock lock{m_impl->mutex};
    return m_impl->pending_index.size();
}

void Pool::drop(const Hash& hash) {
    std::unique_lock lock{m_impl->mutex};
    const auto found = m_impl->by_hash.find(hash);
    if (found == m_impl->by_hash.end()) return;
    const TxPtr t = found->second;
    Sender& s = m_impl->senders.at(t->sender);
    const uint64_t old_taken_end = s.taken_end, old_pending_end = s.pending_end;
    const size_t pending_before = s.pending();
    m_impl->remove(s, s.txs.find(t->tx.nonce));
    s.update_pending_end();
    s.taken_end = std::min(s.taken_end, s.pending_end);
    m_impl->reclassify(s, old_taken_end, old_pending_end);
    m_impl->pending = m_impl->pending - pending_before + s.pending();
    m_impl->erase_if_empty(t->sender);
    m_impl->trim(&t->sender);  // its later transactions are queued now
}

Selection Pool::take(size_t max_txs, uint64_t gas_limit) {
    struct Candidate {
        u256 tip;
        uint64_t arrival_block;
        const Address* address;
        Sender* sender;
        /// The best candidate on top of the heap: highest tip, then earliest arrival, then the
        /// lowest address (deterministic, whatever order the transactions came in).
        bool operator<(const Candidate& other) const {
            if (tip != other.tip) return tip < other.tip;
            if (arrival_block != other.arrival_block) return arrival_block > other.arrival_block;
            return *other.address < *address;
        }
    };
    std::unique_lock lock{m_impl->mutex};
    auto candidate = [&](const Address& address, Sender& s) -> std::optional<Candidate> {
        if (s.taken_end >= s.pending_end) return std::nullopt;
        const PooledTx& next = *s.txs.at(s.taken_end).tx;
        return Candidate{next.tip, next.arrival_block, &address, &s};
    };
    std::priority_queue<Candidate> heap;
    for (auto& [address, s] : m_impl->senders)
        if (auto c = candidate(address, s)) heap.push(*c);

    Selection out;
    while (!heap.empty() && out.txs.size() < max_txs) {
        const Candidate best = heap.top();
        heap.pop();
        Sender& s = *best.sender;
        Slot& next = s.txs.at(s.taken_end);
        // A sender whose next transaction does not fit is done for this block: its later ones
        // cannot go before it.
        if (next.tx->tx.gas_limit > gas_limit - out.gas) continue;
        out.gas += next.tx->tx.gas_limit;
        out.txs.push_back(next.tx);
        ++s.taken_end;
        m_impl->place(next, Where::taken);
        if (auto c = candidate(*best.address, s)) heap.push(*c);
    }
    return out;
}

void Pool::committed(uint64_t number, std::span<const Hash> included,
                     std::span<const Address> touched) {
    std::unique_lock lock{m_impl->mutex};
    m_impl->epoch.fetch_add(1, std::memory_order_acq_rel);
    std::vector<TxPtr> departed;
    m_impl->departing = &departed;
    std::vector<Address> affected{touched.begin(), touched.end()};
    for (const Hash& h : included) {
        const auto it = m_impl->by_hash.find(h);
        if (it != m_impl->by_hash.end()) affected.push_back(it->second->sender);
    }
    std::sort(affected.begin(), affected.end());
    affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
    for (const Address& address : affected) {
        const auto it = m_impl->senders.find(address);
        if (it == m_impl->senders.end()) continue;
        Sender& s = it->second;
        const auto account = m_impl->state.account(address);
        if (account) {
            m_impl->refresh(address, s, account->value_or(state::Account{}));
            continue;
        }
        // An account that cannot be read: its included transactions still leave, and the
        // nonce moves past them; the balance stays as it was (the next block that touches the
        // account reads it again, and a block's execution checks every transaction anyway).
        uint64_t nonce = s.nonce;
        for (const Hash& h : included) {
            const auto t = m_impl->by_hash.find(h);
            if (t != m_impl->by_hash.end() && t->second->sender == address)
                nonce = std::max(nonce, t->second->tx.nonce + 1);
        }
        m_impl->refresh(address, s, state::Account{nonce, s.balance});
    }
    // A block from elsewhere may have closed gaps past the pending bound.
    m_impl->trim();
    m_impl->departing = nullptr;
    m_impl->remember(number, std::move(departed));
    m_impl->expire(m_impl->now());
}

void Pool::abandon_taken() {
    std::unique_lock lock{m_impl->mutex};
    for (auto& [address, s] : m_impl->senders) {
        const uint64_t old_taken_end = s.taken_end;
        s.taken_end = s.nonce;
        m_impl->reclassify(s, old_taken_end, s.pending_end);
    }
}

std::vector<TxPtr> Pool::all() {
    std::unique_lock lock{m_impl->mutex};
    m_impl->expire(m_impl->now());
    return m_impl->all();
}

std::vector<TxPtr> Pool::local() {
    std::unique_lock lock{m_impl->mutex};
    m_impl->expire(m_impl->now());
    return m_impl->local();
}

void Pool::expire() {
    std::unique_lock lock{m_impl->mutex};
    m_impl->expire(m_impl->now());
}

std::string Pool::invariant_violation() const {
    std::shared_lock lock{m_impl->mutex};
    const Impl& p = *m_impl;
    const Config& c = p.config;
    size_t count = 0, pending = 0, untaken = 0, queued = 0;
    for (const auto& [address, s] : p.senders) {
        const std::string who = "sender " + to_hex(address) + ": ";
        if (s.txs.empty()) return who + "held with no transaction";
        if (s.taken_end < s.nonce || s.pending_end < s.taken_end) return who + "ends out of order";
        u512 sum = 0;
        size_t sender_queued = 0;
        uint64_t expected_end = s.nonce;
        while (s.txs.contains(expected_end)) ++expected_end;
        if (expected_end != s.pending_end) return who + "pending_end is not the first gap";
        for (const auto& [nonce, slot] : s.txs) {
            const PooledTx& t = *slot.tx;
            if (nonce < s.nonce) return who + "a nonce below the account's";
            if (t.tx.nonce != nonce || t.sender != address) return who + "a misfiled transaction";
            const auto h = p.by_hash.find(t.hash);
            if (h == p.by_hash.end() || h->second != slot.tx) return who + "not found by hash";
            const Where where = s.class_of(nonce);
            if (slot.where != where) return who + "a transaction in the wrong class";
            const PriceKey key{t.tip, t.sequence};
            const bool in_pending = p.pending_index.contains(key);
            const bool in_queued =
                p.queued_index.contains(key) && p.queued_age.contains(t.sequence);
            if (in_pending != (where == Where::pending) || in_queued != (where == Where::queued))
                return who + "indexed in the wrong place";
            sum += u512{t.cost};
            if (where == Where::queued) ++sender_queued;
            if (where == Where::pending) ++untaken;
        }
        if (sum != u512{s.total_cost}) return who + "total_cost is not the sum of the costs";
        if (sender_queued != s.queued()) return who + "queued count";
        if (s.txs.size() > c.max_per_sender) return who + "past max_per_sender";
        if (sender_queued > c.max_queued_per_sender) return who + "past max_queued_per_sender";
        count += s.txs.size();
        pending += s.pending();
        queued += sender_queued;
    }
    if (count != p.by_hash.size()) return "by_hash holds transactions no sender does";
    if (pending != p.pending) return "the pending count is not the sum over senders";
    if (untaken != p.pending_index.size() || queued != p.queued_index.size() ||
        queued != p.queued_age.size())
        return "an index holds stale entries";
    if (pending > c.max_pending && untaken > 0) return "past max_pending";
    if (queued > c.max_queued) return "past max_queued";
    return "";
}

void Pool::journal_to(JournalWriter* journal, size_t entries) {
    std::unique_lock lock{m_impl->mutex};
    m_impl->journal = journal;
    m_impl->journal_entries = entries;
}

}  // namespace barrel::pool
