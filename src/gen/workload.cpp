// The workload generator. Determinism rests on three things:
// - every random choice comes from one std::mt19937_64 (whose output sequence the standard fixes)
//   read in block order on the calling thread, and is reduced by hand, never through the
//   standard's distributions, whose algorithms are implementation-defined;
// - the parallel parts (key derivation, signing) write only their own slot and compute
//   deterministic functions (libsecp256k1 signs with RFC 6979 nonces);
// - sealing runs the real executor, whose results do not depend on the thread count.

#include <barrel/block/block.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/exec/dag_transfer.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/gen/workload.hpp>
#include <barrel/tx/transaction.hpp>

#include "core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <random>
#include <span>
#include <sstream>

namespace barrel::gen {

std::string_view to_string(Mix mix) noexcept {
    switch (mix) {
        case Mix::transfer: return "transfer";
        case Mix::dag: return "dag";
        case Mix::mixed: return "mixed";
    }
    return "unknown";
}

std::optional<Mix> parse_mix(std::string_view text) noexcept {
    if (text == "transfer") return Mix::transfer;
    if (text == "dag") return Mix::dag;
    if (text == "mixed") return Mix::mixed;
    return std::nullopt;
}

std::string user_name(size_t index) {
    std::string digits = std::to_string(index);
    if (digits.size() < 6) digits.insert(0, 6 - digits.size(), '0');
    return "user" + digits;
}

Address coinbase_address() noexcept {
    Address a;
    a[0] = 0xba;
    a[1] = 0x77;
    a[2] = 0xe1;
    a[19] = 0x01;
    return a;
}

namespace {

constexpr uint64_t kGwei = 1'000'000'000;
constexpr uint64_t kGenesisTimestamp = 1'700'000'000;
constexpr uint64_t kBlockInterval = 2;  ///< seconds between generated blocks
/// Upper bounds on one transaction's gas limit: the block gas limit is derived from them, so a
/// block can never run out of gas, whatever the draw.
constexpr uint64_t kMaxTxGas = 30'000;       ///< transfer and dag mixes
constexpr uint64_t kMaxMixedTxGas = 40'000;  ///< mixed: access lists and calldata cost more
constexpr uint64_t kMaxCreationGas = 100'000;
constexpr uint64_t kMinBlockGas = 30'000'000;
constexpr uint64_t kCallGasMargin = 5'000;  ///< gas limit above the intrinsic gas of a call
/// The mixed workload's chain has a base fee, so that EIP-1559's effective price is exercised.
constexpr uint64_t kMixedBaseFee = kGwei;

u256 pow10(unsigned n) {
    u256 v = 1;
    for (unsigned i = 0; i < n; ++i) v *= 10;
    return v;
}

/// 10^6 ether per account (no workload of the accepted size spends more than a small part of
/// it) and 10^18 per DagTransfer user.
const u256& account_balance() {
    static const u256 v = pow10(24);
    return v;
}
const u256& user_balance() {
    static const u256 v = pow10(18);
    return v;
}

void put_u64(Bytes& out, uint64_t v) {
    for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

struct KeyPair {
    Hash key;
    Address address;
};

KeyPair derive_account(uint64_t seed, size_t index) {
    Bytes preimage{'b', 'a', 'r', 'r', 'e', 'l', '-', 'g', 'e', 'n'};
    put_u64(preimage, seed);
    put_u64(preimage, index);
    Hash key = keccak256(preimage);
    // A keccak output is a valid secret unless it is zero or ≥ the curve order (p ≈ 2^-128).
    for (;;) {
        if (const auto address = tx::address_of(key)) return {key, *address};
        key = keccak256(key);
    }
}

/// The random source: raw 64-bit outputs of mt19937_64, reduced by hand so that the sequence of
/// choices is the same with every standard library.
class Random {
public:
    explicit Random(uint64_t seed) : m_engine{seed} {}

    uint64_t next() { return m_engine(); }
    /// An index below n (n ≥ 1); the modulo bias (< n / 2^64) does not matter here.
    size_t below(size_t n) { return static_cast<size_t>(next() % n); }
    /// True with probability p: 53 random bits as an exact double in [0, 1), compared with p.
    bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }
    bool coin() { return (next() >> 63) != 0; }

private:
    std::mt19937_64 m_engine;
};

/// An unsigned transaction, its calldata and the index of the account that signs it. tx.data
/// is pointed at `data` just before signing, once the drafts no longer move.
struct Draft {
    tx::Transaction tx;
    Bytes data;
    size_t signer{0};
};

/// The generator's view of the chain: keys, nonces and the size of the user table.
class Generator {
public:
    Generator(const Options& options, const std::vector<KeyPair>& accounts)
        : m_options{options},
          m_random{options.seed},
          m_accounts{accounts},
          m_nonces(accounts.size(), 0),
          m_users{options.mix == Mix::transfer ? 0 : options.accounts} {}

