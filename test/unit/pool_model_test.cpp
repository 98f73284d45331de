// The pool against a reference model: random admissions (valid, under the base fee, replacements
// with bumps around 10%, far-future nonces, several senders, balances near 2^256), evictions,
// expiries on an injected clock, takes, commits and abandons, each followed by a comparison with
// a model written the simple way (std::map, everything recomputed each time) and the pool's own
// invariant check. Deterministic seeds; a few seconds.

#include <barrel/core/uint256.hpp>
#include <barrel/pool/pool.hpp>

#include "pool_fixtures.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

namespace barrel::pool {
namespace {

using namespace barrel::pool::testing;
using Clock = std::chrono::steady_clock;

/// One transaction as the model holds it.
struct ModelTx {
    Hash hash;
    Address sender;
    uint64_t nonce{0};
    u256 fee_cap, tip_cap, cost, tip;
    uint64_t sequence{0};
    Clock::time_point at;
};

/// The pool's rules, written plainly: every decision recomputed from the whole model.
class Model {
public:
    Model(const Config& c, const state::MemoryState& s) : m_config{c}, m_state{s} {}

    std::map<Address, std::map<uint64_t, ModelTx>> senders;
    std::map<Address, uint64_t> taken_end;  ///< absent: the account's nonce

    state::Account account(const Address& a) const {
        return m_state.find_account(a).value_or(state::Account{});
    }
    uint64_t taken(const Address& a) const {
        const auto it = taken_end.find(a);
        return std::max(it == taken_end.end() ? 0 : it->second, account(a).nonce);
    }
    uint64_t pending_end(const Address& a) const {
        uint64_t n = account(a).nonce;
        const auto it = senders.find(a);
        if (it == senders.end()) return n;
        while (it->second.contains(n)) ++n;
        return n;
    }
    bool is_pending(const ModelTx& t) const { return t.nonce < pending_end(t.sender); }
    bool is_taken(const ModelTx& t) const { return t.nonce < taken(t.sender); }
    size_t count(bool pending) const {
        size_t n = 0;
        for (const auto& [a, txs] : senders)
            for (const auto& [nonce, t] : txs) n += is_pending(t) == pending ? 1 : 0;
        return n;
    }
    size_t queued_of(const Address& a) const {
        size_t n = 0;
        for (const auto& [nonce, t] : senders.at(a)) n += is_pending(t) ? 0 : 1;
        return n;
    }
    /// Cheapest first: lowest tip, then the latest arrival.
    static bool cheaper(const ModelTx* x, const ModelTx* y) {
        if (x->tip != y->tip) return x->tip < y->tip;
        return x->sequence > y->sequence;
    }
    std::vector<const ModelTx*> sorted(bool pending) const {
        std::vector<const ModelTx*> out;
        for (const auto& [a, txs] : senders)
            for (const auto& [nonce, t] : txs)
                if (is_pending(t) == pending && !is_taken(t)) out.push_back(&t);
        std::sort(out.begin(), out.end(), cheaper);
        return out;
    }
    void erase_from(const Address& a, uint64_t nonce) {
        auto& txs = senders.at(a);
        txs.erase(txs.lower_bound(nonce), txs.end());
        if (txs.empty()) senders.erase(a);
    }
    void erase_one(const Address& a, uint64_t nonce) {
        senders.at(a).erase(nonce);
        if (senders.at(a).empty()) senders.erase(a);
    }
    bool holds(const Hash& h) const {
        for (const auto& [a, txs] : senders)
            for (const auto& [nonce, t] : txs)
                if (t.hash == h) return true;
        return false;
    }

    void expire(Clock::time_point now) {
        std::vector<std::pair<Address, uint64_t>> old;
        for (const auto& [a, txs] : senders)
            for (const auto& [nonce, t] : txs)
                if (!is_pending(t) && now - t.at >= m_config.queued_lifetime)
                    old.emplace_back(a, nonce);
        for (const auto& [a, nonce] : old) erase_one(a, nonce);
    }

