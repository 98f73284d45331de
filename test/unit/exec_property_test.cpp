// exec::execute against the serial oracle (exec_oracle.hpp) on thousands of random blocks: every
// schedule (serial, levels, dynamic, automatic) at 1, 2, 4 and 8 threads must give the oracle's
// receipts, write set, gas, fees and roots, or its error (index and code), and leave the parent
// state as it was. Seeds are fixed, so a failure names a case that reproduces.

#include <barrel/core/hex.hpp>
#include <barrel/exec/dag_transfer.hpp>
#include <barrel/exec/execute.hpp>

#include "exec_oracle.hpp"
#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define BARREL_EXEC_PROPERTY_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define BARREL_EXEC_PROPERTY_SANITIZED 1
#endif
#endif

using namespace barrel;
using barrel::test::BlockBuilder;
namespace oracle = barrel::test::oracle;
using exec::DagCall;
using exec::DagFunction;
using exec::ExecError;
using exec::ExecErrorCode;
using exec::Schedule;

using test::kMax;

namespace {

#ifdef BARREL_EXEC_PROPERTY_SANITIZED
constexpr size_t kScale = 8;  // a slower build runs an eighth of the cases
#else
constexpr size_t kScale = 1;
#endif

constexpr std::array<Schedule, 4> kSchedules = {Schedule::serial, Schedule::levels,
                                                Schedule::dynamic, Schedule::automatic};
constexpr std::array<int, 4> kThreads = {1, 2, 4, 8};

// ---- the random blocks ------------------------------------------------------------------------

struct Case {
    std::string label;
    BlockBuilder b;
    state::MemoryState parent;
    oracle::State parent_copy;  ///< to prove the parent unchanged after every run
    state::Lattice
        parent_lattice;  /// any lattice: the root of every schedule must agree with the oracle's
    exec::ChainConfig config;
    Expected<oracle::Result, ExecError> expected{oracle::Result{}};

    explicit Case(const block::Header& h, uint64_t salt) : b{h, salt} {}
};

enum class Fault : uint8_t {
    nonce,
    balance,
    gas,
    fee_cap,
    overflow,
    gas_price,          ///< a legacy or EIP-2930 gas price below the base fee
    fee_cap_and_nonce,  ///< two faults in one transaction: the first in the decided order wins
    gas_and_nonce,
    gas_and_balance,
    nonce_and_balance,
};
constexpr size_t kFaults = 10;

class Generator {
public:
    explicit Generator(uint64_t seed) : m_rng{seed} {}

    std::unique_ptr<Case> valid_block(size_t n, uint64_t id);
    /// A valid block with one fault injected at a random position; nullptr if the block offers no
    /// transaction the fault applies to.
    std::unique_ptr<Case> invalid_block(size_t n, uint64_t id, Fault fault);

    uint64_t below(uint64_t n) {
        return n == 0 ? 0 : std::uniform_int_distribution<uint64_t>{0, n - 1}(m_rng);
    }
    bool chance(double p) { return std::uniform_real_distribution<double>{0, 1}(m_rng) < p; }
    u256 random_u256() {
        u256 v = 0;
        for (int i = 0; i < 4; ++i) v = (v << 64) | m_rng();
        return v;
    }

private:
    template <class T>
    const T& pick(const std::vector<T>& v) {
        return v[below(v.size())];
    }

    u256 dag_amount();
    Bytes user_name(uint64_t k, const std::vector<Address>& accounts);
    Bytes malformed(Bytes call);