    /// The unsigned transactions of block `number`, in block order.
    std::vector<Draft> draft_block(uint64_t number);

private:
    const Options& m_options;
    Random m_random;
    const std::vector<KeyPair>& m_accounts;
    std::vector<uint64_t> m_nonces;
    size_t m_users;  ///< users that exist, or will once the userAdd calls drafted so far run

    size_t accounts() const noexcept { return m_accounts.size(); }
    bool mixed() const noexcept { return m_options.mix == Mix::mixed; }

    /// Two distinct indices below `population` (≥ 2): with probability hot_ratio the second
    /// (the recipient) is hot and, half the time, so is the first (the sender).
    std::pair<size_t, size_t> pick_pair(size_t population) {
        const size_t hot = m_options.hot_accounts;
        const bool is_hot = m_random.chance(m_options.hot_ratio);
        const size_t to = is_hot ? m_random.below(hot) : m_random.below(population);
        size_t from = is_hot && m_random.coin() ? m_random.below(hot) : m_random.below(population);
        if (from == to) from = (to + 1 + m_random.below(population - 1)) % population;
        return {from, to};
    }
    size_t pick_user() {
        return m_random.chance(m_options.hot_ratio) ? m_random.below(m_options.hot_accounts)
                                                    : m_random.below(m_users);
    }

    /// A new draft signed by account `signer` with its next nonce, in this mix's envelope.
    Draft& start(std::vector<Draft>& drafts, size_t signer);
    void set_gas(Draft& d, uint64_t margin) {
        d.tx.data = d.data;  // intrinsic_gas reads it; re-pointed before signing
        d.tx.gas_limit = tx::intrinsic_gas(d.tx) + margin;
        d.tx.data = {};
    }