    /// The admission of `t` (its sequence set if admitted): the rejection code, or nullopt.
    std::optional<RejectCode> admit(ModelTx t, Clock::time_point now) {
        // A transaction still held is known even if it expires now (the pool looks it up
        // before it takes its lock, where it expires).
        const bool known = holds(t.hash);
        expire(now);
        if (known) return RejectCode::already_known;
        if (t.fee_cap < m_config.base_fee) return RejectCode::fee_cap_below_base_fee;
        const state::Account acc = account(t.sender);
        if (t.nonce < taken(t.sender)) return RejectCode::nonce_too_low;
        if (acc.balance < t.cost) return RejectCode::insufficient_funds;
        auto& txs = senders[t.sender];
        u512 sum = 0;
        for (const auto& [n, o] : txs) sum += u512{o.cost};
        const auto old = txs.find(t.nonce);
        std::vector<std::pair<Address, uint64_t>> pending_victims;
        std::optional<std::pair<Address, uint64_t>> queued_victim;
        auto refuse = [&](RejectCode c) {
            if (txs.empty()) senders.erase(t.sender);
            return c;
        };
        if (old != txs.end()) {
            const u512 need = sum - u512{old->second.cost} + u512{t.cost};
            if (t.cost > old->second.cost && need > u512{acc.balance})
                return refuse(RejectCode::insufficient_funds);
            // go-ethereum's rule: raised, and at least before × 110 / 100 (rounded down).
            auto enough = [](const u256& raised, const u256& before) {
                return raised > before && u512{raised} >= u512{before} * 110 / 100;
            };
            if (!enough(t.fee_cap, old->second.fee_cap) || !enough(t.tip_cap, old->second.tip_cap))
                return refuse(RejectCode::replacement_underpriced);
        } else {
            if (sum + u512{t.cost} > u512{acc.balance})
                return refuse(RejectCode::insufficient_funds);
            const uint64_t end = pending_end(t.sender);
            if (t.nonce > end + m_config.max_nonce_gap) return refuse(RejectCode::nonce_too_high);
            if (txs.size() >= m_config.max_per_sender) return refuse(RejectCode::account_limit);
            if (t.nonce == end) {
                size_t promoted = 0;
                while (txs.contains(t.nonce + 1 + promoted)) ++promoted;
                const size_t pending = count(true);
                if (pending + 1 + promoted > m_config.max_pending) {
                    const size_t needed = pending + 1 + promoted - m_config.max_pending;
                    // Greedy from the cheapest; a sender's lowest chosen nonce takes the rest.
                    std::map<Address, uint64_t> chosen;
                    auto freed = [&] {
                        size_t f = 0;
                        for (const auto& [a, n] : chosen) f += pending_end(a) - n;
                        return f;
                    };
                    for (const ModelTx* v : sorted(true)) {
                        if (freed() >= needed) break;
                        if (!(v->tip < t.tip)) break;
                        if (v->sender == t.sender) continue;
                        auto [it, fresh] = chosen.emplace(v->sender, v->nonce);
                        if (!fresh) it->second = std::min(it->second, v->nonce);
                    }
                    if (freed() < needed) return refuse(RejectCode::pool_full);
                    pending_victims.assign(chosen.begin(), chosen.end());
                }
            } else {
                if (queued_of(t.sender) >= m_config.max_queued_per_sender)
                    return refuse(RejectCode::account_limit);
                if (count(false) >= m_config.max_queued) {
                    for (const ModelTx* v : sorted(false)) {
                        if (!(v->tip < t.tip)) break;
                        if (v->sender == t.sender) continue;
                        queued_victim = std::pair{v->sender, v->nonce};
                        break;
                    }
                    if (!queued_victim) return refuse(RejectCode::pool_full);
                }
            }
        }
        for (const auto& [a, n] : pending_victims) erase_from(a, n);
        if (queued_victim) erase_one(queued_victim->first, queued_victim->second);
        t.sequence = m_next_sequence++;
        t.at = now;
        senders[t.sender][t.nonce] = t;
        return std::nullopt;
    }