    std::mt19937_64 m_rng;
};

u256 Generator::dag_amount() {
    switch (below(6)) {
        case 0: return 0;
        case 1:
        case 2: return 1 + below(1000);
        case 3: return m_rng();
        case 4: return kMax - below(1000);
        default: return random_u256();
    }
}

/// User names of every shape: short, empty, exactly a word, longer than a word, with NUL and
/// high bytes, and the 20 bytes of an account (an account key and a user key must not collide).
Bytes Generator::user_name(uint64_t k, const std::vector<Address>& accounts) {
    switch (k % 8) {
        case 0: return {};
        case 1: {
            const Address& a = accounts[below(accounts.size())];
            return Bytes(a.bytes.begin(), a.bytes.end());
        }
        case 2: return Bytes(32, static_cast<uint8_t>('a' + k % 26));
        case 3: {
            Bytes b(33 + below(80));
            for (auto& c : b) c = static_cast<uint8_t>(m_rng());
            return b;
        }
        case 4: return Bytes{0x00, static_cast<uint8_t>(k), 0xff};
        default: {
            std::string s = "user" + std::to_string(k);
            return Bytes(s.begin(), s.end());
        }
    }
}

/// One of the ways the strict ABI decoder must refuse calldata.
Bytes Generator::malformed(Bytes call) {
    switch (below(7)) {
        case 0: call.resize(below(call.size())); break;  // short, maybe < 4 bytes
        case 1: call[below(4)] ^= static_cast<uint8_t>(1 + below(255)); break;  // unknown selector
        case 2:
            call.resize(call.size() + 1 + below(40), static_cast<uint8_t>(below(2)));
            break;  // trailing
        case 3:
            call[4 + 31] = static_cast<uint8_t>(call[4 + 31] + 32);
            break;                       // first offset moved
        case 4: call[4 + 1] = 1; break;  // offset ≥ 2^240
        case 5: {                        // length past the end
            const size_t len_word = 4 + (call[4 + 31]);
            call[len_word + 28] = 0x7f;
            break;
        }
        default: {  // nonzero padding of the first name, when it has some; else trailing bytes
            const size_t len_word = 4 + call[4 + 31];
            const size_t len = load_be(BytesView{call.data() + len_word, 32}).convert_to<size_t>();
            if (len % 32 != 0) {
                call[len_word + 32 + len] = 0x01;
            } else {
                call.push_back(0);
            }
            break;
        }
    }
    return call;
}

std::unique_ptr<Case> Generator::valid_block(size_t n, uint64_t id) {
    // --- the block's profile
    const size_t n_rich = std::array<size_t, 5>{1, 2, 5, 30, std::max<size_t>(4, 2 * n)}[below(5)];
    const size_t n_hot = 1 + below(std::min<size_t>(4, n_rich));
    const double hot_ratio = std::array<double, 4>{0.0, 0.3, 0.6, 0.95}[below(4)];
    const size_t n_users = std::array<size_t, 4>{1, 3, 20, std::max<size_t>(4, n)}[below(4)];
    // Weights: transfer, DagTransfer call, malformed call, payable call, creation.
    std::array<double, 5> w{1, 1, 0.15, 0.1, 0.03};
    switch (below(5)) {
        case 0: w = {1, 0, 0, 0, 0}; break;
        case 1: w = {0.05, 1, 0.1, 0.05, 0}; break;
        case 2: w = {1, 1, 0.2, 0.2, 0.2}; break;  // barrier-heavy
        default: break;
    }
    std::discrete_distribution<int> kind_of(w.begin(), w.end());
    const std::array<u256, 5> base_fees{0, 0, 1, 7, 1'000'000'000};
    const u256 base_fee = base_fees[below(base_fees.size())];

    block::Header h;
    h.number = id;
    h.gas_limit = std::numeric_limits<uint64_t>::max();
    h.chain_id = 1;
    auto c = std::make_unique<Case>(h, id);
    c->config.base_fee = base_fee;
    c->parent_lattice =
        state::Lattice::element(BytesView{reinterpret_cast<const uint8_t*>(&id), sizeof id});
    std::ostringstream label;
    label << "case " << id << " (n=" << n << ", rich=" << n_rich << ", hot=" << n_hot << "@"
          << hot_ratio << ", users=" << n_users << ", base_fee=" << base_fee << ")";
    c->label = label.str();

    // --- accounts and users of the parent state
    std::vector<Address> rich;
    for (size_t i = 0; i < n_rich; ++i) {
        // A few addresses whose first 8 bytes are zero (hash-unfriendly keys), the rest spread.
        Address a = test::derived_address(i, id);
        if (i % 16 == 15) {
            a = Address{};
            a[17] = 1;
            a[18] = static_cast<uint8_t>(i >> 8);
            a[19] = static_cast<uint8_t>(i);
        }
        rich.push_back(a);
        const u256 balance = (u256{1} << (180 + below(40))) + random_u256() % (u256{1} << 100);
        c->parent.set_account(a, {below(3) == 0 ? 0 : below(1000), balance});
    }
    const std::vector<Address> hot(rich.begin(), rich.begin() + static_cast<std::ptrdiff_t>(n_hot));
    std::vector<Address> fresh;  // absent from the parent
    for (size_t i = 0; i < std::max<size_t>(2, n / 4); ++i)
        fresh.push_back(test::derived_address(1'000'000 + i, id));

    std::vector<BytesView> users;
    for (size_t i = 0; i < n_users; ++i) {
        const BytesView name = c->b.keep(user_name(i + below(1000) * 8, rich));
        if (std::find_if(users.begin(), users.end(), [&](BytesView u) {
                return std::equal(u.begin(), u.end(), name.begin(), name.end());
            }) != users.end())
            continue;
        users.push_back(name);
        if (chance(0.5)) {
            u256 bal;
            switch (below(4)) {
                case 0: bal = 0; break;
                case 1: bal = below(1'000'000); break;
                case 2: bal = u256{1} << 128; break;
                default: bal = kMax - below(1000); break;
            }
            c->parent.set_user(
                std::string_view{reinterpret_cast<const char*>(name.data()), name.size()}, bal);
        }
    }

    switch (below(6)) {
        case 0: c->b.block.header->coinbase = pick(hot); break;
        case 1: c->b.block.header->coinbase = pick(rich); break;
        case 2: c->b.block.header->coinbase = exec::kDagTransferAddress; break;
        case 3: c->b.block.header->coinbase = Address{}; break;
        default: c->b.block.header->coinbase = pick(fresh); break;
    }
    const Address coinbase = c->b.block.header->coinbase;

    std::unordered_map<Address, uint64_t, FixedBytesHasher> nonce;
    for (const auto& [a, acc] : c->parent.accounts()) nonce[a] = acc.nonce;
    auto pick_rich = [&]() -> const Address& { return chance(hot_ratio) ? pick(hot) : pick(rich); };
    auto pick_user = [&]() -> BytesView {
        return chance(hot_ratio) ? users[below(std::min<size_t>(2, users.size()))] : pick(users);
    };
    auto as_view = [](BytesView v) {
        return std::string_view{reinterpret_cast<const char*>(v.data()), v.size()};
    };

    for (size_t i = 0; i < n; ++i) {
        tx::Transaction t;
        // Sender: mostly the rich (hot ones with the profile's ratio); sometimes one that exists
        // only for this transaction with exactly enough balance, or none and a free transaction.
        enum { rich_sender, exact_sender, free_sender } sender_kind = rich_sender;
        const uint64_t roll = below(100);
        if (roll < 4)
            sender_kind = exact_sender;
        else if (roll < 6)
            // Price 0 is valid only while the base fee is 0 (Fault::gas_price).
            sender_kind = base_fee == 0 ? free_sender : exact_sender;
        Address from =
            sender_kind == rich_sender ? pick_rich() : test::derived_address(2'000'000 + i, id);

        // What it does.
        const int kind = kind_of(m_rng);
        switch (kind) {
            case 0: {  // value transfer
                switch (below(7)) {
                    case 0: t.to = from; break;
                    case 1: t.to = coinbase; break;
                    case 2: t.to = pick(fresh); break;
                    default: t.to = pick_rich(); break;
                }
                if (*t.to == exec::kDagTransferAddress) t.to = pick(rich);
                t.value = below(4) == 0   ? u256{0}
                          : below(3) == 0 ? u256{1 + below(1000)}
                                          : u256{m_rng() >> 1};
                if (chance(0.2)) {
                    Bytes data(below(40));
                    for (auto& b : data) b = below(3) == 0 ? 0 : static_cast<uint8_t>(m_rng());
                    t.data = c->b.keep(std::move(data));
                }
                break;
            }
            case 1:
            case 2:
            case 3: {  // DagTransfer call: well-formed, malformed, payable
                DagCall call;
                call.function = static_cast<DagFunction>(below(5));
                call.user = as_view(pick_user());
                call.to = chance(0.1) ? call.user : as_view(pick_user());
                call.amount = call.function == DagFunction::user_balance ? u256{0} : dag_amount();
                Bytes data = exec::encode_call(call);
                if (kind == 2) data = malformed(std::move(data));
                t.data = c->b.keep(std::move(data));
                t.to = exec::kDagTransferAddress;
                t.value = kind == 3 ? u256{1 + below(1000)} : u256{0};
                break;
            }
            default: {  // contract creation
                Bytes code(below(100));
                for (auto& b : code) b = static_cast<uint8_t>(m_rng());
                t.data = c->b.keep(std::move(code));
                t.value = below(2) == 0 ? u256{0} : u256{below(1000)};
                break;
            }
        }

        // Type and fees.
        const uint64_t type_roll = below(3);
        if (type_roll == 2) {
            t.type = tx::TxType::dynamic_fee;
            t.max_fee_per_gas = base_fee + below(3) * below(2'000'000'000);
            t.max_priority_fee_per_gas = below(4) == 0
                                             ? t.max_fee_per_gas
                                             : u256{below(1'000'000'000)} % (t.max_fee_per_gas + 1);
        } else {
            t.type = type_roll == 0 ? tx::TxType::legacy : tx::TxType::access_list;
            // Never below the base fee: that makes the block invalid (Fault::gas_price).
            const std::array<u256, 5> prices{base_fee, base_fee + 1,
                                             base_fee + 1 + below(1'000'000'000),
                                             base_fee + below(1'000), base_fee == 0 ? 0 : base_fee};
            t.max_fee_per_gas = t.max_priority_fee_per_gas = prices[below(prices.size())];
        }
        t.chain_id = 1;
        if (t.type != tx::TxType::legacy && chance(0.3)) {
            const size_t entries = 1 + below(2);
            for (size_t e = 0; e < entries; ++e) {
                tx::AccessListEntry entry;
                entry.address = pick(rich);
                for (size_t k = below(3); k > 0; --k)
                    entry.storage_keys.push_back(keccak256(entry.address));
                t.access_list.push_back(entry);
            }
        }
        if (sender_kind == free_sender) {
            // An account that does not exist pays nothing: legacy at price 0, no value.
            t.type = tx::TxType::legacy;
            t.access_list.clear();
            t.max_fee_per_gas = t.max_priority_fee_per_gas = 0;
            t.value = 0;
        }
        const uint64_t intrinsic = tx::intrinsic_gas(t);
        t.gas_limit = intrinsic + (chance(0.5) ? 0 : below(50'000));

        t.nonce = nonce[from];
        if (sender_kind == exact_sender) {
            const u256 upfront = u256{t.gas_limit} * t.max_fee_per_gas + t.value;
            c->parent.set_account(from, {t.nonce = below(5), upfront + below(2)});
        }
        nonce[from] = t.nonce + 1;
        c->b.add(std::move(t), from);
    }

    c->parent_copy = oracle::copy_of(c->parent);
    // The tightest header gas limit the block fits in, used exactly a third of the time.
    auto first = oracle::execute(c->b.block, c->parent_copy, c->parent_lattice, c->config);
    if (!first) {
        ADD_FAILURE() << c->label
                      << ": the generator made an invalid block: " << exec::describe(first.error());
        return c;
    }
    uint64_t tight = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t before = i == 0 ? 0 : first->receipts[i - 1].cumulative_gas_used;
        tight = std::max(tight, before + c->b.block.txs[i].gas_limit);
    }
    switch (below(3)) {
        case 0: c->b.block.header->gas_limit = tight; break;
        case 1: c->b.block.header->gas_limit = tight + below(1'000'000); break;
        default: break;
    }
    c->expected = oracle::execute(c->b.block, c->parent_copy, c->parent_lattice, c->config);
    if (!c->expected)
        ADD_FAILURE() << c->label << ": the generator made an invalid block: "
                      << exec::describe(c->expected.error());
    return c;
}

std::unique_ptr<Case> Generator::invalid_block(size_t n, uint64_t id, Fault fault) {
    auto c = valid_block(std::max<size_t>(n, 1), id);
    if (!c->expected) return nullptr;
    const auto valid = std::move(*c->expected);
    block::Block& b = c->b.block;
    const size_t size = b.size();

    // Candidates for the fault.
    std::vector<size_t> where;
    for (size_t i = 0; i < size; ++i) {
        const tx::Transaction& t = b.txs[i];
        bool ok = fault != Fault::overflow || (t.to && *t.to != exec::kDagTransferAddress &&
                                               t.value != 0 && *t.to != b.senders[i]);
        // A recipient that sent something earlier in the block no longer holds the maximum.
        for (size_t j = 0; ok && fault == Fault::overflow && j < i; ++j) ok = b.senders[j] != *t.to;
        if (ok) where.push_back(i);
    }
    if (where.empty()) return nullptr;
    const size_t i = where[below(where.size())];
    tx::Transaction& t = b.txs[i];

    auto sender_balance_before = [&]() {
        block::Block prefix;
        prefix.header = b.header;
        for (size_t k = 0; k < i; ++k) prefix.txs.push_back(b.txs[k]);
        prefix.tx_hashes.assign(b.tx_hashes.begin(),
                                b.tx_hashes.begin() + static_cast<std::ptrdiff_t>(i));
        prefix.senders.assign(b.senders.begin(),
                              b.senders.begin() + static_cast<std::ptrdiff_t>(i));
        auto r = oracle::execute(prefix, c->parent_copy, c->parent_lattice, c->config);
        if (!r) return u256{0};
        const auto it = r->final_state.accounts.find(b.senders[i]);
        u256 bal = it == r->final_state.accounts.end() ? u256{0} : it->second.balance;
        if (b.senders[i] == b.header->coinbase) bal -= r->fees;  // fees arrive after the block
        return bal;
    };
    auto break_nonce = [&]() {
        t.nonce = t.nonce > 0 && chance(0.5) ? t.nonce - 1 : t.nonce + 1 + below(3);
    };
    auto break_balance = [&]() {
        const u256 bal = sender_balance_before();
        const u256 gas_cost = u256{t.gas_limit} * t.max_fee_per_gas;
        if (bal >= gas_cost && chance(0.7)) {
            t.value = bal - gas_cost + 1;  // one wei short
        } else {
            t.value = kMax - gas_cost;
        }
    };
    auto break_gas = [&]() {
        const uint64_t before = i == 0 ? 0 : valid.receipts[i - 1].cumulative_gas_used;
        b.header->gas_limit = before + t.gas_limit - 1;
    };
    auto break_fee_cap = [&]() {
        if (c->config.base_fee == 0) {
            // Raise the base fee just above this transaction's cap. Earlier EIP-1559 transactions
            // may fall below it too: the oracle says which comes first.
            c->config.base_fee =
                t.type == tx::TxType::dynamic_fee ? t.max_fee_per_gas + 1 : u256{1};
        }
        t.type = tx::TxType::dynamic_fee;
        t.max_fee_per_gas = c->config.base_fee - 1 - below(2) % c->config.base_fee;
        t.max_priority_fee_per_gas = t.max_fee_per_gas / 2;
    };
    auto break_gas_price = [&]() {
        if (c->config.base_fee == 0) {
            // Raise the base fee just above this transaction's price; earlier transactions may
            // fall below it too: the oracle says which comes first.
            c->config.base_fee = t.max_fee_per_gas + 1;
        }
        t.type = chance(0.5) ? tx::TxType::legacy : tx::TxType::access_list;
        t.max_fee_per_gas = t.max_priority_fee_per_gas =
            c->config.base_fee - 1 - below(2) % c->config.base_fee;
    };
    ExecErrorCode want = ExecErrorCode::nonce_mismatch;
    bool exact_index = true;  // the error must be at i (else at i or before)
    switch (fault) {
        case Fault::nonce:
            break_nonce();
            want = ExecErrorCode::nonce_mismatch;
            break;
        case Fault::balance:
            break_balance();
            want = ExecErrorCode::insufficient_balance;
            break;
        case Fault::gas:
            break_gas();
            want = ExecErrorCode::block_gas_exceeded;
            exact_index = false;
            break;
        case Fault::fee_cap:
            break_fee_cap();
            want = ExecErrorCode::fee_cap_below_base_fee;
            exact_index = false;
            break;
        case Fault::gas_price:
            break_gas_price();
            want = ExecErrorCode::gas_price_below_base_fee;
            exact_index = false;
            break;
        case Fault::overflow:
            c->parent.set_account(*t.to,
                                  {c->parent.find_account(*t.to).value_or(state::Account{}).nonce,
                                   kMax - t.value + 1});
            want = ExecErrorCode::balance_overflow;
            exact_index = false;
            break;
        case Fault::fee_cap_and_nonce:
            break_nonce();
            break_fee_cap();
            want = ExecErrorCode::fee_cap_below_base_fee;
            exact_index = false;
            break;
        case Fault::gas_and_nonce:
            break_gas();
            break_nonce();
            want = ExecErrorCode::block_gas_exceeded;
            exact_index = false;
            break;
        case Fault::gas_and_balance:
            break_gas();
            t.value = kMax - u256{t.gas_limit} * t.max_fee_per_gas;
            want = ExecErrorCode::block_gas_exceeded;
            exact_index = false;
            break;
        case Fault::nonce_and_balance:
            break_balance();
            break_nonce();
            want = ExecErrorCode::nonce_mismatch;
            break;
    }
    c->label += " fault " + std::to_string(static_cast<int>(fault)) + " at " + std::to_string(i);
    c->parent_copy = oracle::copy_of(c->parent);
    c->expected = oracle::execute(b, c->parent_copy, c->parent_lattice, c->config);
    if (c->expected) {
        ADD_FAILURE() << c->label << ": the oracle accepts the block with the fault";
        return nullptr;
    }
    const ExecError e = c->expected.error();
    // A base fee raised for this transaction may catch an earlier one of the other kind first.
    const bool base_fee_fault = want == ExecErrorCode::fee_cap_below_base_fee ||
                                want == ExecErrorCode::gas_price_below_base_fee;
    if (base_fee_fault && e.tx_index < i)
        EXPECT_TRUE(e.code == ExecErrorCode::fee_cap_below_base_fee ||
                    e.code == ExecErrorCode::gas_price_below_base_fee)
            << c->label << ": " << exec::describe(e);
    else
        EXPECT_EQ(e.code, want) << c->label << ": " << exec::describe(e);
    if (exact_index) {
        EXPECT_EQ(e.tx_index, i) << c->label;
    } else {
        EXPECT_LE(e.tx_index, fault == Fault::overflow ? size - 1 : i) << c->label;
    }
    return c;
}

// ---- comparing ---------------------------------------------------------------------------------

std::string show(const exec::Receipt& r) {
    std::ostringstream o;
    o << "{status " << r.status << ", gas " << r.gas_used << ", cumulative "
      << r.cumulative_gas_used << ", output " << to_hex(r.output) << "}";
    return o.str();
}

std::string show(const block::Block& b, size_t i) {
    const tx::Transaction& t = b.txs[i];
    std::ostringstream o;
    o << "tx " << i << " type " << static_cast<int>(t.type) << " from " << to_hex(b.senders[i])
      << " nonce " << t.nonce << " to " << (t.to ? to_hex(*t.to) : std::string{"(create)"})
      << " value " << t.value << " gas " << t.gas_limit << " max_fee " << t.max_fee_per_gas
      << " prio " << t.max_priority_fee_per_gas << " data " << to_hex(t.data);
    return o.str();
}

/// "" if the outcome equals the oracle's, else the first difference.
std::string difference(const block::Block& b, const Expected<oracle::Result, ExecError>& want,
                       const Expected<exec::Outcome, ExecError>& got) {
    std::ostringstream o;
    if (!want || !got) {
        if (!want && !got && want.error() == got.error()) return {};
        o << "oracle " << (want ? std::string{"accepts"} : exec::describe(want.error()))
          << ", execute " << (got ? std::string{"accepts"} : exec::describe(got.error()));
        if (!want && want.error().tx_index < b.size())
            o << "; " << show(b, want.error().tx_index);
        else if (!got && got.error().tx_index < b.size())
            o << "; " << show(b, got.error().tx_index);
        return o.str();
    }
    const oracle::Result& w = *want;
    const exec::Outcome& g = *got;
    if (w.receipts.size() != g.receipts.size()) {
        o << "receipt count " << w.receipts.size() << " vs " << g.receipts.size();
        return o.str();
    }
    for (size_t i = 0; i < w.receipts.size(); ++i)
        if (w.receipts[i] != g.receipts[i]) {
            o << "receipt " << i << ": oracle " << show(w.receipts[i]) << ", execute "
              << show(g.receipts[i]) << "; " << show(b, i);
            return o.str();
        }
    if (w.receipt_hashes != g.receipt_hashes) return "receipt hashes differ";
    if (w.writes.accounts != g.writes.accounts) {
        o << "account writes differ (" << w.writes.accounts.size() << " vs "
          << g.writes.accounts.size() << ")";
        for (size_t k = 0; k < std::max(w.writes.accounts.size(), g.writes.accounts.size()); ++k) {
            const bool in_w = k < w.writes.accounts.size();
            const bool in_g = k < g.writes.accounts.size();
            if (in_w && in_g && w.writes.accounts[k] == g.writes.accounts[k]) continue;
            if (in_w)
                o << "; oracle " << to_hex(w.writes.accounts[k].first) << " nonce "
                  << w.writes.accounts[k].second.nonce << " balance "
                  << w.writes.accounts[k].second.balance;
            if (in_g)
                o << "; execute " << to_hex(g.writes.accounts[k].first) << " nonce "
                  << g.writes.accounts[k].second.nonce << " balance "
                  << g.writes.accounts[k].second.balance;
            break;
        }
        return o.str();
    }
    if (w.writes.users != g.writes.users) {
        o << "user writes differ (" << w.writes.users.size() << " vs " << g.writes.users.size()
          << ")";
        for (size_t k = 0; k < std::max(w.writes.users.size(), g.writes.users.size()); ++k) {
            const bool in_w = k < w.writes.users.size();
            const bool in_g = k < g.writes.users.size();
            if (in_w && in_g && w.writes.users[k] == g.writes.users[k]) continue;
            if (in_w)
                o << "; oracle " << to_hex(as_bytes(w.writes.users[k].first)) << " = "
                  << w.writes.users[k].second;
            if (in_g)
                o << "; execute " << to_hex(as_bytes(g.writes.users[k].first)) << " = "
                  << g.writes.users[k].second;
            break;
        }
        return o.str();
    }
    if (w.gas_used != g.gas_used) o << "gas used " << w.gas_used << " vs " << g.gas_used << "; ";
    if (w.fees != g.fees) o << "fees " << w.fees << " vs " << g.fees << "; ";
    if (w.txs_root != g.txs_root) o << "txs_root differs; ";
    if (w.receipts_root != g.receipts_root) o << "receipts_root differs; ";
    if (w.state_root != g.state_root) o << "state_root differs; ";
    return o.str();
}

/// Runs every case under every schedule and thread count against its expected outcome.
void check_all(const std::vector<std::unique_ptr<Case>>& cases) {
    size_t failures = 0;
    for (const int threads : kThreads) {
        tbb::global_control limit{tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(threads)};
        tbb::task_arena arena{threads};
        arena.execute([&] {
            ASSERT_EQ(tbb::this_task_arena::max_concurrency(), threads);
            for (const auto& c : cases) {
                for (const Schedule s : kSchedules) {
                    const auto got =
                        exec::execute(c->b.block, c->parent, c->parent_lattice, c->config, {s});
                    const std::string diff = difference(c->b.block, c->expected, got);
                    if (!diff.empty()) {
                        ADD_FAILURE() << c->label << ", schedule " << exec::to_string(s) << ", "
                                      << threads << " threads: " << diff;
                        if (++failures >= 12) FAIL() << "too many failures, stopping";
                        continue;
                    }
                    if (got) {
                        const Schedule used = got->dag.used;
                        const bool ok = threads == 1 ? used == Schedule::serial
                                        : s == Schedule::automatic
                                            ? used == Schedule::serial || used == Schedule::dynamic
                                            : used == s;
                        EXPECT_TRUE(ok) << c->label << ": asked " << exec::to_string(s) << ", used "
                                        << exec::to_string(used);
                        EXPECT_EQ(got->dag.transactions, c->b.block.size());
                    }
                }
                if (oracle::copy_of(c->parent) != c->parent_copy) {
                    ADD_FAILURE() << c->label << ": the parent state changed";
                    if (++failures >= 12) FAIL() << "too many failures, stopping";
                }
            }
        });
        if (failures >= 12) return;
    }
}

/// What the valid cases exercise, so that a generator change cannot quietly drop a behaviour.
void expect_coverage(const std::vector<std::unique_ptr<Case>>& cases) {
    std::map<std::string, size_t> seen;
    for (const auto& c : cases) {
        if (!c->expected) continue;
        const block::Block& b = c->b.block;
        std::set<Address> senders;
        if (c->config.base_fee != 0) ++seen["base fee > 0"];
        if (b.size() == 0) ++seen["empty block"];
        uint64_t tight = 0;
        for (size_t i = 0; i < b.size(); ++i)
            tight = std::max(tight, c->expected->receipts[i].cumulative_gas_used -
                                        c->expected->receipts[i].gas_used + b.txs[i].gas_limit);
        if (b.size() > 0 && tight == b.header->gas_limit) ++seen["tight header gas limit"];
        for (size_t i = 0; i < b.size(); ++i) {
            const tx::Transaction& t = b.txs[i];
            const exec::Receipt& r = c->expected->receipts[i];
            ++seen["type " + std::to_string(static_cast<int>(t.type))];
            if (t.type == tx::TxType::dynamic_fee && c->config.base_fee != 0)
                ++seen["EIP-1559 with base fee"];
            if (!senders.insert(b.senders[i]).second) ++seen["repeated sender"];
            if (!c->parent.find_account(b.senders[i])) ++seen["sender absent from the parent"];
            if (b.senders[i] == b.header->coinbase) ++seen["from the coinbase"];
            if (!t.to) {
                ++seen["creation"];
                continue;
            }
            if (*t.to == exec::kDagTransferAddress) {
                const auto call = exec::decode_call(t.data);
                if (!call) {
                    ++seen["malformed call"];
                } else if (t.value != 0) {
                    ++seen["payable call"];
                } else {
                    const u256 code = load_be(BytesView{r.output.data(), 32});
                    std::string name =
                        "call " + std::to_string(static_cast<int>(call->function)) + " code ";
                    name += code == 0 ? "0" : "-" + to_decimal(kMax - code + 1);
                    ++seen[name];
                }
                continue;
            }
            if (*t.to == b.senders[i]) ++seen["self-transfer"];
            if (t.value == 0) ++seen["zero-value transfer"];
            if (*t.to == b.header->coinbase) ++seen["to the coinbase"];
            if (!c->parent.find_account(*t.to)) ++seen["to an absent account"];
            if (!t.data.empty()) ++seen["transfer with calldata"];
        }
    }
    const char* wanted[] = {
        "base fee > 0",
        "empty block",
        "tight header gas limit",
        "type 0",
        "type 1",
        "type 2",
        "EIP-1559 with base fee",
        "repeated sender",
        "sender absent from the parent",
        "from the coinbase",
        "creation",
        "malformed call",
        "payable call",
        "self-transfer",
        "zero-value transfer",
        "to the coinbase",
        "to an absent account",
        "transfer with calldata",
        "call 0 code 0",
        "call 0 code -51400",
        "call 0 code -51403",  // userAdd
        "call 1 code 0",
        "call 1 code -51400",
        "call 1 code -51401",
        "call 1 code -51405",  // userSave
        "call 2 code 0",
        "call 2 code -51400",
        "call 2 code -51401",
        "call 2 code -51402",  // userDraw
        "call 2 code -51404",
        "call 3 code 0",
        "call 3 code -51400",
        "call 3 code -51402",  // userBalance
        "call 4 code 0",
        "call 4 code -51400",
        "call 4 code -51401",
        "call 4 code -51402",  // userTransfer
        "call 4 code -51404",
        "call 4 code -51405",
    };
    std::ostringstream all;
    for (const auto& [name, count] : seen) all << name << ": " << count << "\n";
    for (const char* w : wanted)
        EXPECT_GT(seen[w], 0u) << "never generated: " << w << "\n" << all.str();
}

// ---- the tests ---------------------------------------------------------------------------------

TEST(exec_property, random_blocks_match_oracle) {
    std::vector<std::unique_ptr<Case>> cases;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
        Generator g{seed * 0x9e3779b97f4a7c15ull};
        const size_t count = 400 / kScale;
        for (size_t k = 0; k < count; ++k) {
            // Sizes 0..300, with the small ones (where edge cases meet) over-represented.
            const size_t n = k % 4 == 0 ? g.below(12) : g.below(301);
            cases.push_back(g.valid_block(n, seed * 100'000 + k));
        }
    }
    expect_coverage(cases);
    check_all(cases);
    // exec::gas_used, from the transaction alone, is what the oracle's receipts say it used.
    for (const auto& c : cases) {
        if (!c->expected) continue;
        for (size_t i = 0; i < c->b.block.size(); ++i)
            ASSERT_EQ(exec::gas_used(c->b.block.txs[i]), c->expected->receipts[i].gas_used)
                << "block " << c->b.block.header->number << ", transaction " << i;
    }
}

TEST(exec_property, invalid_blocks_rejected_alike) {
    std::vector<std::unique_ptr<Case>> cases;
    size_t per_fault[kFaults] = {};
    for (uint64_t seed = 11; seed <= 12; ++seed) {
        Generator g{seed * 0x9e3779b97f4a7c15ull};
        const size_t count = 400 / kScale;
        for (size_t k = 0; k < count; ++k) {
            const auto fault = static_cast<Fault>(k % kFaults);
            auto c = g.invalid_block(g.below(301), seed * 100'000 + k, fault);
            if (!c) continue;
            ++per_fault[static_cast<size_t>(fault)];
            cases.push_back(std::move(c));
        }
    }
    for (size_t f = 0; f < kFaults; ++f)
        EXPECT_GT(per_fault[f], 0u) << "fault " << f << " never injected";
    check_all(cases);
}

TEST(exec_property, full_size_blocks_match_oracle) {
    std::vector<std::unique_ptr<Case>> cases;
    Generator g{0xb10c5};
    const size_t count = kScale == 1 ? 4 : 1;
    for (size_t k = 0; k < count; ++k) cases.push_back(g.valid_block(2'500, 900'000 + k));
    auto bad = g.invalid_block(2'500, 900'100, Fault::nonce);
    if (bad) cases.push_back(std::move(bad));
    check_all(cases);
}

}  // namespace