    void value_transfer(std::vector<Draft>& drafts, uint64_t number, size_t position);
    void dag_call(std::vector<Draft>& drafts, uint64_t number, size_t position);
    /// The rest of dag_call's rolls: a call that fails with a FISCO code (status 1, gas and
    /// nonce consumed).
    void failing_dag_call(exec::DagCall& call, std::string& user, std::string& to, uint64_t number,
                          size_t position);
    void malformed_call(std::vector<Draft>& drafts);
    void creation(std::vector<Draft>& drafts);
};

Draft& Generator::start(std::vector<Draft>& drafts, size_t signer) {
    Draft& d = drafts.emplace_back();
    d.signer = signer;
    tx::Transaction& t = d.tx;
    t.nonce = m_nonces[signer]++;
    t.chain_id = m_options.chain_id;
    if (!mixed()) {
        t.type = tx::TxType::legacy;
        t.max_fee_per_gas = t.max_priority_fee_per_gas = kGwei;
        return d;
    }
    // Mixed: 5% pre-EIP-155 legacy, 35% EIP-155 legacy, 25% EIP-2930, 35% EIP-1559; every price
    // at or above the base fee.
    const size_t kind = m_random.below(20);
    if (kind < 8) {
        t.type = tx::TxType::legacy;
        if (kind == 0) t.chain_id.reset();
        t.max_fee_per_gas = t.max_priority_fee_per_gas = (1 + m_random.below(3)) * kGwei;
        return d;
    }
    if (kind < 13) {
        t.type = tx::TxType::access_list;
        t.max_fee_per_gas = t.max_priority_fee_per_gas = (1 + m_random.below(3)) * kGwei;
    } else {
        t.type = tx::TxType::dynamic_fee;
        // The fee cap is sometimes exactly the base fee, so the effective price is the cap.
        t.max_fee_per_gas = kMixedBaseFee + m_random.below(3) * kGwei;
        t.max_priority_fee_per_gas = m_random.below(3) * (kGwei / 2);
    }
    // A small access list: up to two entries of up to one storage key each (≤ 8,600 gas).
    const size_t entries = m_random.below(3);
    for (size_t e = 0; e < entries; ++e) {
        tx::AccessListEntry entry;
        entry.address = m_random.coin() ? m_accounts[m_random.below(accounts())].address
                                        : exec::kDagTransferAddress;
        if (m_random.coin()) {
            Hash key;
            for (size_t w = 0; w < 4; ++w) {
                const uint64_t r = m_random.next();
                for (size_t b = 0; b < 8; ++b)
                    key[w * 8 + b] = static_cast<uint8_t>(r >> (56 - 8 * b));
            }
            entry.storage_keys.push_back(key);
        }
        t.access_list.push_back(std::move(entry));
    }
    return d;
}

void Generator::value_transfer(std::vector<Draft>& drafts, uint64_t number, size_t position) {
    const auto [from, to] = pick_pair(accounts());
    Draft& d = start(drafts, from);
    d.tx.to = m_accounts[to].address;
    d.tx.value = u256{(1 + m_random.below(1'000'000)) * kGwei};
    if (!mixed()) {
        set_gas(d, 0);
        return;
    }
    // Mixed: some edge cases of a transfer, and calldata (ignored, but paid for) on a quarter.
    switch (m_random.below(20)) {
        case 0: {  // to an account that does not exist yet
            Bytes preimage{'f', 'r', 'e', 's', 'h'};
            put_u64(preimage, m_options.seed);
            put_u64(preimage, number);
            put_u64(preimage, position);
            d.tx.to = Address::from_view(keccak256(preimage).view().subspan(12));
            break;
        }
        case 1: d.tx.to = m_accounts[from].address; break;  // to itself: no value moves
        case 2: d.tx.value = 0; break;
        default: break;
    }
    if (m_random.below(4) == 0) {
        d.data.resize(1 + m_random.below(64));
        for (auto& b : d.data) {
            const uint64_t r = m_random.next();
            b = (r & 3) == 0 ? 0 : static_cast<uint8_t>(r >> 8);
        }
    }
    set_gas(d, m_random.coin() ? kCallGasMargin : 0);
}

void Generator::failing_dag_call(exec::DagCall& call, std::string& user, std::string& to,
                                 uint64_t number, size_t position) {
    auto amount = [this] { return u256{1 + m_random.below(1000)}; };
    switch (m_random.below(4)) {
        case 0:  // -51404: more than any user holds
            call.function = exec::DagFunction::user_draw;
            user = user_name(pick_user());
            call.amount = pow10(30);
            break;
        case 1:  // -51403: the user exists
            call.function = exec::DagFunction::user_add;
            user = user_name(pick_user());
            call.amount = amount();
            break;
        case 2: {  // -51401: amount 0
            const auto [a, b] = pick_pair(m_users);
            call.function = exec::DagFunction::user_transfer;
            user = user_name(a);
            to = user_name(b);
            break;
        }
        default:  // -51402: a user that never exists
            call.function = exec::DagFunction::user_draw;
            user = "ghost" + std::to_string(number) + "_" + std::to_string(position);
            call.amount = amount();
            break;
    }
}

void Generator::dag_call(std::vector<Draft>& drafts, uint64_t number, size_t position) {
    Draft& d = start(drafts, m_random.below(accounts()));
    d.tx.to = exec::kDagTransferAddress;
    std::string user;
    std::string to;
    exec::DagCall call;
    auto amount = [this] { return u256{1 + m_random.below(1000)}; };
    const size_t roll = m_random.below(100);
    if (roll < 80) {
        const auto [a, b] = pick_pair(m_users);
        call.function = exec::DagFunction::user_transfer;
        user = user_name(a);
        to = user_name(b);
        call.amount = amount();
    } else if (roll < 87) {
        call.function = exec::DagFunction::user_save;
        user = user_name(pick_user());
        call.amount = amount();
    } else if (roll < 92) {
        call.function = exec::DagFunction::user_draw;
        user = user_name(pick_user());
        call.amount = amount();
    } else if (roll < 95) {
        call.function = exec::DagFunction::user_balance;
        user = user_name(pick_user());
    } else if (roll < 97) {
        call.function = exec::DagFunction::user_add;
        user = user_name(m_users++);
        call.amount = amount() * 1000;
    } else {
        failing_dag_call(call, user, to, number, position);
    }
    call.user = user;
    call.to = to;
    d.data = exec::encode_call(call);
    set_gas(d, kCallGasMargin);
}

void Generator::malformed_call(std::vector<Draft>& drafts) {
    Draft& d = start(drafts, m_random.below(accounts()));
    d.tx.to = exec::kDagTransferAddress;
    const std::string user = user_name(m_random.below(m_users));
    switch (m_random.below(4)) {
        case 0: d.data = {0xde, 0xad, 0xbe, 0xef}; break;  // no such function
        case 1:                                            // cut short
            d.data = exec::encode_call({exec::DagFunction::user_save, user, {}, u256{5}});
            d.data.resize(d.data.size() - 32);
            break;
        case 2:  // a trailing byte
            d.data = exec::encode_call({exec::DagFunction::user_balance, user, {}, u256{0}});
            d.data.push_back(0);
            break;
        default:  // well formed, but the precompile is not payable
            d.data = exec::encode_call({exec::DagFunction::user_save, user, {}, u256{5}});
            d.tx.value = u256{kGwei};
            break;
    }
    set_gas(d, kCallGasMargin);
}

void Generator::creation(std::vector<Draft>& drafts) {
    Draft& d = start(drafts, m_random.below(accounts()));
    d.tx.to.reset();
    // A tiny init code (returns an empty runtime); barrel does not run it: status 0, all gas.
    d.data = {0x60, 0x80, 0x60, 0x40, 0x52, 0x60, 0x00, 0x80, 0xf3};
    set_gas(d, 10'000);
}

std::vector<Draft> Generator::draft_block(uint64_t number) {
    const size_t n = m_options.txs;
    std::vector<Draft> drafts;
    drafts.reserve(n);
    size_t creation_at = n;  // none
    if (mixed()) {
        const size_t at = m_random.below(n);
        if (m_random.coin()) creation_at = at;
    }
    for (size_t i = 0; i < n; ++i) {
        switch (m_options.mix) {
            case Mix::transfer: value_transfer(drafts, number, i); break;
            case Mix::dag: dag_call(drafts, number, i); break;
            case Mix::mixed: {
                if (i == creation_at) {
                    creation(drafts);
                    break;
                }
                const size_t roll = m_random.below(100);
                if (roll < 48)
                    value_transfer(drafts, number, i);
                else if (roll < 96)
                    dag_call(drafts, number, i);
                else
                    malformed_call(drafts);
                break;
            }
        }
    }
    return drafts;
}

std::string format_double(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

uint64_t max_tx_gas(Mix mix) noexcept { return mix == Mix::mixed ? kMaxMixedTxGas : kMaxTxGas; }

/// A hard bound on a block's gas: every transaction at its maximum gas limit (plus one creation).
uint64_t block_gas_limit(const Options& o) noexcept {
    uint64_t gas = max_tx_gas(o.mix) * o.txs + (o.mix == Mix::mixed ? kMaxCreationGas : 0);
    constexpr uint64_t kRound = 1'000'000;
    gas = (gas + kRound - 1) / kRound * kRound;
    return std::max(gas, kMinBlockGas);
}

chain::Genesis make_genesis(const Options& o, const std::vector<KeyPair>& accounts) {
    chain::Genesis g;
    g.config.chain_id = o.chain_id;
    g.config.base_fee = o.mix == Mix::mixed ? u256{kMixedBaseFee} : u256{0};
    g.gas_limit = block_gas_limit(o);
    g.timestamp = kGenesisTimestamp;
    g.coinbase = coinbase_address();
    g.alloc.accounts.reserve(accounts.size());
    for (const auto& a : accounts)
        g.alloc.accounts.emplace_back(a.address, state::Account{0, account_balance()});
    auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
    std::sort(g.alloc.accounts.begin(), g.alloc.accounts.end(), by_key);
    if (o.mix != Mix::transfer) {
        g.alloc.users.reserve(o.accounts);
        for (size_t i = 0; i < o.accounts; ++i)
            g.alloc.users.emplace_back(user_name(i), user_balance());
        std::sort(g.alloc.users.begin(), g.alloc.users.end(), by_key);
    }
    return g;
}

}  // namespace

Hash account_key(uint64_t seed, size_t index) { return derive_account(seed, index).key; }

Expected<void, std::string> validate(const Options& o) {
    auto fail = [](std::string message) { return unexpected(std::move(message)); };
    if (o.blocks < 1) return fail("--blocks: must be at least 1, got 0");
    if (o.txs < 1 || o.txs > kMaxTxsPerBlock)
        return fail("--txs: must be between 1 and " + std::to_string(kMaxTxsPerBlock) + ", got " +
                    std::to_string(o.txs));
    if (o.blocks > kMaxTotalTxs / o.txs)
        return fail("--blocks: " + std::to_string(o.blocks) + " blocks of " +
                    std::to_string(o.txs) + " transactions exceed the limit of " +
                    std::to_string(kMaxTotalTxs) + " transactions");
    if (o.accounts < 2 || o.accounts > kMaxAccounts)
        return fail("--accounts: must be between 2 and " + std::to_string(kMaxAccounts) + ", got " +
                    std::to_string(o.accounts));
    if (o.hot_accounts < 1 || o.hot_accounts > o.accounts)
        return fail("--hot-accounts: must be between 1 and the number of accounts (" +
                    std::to_string(o.accounts) + "), got " + std::to_string(o.hot_accounts));
    if (!(o.hot_ratio >= 0.0 && o.hot_ratio <= 1.0))  // also rejects NaN
        return fail("--hot-ratio: must be between 0 and 1, got " + format_double(o.hot_ratio));
    if (o.chain_id == 0) return fail("--chain-id: must be at least 1, got 0");
    return {};
}

namespace {

std::vector<KeyPair> derive_accounts(const Options& o) {
    std::vector<KeyPair> accounts(o.accounts);
    for_each_index(accounts.size(), true,
                   [&](size_t i) { accounts[i] = derive_account(o.seed, i); });
    return accounts;
}

/// make_genesis, checked for what would make its accounts ambiguous (never expected: address
/// derivation would have to collide).
Expected<chain::Genesis, std::string> checked_genesis(const Options& o,
                                                      const std::vector<KeyPair>& accounts) {
    chain::Genesis g = make_genesis(o, accounts);
    const auto& alloc = g.alloc.accounts;
    for (size_t i = 1; i < alloc.size(); ++i)
        if (alloc[i].first == alloc[i - 1].first)
            return unexpected("internal: two generated accounts share address " +
                              to_hex(alloc[i].first));
    if (std::binary_search(alloc.begin(), alloc.end(), std::pair{g.coinbase, state::Account{}},
                           [](const auto& a, const auto& b) { return a.first < b.first; }))
        return unexpected(std::string{"internal: a generated account is the coinbase"});
    return g;
}

}  // namespace

Expected<chain::Genesis, std::string> generate_genesis(const Options& o) {
    if (auto valid = validate(o); !valid) return unexpected(valid.error());
    return checked_genesis(o, derive_accounts(o));
}

namespace {

/// The drafts of block `number` signed (in parallel) and encoded, once each gas limit is checked
/// against its bound.
Expected<std::vector<Bytes>, std::string> sign_drafts(std::vector<Draft>& drafts,
                                                      const std::vector<KeyPair>& accounts,
                                                      const Options& o, uint64_t number) {
    for (const Draft& d : drafts) {
        const uint64_t bound = d.tx.is_creation() ? kMaxCreationGas : max_tx_gas(o.mix);
        if (d.tx.gas_limit > bound)
            return unexpected("internal: block " + std::to_string(number) +
                              ": a transaction's gas limit exceeds its bound");
    }
    std::vector<Bytes> encodings(drafts.size());
    std::atomic<bool> sign_failed{false};
    for_each_index(drafts.size(), true, [&](size_t i) {
        Draft& d = drafts[i];
        d.tx.data = d.data;
        if (!tx::sign(d.tx, accounts[d.signer].key))
            sign_failed.store(true, std::memory_order_relaxed);
        encodings[i] = tx::encode(d.tx);
    });
    if (sign_failed.load()) return unexpected(std::string{"internal: signing failed"});
    return encodings;
}

/// Seals `header` (its parent, number, time and limits set) over `views`: executes the block as
/// an importer would (senders known, so not recovered) against `state`, fills in the header's
/// results and returns the outcome, whose writes the caller applies.
Expected<exec::Outcome, std::string> seal_header(block::Header& header,
                                                 std::span<const BytesView> views,
                                                 const std::vector<Address>& senders,
                                                 const state::MemoryState& state,
                                                 const state::Lattice& parent_lattice,
                                                 const exec::ChainConfig& config) {
    const std::string which = "internal: block " + std::to_string(header.number);
    auto decoded = block::decode_block(block::encode_block(header, views));
    if (!decoded) return unexpected(which + ": " + block::describe(decoded.error()));
    decoded->senders = senders;
    auto outcome = exec::execute(*decoded, state, parent_lattice, config);
    if (!outcome)
        return unexpected(which + " does not execute: " + exec::describe(outcome.error()));
    header.gas_used = outcome->gas_used;
    header.txs_root = outcome->txs_root;
    header.receipts_root = outcome->receipts_root;
    header.state_root = outcome->state_root;
    return std::move(outcome).value();
}

}  // namespace

Expected<Workload, std::string> generate(const Options& o) {
    if (auto valid = validate(o); !valid) return unexpected(valid.error());

    const std::vector<KeyPair> accounts = derive_accounts(o);
    auto genesis = checked_genesis(o, accounts);
    if (!genesis) return unexpected(genesis.error());
    Workload w;
    w.genesis = std::move(genesis).value();

    state::MemoryState state = chain::genesis_state(w.genesis);
    const block::Header genesis_header = chain::genesis_header(w.genesis);
    Hash parent_hash = block::hash_of(genesis_header);
    state::Lattice parent_lattice = chain::genesis_lattice(w.genesis, true);

    Generator generator{o, accounts};
    w.blocks.reserve(o.blocks);
    w.senders.reserve(o.blocks);
    for (uint64_t number = 1; number <= o.blocks; ++number) {
        std::vector<Draft> drafts = generator.draft_block(number);
        auto encodings = sign_drafts(drafts, accounts, o, number);
        if (!encodings) return unexpected(encodings.error());
        std::vector<Address> senders(drafts.size());
        for (size_t i = 0; i < drafts.size(); ++i) senders[i] = accounts[drafts[i].signer].address;
        const std::vector<BytesView> views(encodings->begin(), encodings->end());

        block::Header header;
        header.parent_hash = parent_hash;
        header.number = number;
        header.timestamp = w.genesis.timestamp + kBlockInterval * number;
        header.coinbase = w.genesis.coinbase;
        header.gas_limit = w.genesis.gas_limit;
        header.chain_id = o.chain_id;
        auto outcome = seal_header(header, views, senders, state, parent_lattice, w.genesis.config);
        if (!outcome) return unexpected(outcome.error());
        w.blocks.push_back(block::encode_block(header, views));
        w.senders.push_back(std::move(senders));

        state.apply(outcome->writes);
        parent_lattice = outcome->lattice;
        parent_hash = block::hash_of(header);
    }
    return w;
}

}  // namespace barrel::gen
