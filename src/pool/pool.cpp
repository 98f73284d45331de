// The transaction pool (barrel/pool/pool.hpp): admission in two steps (parallel and lock-free,
// then serial under the lock), per-sender nonce lists, block selection and the update after a
// committed block.

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/core/parallel.hpp>
#include <barrel/pool/pool.hpp>

#include <algorithm>
#include <array>
#include <atomic>
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
        case RejectCode::insufficient_funds: return "insufficient_funds";
        case RejectCode::replacement_underpriced: return "replacement_underpriced";
        case RejectCode::account_limit: return "account_limit";
        case RejectCode::pool_full: return "pool_full";
        case RejectCode::state_unreadable: return "state_unreadable";
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

/// One sender's pooled transactions and the account they are checked against.
struct Sender {
    uint64_t nonce{0};  ///< the account's nonce at the last committed block the pool saw
    u256 balance;
    std::map<uint64_t, TxPtr> txs;  ///< by nonce: pending (from `nonce` without a gap), then queued
    u256 total_cost;                ///< sum of the costs of `txs`
    uint64_t pending_end{0};        ///< first nonce from `nonce` on that the pool does not hold
    uint64_t taken_end{0};          ///< nonces [nonce, taken_end) are in blocks being built

    size_t pending() const noexcept { return static_cast<size_t>(pending_end - nonce); }
    void update_pending_end() {
        pending_end = nonce;
        for (auto it = txs.find(pending_end); it != txs.end() && it->first == pending_end; ++it)
            ++pending_end;
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
    size_t pending{0};
    uint64_t next_sequence{0};
    /// Counts committed blocks; admission's state reads before the lock are tagged with it.
    std::atomic<uint64_t> epoch{0};

    Impl(const Config& c, const state::StateReader& s, block::SenderCache* sc)
        : config{c}, state{s}, cache{sc} {}

    /// The parallel step of admission for up to kPrepareGroup encodings: everything that needs
    /// no lock but the shared one, recovery included.
    void prepare(std::span<const BytesView> encodings, std::span<Prepared> out) const;
    /// Decoding and the stateless rules of one transaction, its hash set: why it is rejected, if
    /// it is.
    std::optional<Rejection> check_stateless(PooledTx& ptx) const;
    AdmitResult insert(Prepared& p);
    Expected<Sender, Rejection> sender_for_new(const Prepared& p) const;
    void remove(Sender& s, std::map<uint64_t, TxPtr>::iterator it);
    void refresh(const Address& address, Sender& s, const state::Account& account);
};

void Pool::Impl::prepare(std::span<const BytesView> encodings, std::span<Prepared> out) const {
    // Each step runs over the group's transactions that passed the one before, in the order of
    // a single transaction's checks, so that hashing and recovery can take the group together.
    const size_t n = std::min(encodings.size(), kPrepareGroup);
    std::array<size_t, kPrepareGroup> live;
    size_t count = 0;
    for (size_t i = 0; i < n; ++i) {
        const BytesView encoding = encodings[i];
        if (encoding.size() > config.max_transaction_bytes) {
            out[i].rejection =
                Rejection{RejectCode::oversized, "oversized data: transaction size " +
                                                     std::to_string(encoding.size()) + ", limit " +
                                                     std::to_string(config.max_transaction_bytes)};
            continue;
        }
        out[i].tx = std::make_shared<PooledTx>();
        out[i].tx->encoding.assign(encoding.begin(), encoding.end());
        live[count++] = i;
    }

    std::array<BytesView, kPrepareGroup> views;
    std::array<Hash, kPrepareGroup> hashes;
    for (size_t k = 0; k < count; ++k) views[k] = out[live[k]].tx->encoding;
    keccak256_many(std::span{views}.first(count), hashes);  // tx::hash_of, four at a time
    {
        std::shared_lock lock{mutex};
        for (size_t k = 0; k < count; ++k) {
            out[live[k]].tx->hash = hashes[k];
            if (by_hash.contains(hashes[k]))
                out[live[k]].rejection = Rejection{RejectCode::already_known, "already known"};
        }
    }

    std::array<const tx::Transaction*, kPrepareGroup> to_recover;
    size_t recovering = 0;
    for (size_t k = 0; k < count; ++k) {
        Prepared& p = out[live[k]];
        if (p.rejection) continue;
        if (auto rejection = check_stateless(*p.tx)) {
            p.rejection = std::move(rejection);
            continue;
        }
        to_recover[recovering] = &p.tx->tx;
        live[recovering++] = live[k];
    }

    std::array<Expected<Address, tx::TxError>, kPrepareGroup> recovered;
    tx::recover_senders(std::span{to_recover}.first(recovering), recovered);
    for (size_t k = 0; k < recovering; ++k) {
        Prepared& p = out[live[k]];
        if (!recovered[k]) {
            p.rejection = stateless_rejection(recovered[k].error(), p.tx->tx, config.chain_id);
            continue;
        }
        p.tx->sender = *recovered[k];
        // Recovered once, here: the verify stage of the block that includes it finds it cached.
        if (cache) cache->insert(p.tx->hash, p.tx->sender);
        p.epoch = epoch.load(std::memory_order_acquire);
        p.account = state.account(p.tx->sender);
    }
    // Rejected transactions hold nothing: insert() looks at the rejection alone.
    for (size_t i = 0; i < n; ++i)
        if (out[i].rejection) out[i].tx.reset();
}

std::optional<Rejection> Pool::Impl::check_stateless(PooledTx& ptx) const {
    // The calldata views the encoding, which from here on never moves.
    auto decoded = tx::decode(ptx.encoding);
    if (!decoded) return stateless_rejection(decoded.error(), {}, config.chain_id);
    ptx.tx = std::move(decoded).value();
    const tx::Transaction& t = ptx.tx;
    if (t.gas_limit > config.block_gas_limit)
        return Rejection{RejectCode::exceeds_block_gas_limit, "exceeds block gas limit"};
    if (auto valid = tx::validate(t, config.chain_id); !valid)
        return stateless_rejection(valid.error(), t, config.chain_id);
    if (t.type == tx::TxType::dynamic_fee && t.max_fee_per_gas < config.base_fee)
        return Rejection{RejectCode::fee_cap_below_base_fee,
                         "max fee per gas less than block base fee: maxFeePerGas: " +
                             to_decimal(t.max_fee_per_gas) +
                             ", baseFee: " + to_decimal(config.base_fee)};
    const auto cost = cost_of(t);
    if (!cost)
        return Rejection{RejectCode::insufficient_funds,
                         std::string{kInsufficientFunds} + ": tx cost does not fit 256 bits"};
    ptx.cost = *cost;
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

AdmitResult Pool::Impl::insert(Prepared& p) {
    if (p.rejection) return unexpected(*p.rejection);
    const PooledTx& ptx = *p.tx;
    const tx::Transaction& t = ptx.tx;
    if (by_hash.contains(ptx.hash)) return reject(RejectCode::already_known, "already known");

    auto found = senders.find(ptx.sender);
    std::optional<Sender> fresh;
    if (found == senders.end()) {
        auto s = sender_for_new(p);
        if (!s) return unexpected(s.error());
        fresh = std::move(s).value();
    }
    Sender& s = fresh ? *fresh : found->second;

    if (t.nonce < s.taken_end)
        return reject(RejectCode::nonce_too_low, "nonce too low: next nonce " +
                                                     std::to_string(s.taken_end) + ", tx nonce " +
                                                     std::to_string(t.nonce));
    if (s.balance < ptx.cost)
        return reject(RejectCode::insufficient_funds,
                      std::string{kInsufficientFunds} + ": balance " + to_decimal(s.balance) +
                          ", tx cost " + to_decimal(ptx.cost) + ", overshot " +
                          to_decimal(ptx.cost - s.balance));
    const auto existing = s.txs.find(t.nonce);
    if (existing != s.txs.end()) {
        const PooledTx& old = *existing->second;
        const u256 need = s.total_cost - old.cost + ptx.cost;
        if (ptx.cost > old.cost && s.balance < need)
            return reject(RejectCode::insufficient_funds,
                          std::string{kInsufficientFunds} + ": balance " + to_decimal(s.balance) +
                              ", queued cost " + to_decimal(s.total_cost) + ", tx bumped " +
                              to_decimal(ptx.cost - old.cost) + ", overshot " +
                              to_decimal(need - s.balance));
        const tx::Transaction& o = old.tx;
        const bool raises = t.max_fee_per_gas > o.max_fee_per_gas &&
                            t.max_priority_fee_per_gas > o.max_priority_fee_per_gas;
        if (!raises || t.max_fee_per_gas < bumped(o.max_fee_per_gas, config.price_bump_percent) ||
            t.max_priority_fee_per_gas <
                bumped(o.max_priority_fee_per_gas, config.price_bump_percent))
            return reject(RejectCode::replacement_underpriced,
                          "replacement transaction underpriced");
    } else {
        const u256 need = s.total_cost + ptx.cost;
        if (s.balance < need)
            return reject(RejectCode::insufficient_funds,
                          std::string{kInsufficientFunds} + ": balance " + to_decimal(s.balance) +
                              ", queued cost " + to_decimal(s.total_cost) + ", tx cost " +
                              to_decimal(ptx.cost) + ", overshot " + to_decimal(need - s.balance));
        if (s.txs.size() >= config.max_per_sender)
            return reject(RejectCode::account_limit, "account limit exceeded: pooled " +
                                                         std::to_string(s.txs.size()) + " txs");
        if (by_hash.size() >= config.max_transactions)
            return reject(RejectCode::pool_full, "txpool is full");
    }

    // Admitted.
    if (fresh) found = senders.emplace(ptx.sender, std::move(*fresh)).first;
    Sender& held = found->second;
    const bool replaced = existing != s.txs.end();
    p.tx->sequence = next_sequence++;
    p.tx->arrival_block = epoch.load(std::memory_order_relaxed);
    TxPtr shared = std::move(p.tx);
    if (replaced) {
        by_hash.erase(existing->second->hash);
        held.total_cost -= existing->second->cost;
        existing->second = shared;
    } else {
        held.txs.emplace(t.nonce, shared);
    }
    held.total_cost += shared->cost;
    by_hash.emplace(shared->hash, shared);
    const size_t pending_before = held.pending();
    held.update_pending_end();
    pending += held.pending() - pending_before;
    return Admitted{shared->hash, shared->sender, t.nonce < held.pending_end, replaced};
}

void Pool::Impl::remove(Sender& s, std::map<uint64_t, TxPtr>::iterator it) {
    by_hash.erase(it->second->hash);
    s.total_cost -= it->second->cost;
    s.txs.erase(it);
}

/// Re-checks a sender against its account after a block: what is below the new nonce leaves,
/// and so does everything from the first transaction the balance no longer covers (they could
/// never all execute; what follows it would be gapped).
void Pool::Impl::refresh(const Address& address, Sender& s, const state::Account& account) {
    const size_t pending_before = s.pending();
    s.nonce = account.nonce;
    s.balance = account.balance;
    while (!s.txs.empty() && s.txs.begin()->first < s.nonce) remove(s, s.txs.begin());
    s.taken_end = std::max(s.taken_end, s.nonce);
    u256 spent = 0;
    for (auto it = s.txs.begin(); it != s.txs.end(); ++it) {
        const auto sum = checked_add(spent, it->second->cost);
        // Transactions in a block being built stay: that block is checked when it executes.
        if (it->first >= s.taken_end && (!sum || *sum > s.balance)) {
            while (it != s.txs.end()) remove(s, it++);
            break;
        }
        spent = *sum;
    }
    s.update_pending_end();
    pending = pending - pending_before + s.pending();
    if (s.txs.empty()) senders.erase(address);
}

// ---- Pool ------------------------------------------------------------------------------------

Pool::Pool(const Config& config, const state::StateReader& state, block::SenderCache* cache)
    : m_impl{std::make_unique<Impl>(config, state, cache)} {}

Pool::~Pool() = default;

std::vector<AdmitResult> Pool::admit(std::span<const BytesView> encodings) {
    std::vector<Prepared> prepared(encodings.size());
    for_each_group(encodings.size(), kPrepareGroup, true, [&](size_t begin, size_t end) {
        m_impl->prepare(encodings.subspan(begin, end - begin),
                        std::span{prepared}.subspan(begin, end - begin));
    });
    std::vector<AdmitResult> results;
    results.reserve(prepared.size());
    std::unique_lock lock{m_impl->mutex};
    for (Prepared& p : prepared) results.push_back(m_impl->insert(p));
    return results;
}

AdmitResult Pool::admit_one(BytesView encoding) {
    const BytesView one[] = {encoding};
    return std::move(admit(one).front());
}

TxPtr Pool::find(const Hash& hash) const {
    std::shared_lock lock{m_impl->mutex};
    const auto it = m_impl->by_hash.find(hash);
    return it == m_impl->by_hash.end() ? nullptr : it->second;
}

std::optional<uint64_t> Pool::pending_nonce(const Address& sender) const {
    std::shared_lock lock{m_impl->mutex};
    const auto it = m_impl->senders.find(sender);
    if (it == m_impl->senders.end()) return std::nullopt;
    return it->second.pending_end;
}

Status Pool::status() const {
    std::shared_lock lock{m_impl->mutex};
    return {m_impl->pending, m_impl->by_hash.size() - m_impl->pending};
}

size_t Pool::ready() const {
    std::shared_lock lock{m_impl->mutex};
    size_t n = 0;
    for (const auto& [address, s] : m_impl->senders)
        if (s.pending_end > s.taken_end) n += static_cast<size_t>(s.pending_end - s.taken_end);
    return n;
}

void Pool::drop(const Hash& hash) {
    std::unique_lock lock{m_impl->mutex};
    const auto found = m_impl->by_hash.find(hash);
    if (found == m_impl->by_hash.end()) return;
    const TxPtr t = found->second;
    const auto sender = m_impl->senders.find(t->sender);
    Sender& s = sender->second;
    const size_t pending_before = s.pending();
    m_impl->remove(s, s.txs.find(t->tx.nonce));
    s.update_pending_end();
    s.taken_end = std::min(s.taken_end, s.pending_end);
    m_impl->pending = m_impl->pending - pending_before + s.pending();
    if (s.txs.empty()) m_impl->senders.erase(sender);
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
    const u256& base_fee = m_impl->config.base_fee;
    auto candidate = [&](const Address& address, Sender& s) -> std::optional<Candidate> {
        if (s.taken_end >= s.pending_end) return std::nullopt;
        const PooledTx& next = *s.txs.at(s.taken_end);
        return Candidate{tx::effective_tip(next.tx, base_fee), next.arrival_block, &address, &s};
    };
    std::priority_queue<Candidate> heap;
    for (auto& [address, s] : m_impl->senders)
        if (auto c = candidate(address, s)) heap.push(*c);

    Selection out;
    while (!heap.empty() && out.txs.size() < max_txs) {
        const Candidate best = heap.top();
        heap.pop();
        Sender& s = *best.sender;
        const TxPtr& next = s.txs.at(s.taken_end);
        // A sender whose next transaction does not fit is done for this block: its later ones
        // cannot go before it.
        if (next->tx.gas_limit > gas_limit - out.gas) continue;
        out.gas += next->tx.gas_limit;
        out.txs.push_back(next);
        ++s.taken_end;
        if (auto c = candidate(*best.address, s)) heap.push(*c);
    }
    return out;
}

void Pool::committed(std::span<const Hash> included, std::span<const Address> touched) {
    std::unique_lock lock{m_impl->mutex};
    m_impl->epoch.fetch_add(1, std::memory_order_acq_rel);
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
}

void Pool::abandon_taken() {
    std::unique_lock lock{m_impl->mutex};
    for (auto& [address, s] : m_impl->senders) s.taken_end = s.nonce;
}

std::vector<TxPtr> Pool::all() const {
    std::shared_lock lock{m_impl->mutex};
    std::vector<const Sender*> order;
    order.reserve(m_impl->senders.size());
    for (const auto& [address, s] : m_impl->senders) order.push_back(&s);
    auto first_arrival = [](const Sender* s) {
        uint64_t a = UINT64_MAX;
        for (const auto& [nonce, t] : s->txs) a = std::min(a, t->sequence);
        return a;
    };
    std::vector<std::pair<uint64_t, const Sender*>> keyed;
    keyed.reserve(order.size());
    for (const Sender* s : order) keyed.emplace_back(first_arrival(s), s);
    std::sort(keyed.begin(), keyed.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<TxPtr> out;
    out.reserve(m_impl->by_hash.size());
    for (const auto& [arrival, s] : keyed)
        for (const auto& [nonce, t] : s->txs) out.push_back(t);
    return out;
}

}  // namespace barrel::pool