    /// After a block: below the nonce leaves; from the first untaken transaction the balance no
    /// longer covers, the rest leaves.
    void committed(Clock::time_point now) {
        for (auto it = senders.begin(); it != senders.end();) {
            const state::Account acc = account(it->first);
            auto& txs = it->second;
            txs.erase(txs.begin(), txs.lower_bound(acc.nonce));
            u512 spent = 0;
            for (auto t = txs.begin(); t != txs.end(); ++t) {
                spent += u512{t->second.cost};
                if (t->first >= taken(it->first) && spent > u512{acc.balance}) {
                    txs.erase(t, txs.end());
                    break;
                }
            }
            it = txs.empty() ? senders.erase(it) : std::next(it);
        }
        expire(now);
    }

private:
    const Config& m_config;
    const state::MemoryState& m_state;
    uint64_t m_next_sequence{0};
};

class PoolModel : public PoolTest {
protected:
    void run(uint64_t seed) {
        std::mt19937_64 rng{seed};
        auto chance = [&](unsigned percent) { return rng() % 100 < percent; };
        auto now = Clock::time_point{} + std::chrono::hours{1};
        config = Config{};
        config.base_fee = 50;
        config.max_pending = 12;
        config.max_queued = 5;
        config.max_per_sender = 6;
        config.max_queued_per_sender = 3;
        config.max_nonce_gap = 6;
        config.queued_lifetime = std::chrono::seconds{100};
        config.clock = [&] { return now; };
        const u256 max = std::numeric_limits<u256>::max();
        constexpr uint8_t kSenders = 6;
        for (uint8_t k = 1; k <= kSenders; ++k)
            state.set_account(
                address_of_key(k),
                state::Account{0, k == kSenders ? max : u256{300'000'000 + rng() % 1'000'000'000}});
        m_pool.reset();
        Model model{config, state};

        auto check = [&](const std::string& step) {
            SCOPED_TRACE(step);
            ASSERT_EQ(pool().invariant_violation(), "");
            const Status st = pool().status();
            ASSERT_EQ(st.pending, model.count(true));
            ASSERT_EQ(st.queued, model.count(false));
            ASSERT_EQ(pool().ready(), model.sorted(true).size());
            for (const auto& [a, txs] : model.senders)
                for (const auto& [n, t] : txs) {
                    const TxPtr p = pool().find(t.hash, kLatest);
                    ASSERT_NE(p, nullptr) << "lost: nonce " << n;
                    ASSERT_EQ(p->sequence, t.sequence);
                }
            for (uint8_t k = 1; k <= kSenders; ++k) {
                const Address a = address_of_key(k);
                ASSERT_EQ(next_nonce(a), model.pending_end(a)) << "sender " << int{k};
            }
        };

        for (int step = 0; step < 300; ++step) {
            const std::string where =
                "seed " + std::to_string(seed) + " step " + std::to_string(step);
            const unsigned op = rng() % 100;
            if (op < 70) {
                const uint8_t key = static_cast<uint8_t>(1 + rng() % kSenders);
                const Address a = address_of_key(key);
                Spec spec{.key = key};
                spec.fee_cap = 100 + rng() % 900;
                spec.tip = rng() % (spec.fee_cap + 1);
                spec.value = key == kSenders ? (u256{1} << 254) + rng() % 3 : u256{rng() % 1000};
                const uint64_t end = model.pending_end(a);
                const auto held = model.senders.find(a);
                if (held != model.senders.end() && chance(25)) {
                    // A replacement: each cap bumped by 0, 1, 9, 10, 11 or 50 percent.
                    auto it = held->second.begin();
                    std::advance(it, rng() % held->second.size());
                    const unsigned bumps[] = {0, 1, 9, 10, 11, 50};
                    auto bump = [&](const u256& v) {
                        const unsigned b = bumps[rng() % 6];
                        return static_cast<u256>((u512{v} * (100 + b) + 99) / 100);
                    };
                    spec.nonce = it->first;
                    spec.fee_cap = bump(it->second.fee_cap);
                    spec.tip = std::min(bump(it->second.tip_cap), spec.fee_cap);
                } else if (chance(5)) {
                    spec.nonce = model.account(a).nonce -
                                 std::min<uint64_t>(model.account(a).nonce, 1 + rng() % 2);
                } else if (chance(10)) {
                    spec.nonce = end + 4 + rng() % 6;  // far ahead, some past the gap
                } else if (chance(20)) {
                    spec.nonce = end + 1 + rng() % 3;  // queued
                } else {
                    spec.nonce = end;
                }
                if (chance(5)) spec.fee_cap = rng() % 50;  // under the base fee
                spec.tip = std::min(spec.tip, spec.fee_cap);
                if (chance(10)) spec.type = tx::TxType::legacy;
                const Bytes raw = signed_tx(spec);
                const auto decoded = tx::decode(raw).value();
                ModelTx t{.hash = hash_of(raw),
                          .sender = a,
                          .nonce = spec.nonce,
                          .fee_cap = decoded.max_fee_per_gas,
                          .tip_cap = decoded.max_priority_fee_per_gas,
                          .cost = u256{spec.gas} * decoded.max_fee_per_gas + spec.value,
                          .tip = tx::effective_tip(decoded, config.base_fee),
                          .sequence = 0,
                          .at = {}};
                const auto expected = model.admit(t, now);
                const auto got = pool().admit_one(raw);
                ASSERT_EQ(got.has_value(), !expected.has_value())
                    << where << ": " << (got ? "admitted" : got.error().message);
                if (!got) {
                    ASSERT_EQ(got.error().code, *expected) << where << ": " << got.error().message;
                }
            } else if (op < 85) {
                // A block: take, then commit it or (sometimes) abandon it.
                const Selection s = pool().take(1 + rng() % 6, 1'000'000'000);
                for (const TxPtr& t : s.txs) {
                    ASSERT_EQ(t->tx.nonce, model.taken(t->sender)) << where;
                    ASSERT_TRUE(model.is_pending(model.senders.at(t->sender).at(t->tx.nonce)));
                    model.taken_end[t->sender] = t->tx.nonce + 1;
                }
                if (chance(20)) {
                    pool().abandon_taken();
                    model.taken_end.clear();
                } else {
                    pool().committed(next_block(), apply_to_state(s), {});
                    model.committed(now);
                }
            } else if (op < 95) {
                now += std::chrono::seconds{rng() % 40};
                if (chance(50)) {
                    pool().expire();
                    model.expire(now);
                }
            } else {
                // Another node's block spends a sender's balance (a follower imports it).
                const uint8_t key = static_cast<uint8_t>(1 + rng() % (kSenders - 1));
                auto acc = model.account(address_of_key(key));
                acc.balance /= 2;
                state.set_account(address_of_key(key), acc);
                pool().committed(next_block(), {}, std::vector<Address>{address_of_key(key)});
                model.committed(now);
            }
            check(where);
            if (HasFatalFailure()) return;
        }
    }
};

TEST_F(PoolModel, random_steps_agree_with_a_reference_model_and_keep_every_invariant) {
    for (uint64_t seed = 1; seed <= 30; ++seed) {
        for (uint8_t k = 1; k <= 8; ++k) state.set_account(address_of_key(k), state::Account{});
        run(seed);
        if (HasFatalFailure()) return;
    }
}

}  // namespace
}  // namespace barrel::pool
