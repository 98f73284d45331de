// Property tests over randomly generated, signed transactions of every type (fixed seed, so a
// failure reproduces): encode → decode is the identity, the encoding is canonical, the sender
// recovers, validate agrees with an independent oracle, and no single-byte change of an encoding
// can pass as a transaction from the original sender. Plus the EIP-155 known answer.

#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/tx/transaction.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace barrel;
using namespace barrel::literals;
using tx::Transaction;
using tx::TxErrorCode;
using tx::TxType;

namespace {

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
const u256 kHalfN{"0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0"};

/// A transaction with the storage its calldata view points into.
struct Generated {
    Transaction tx;
    Bytes data;
    Hash key;
    std::string label;  ///< for failure messages
};

class Generator {
public:
    explicit Generator(uint64_t seed) : m_rng{seed} {}

    uint64_t below(uint64_t n) { return std::uniform_int_distribution<uint64_t>{0, n - 1}(m_rng); }
    bool chance(unsigned percent) { return below(100) < percent; }
    uint8_t byte() { return static_cast<uint8_t>(m_rng()); }

    /// Mostly uniform over byte lengths 0..32 (so small and huge values are both common), plus
    /// the edges 0, 1, 2^k, 2^k - 1 and 2^256 - 1.
    u256 u256_value() {
        switch (below(8)) {
            case 0: return 0;
            case 1: return below(256);
            case 2: return ~u256{0};
            case 3: {
                const u256 p = u256{1} << below(256);
                return chance(50) ? p : p - 1;
            }
            default: {
                uint8_t be[32];
                const size_t len = below(33);
                for (size_t i = 0; i < len; ++i) be[i] = byte();
                return load_be({be, len});
            }
        }
    }

    uint64_t u64_value() {
        switch (below(8)) {
            case 0: return 0;
            case 1: return below(256);
            case 2: return kU64Max;
            case 3: return kU64Max - 1;
            case 4: return uint64_t{1} << below(64);
            default: return m_rng() >> below(64);
        }
    }

    template <size_t N>
    FixedBytes<N> fixed() {
        FixedBytes<N> out;
        for (auto& b : out.bytes) b = byte();
        return out;
    }

    Generated transaction() {
        Generated g;
        Transaction& t = g.tx;
        static const uint64_t kLegacyChains[] = {1, 56, (uint64_t{1} << 32) + 5, uint64_t{1} << 63};
        switch (below(6)) {
            case 0:
                t.type = TxType::legacy;
                g.label = "legacy pre-155";
                break;
            case 1:
            case 2:
                t.type = TxType::legacy;
                t.chain_id = kLegacyChains[below(4)];
                g.label = "legacy 155";
                break;
            case 3:
                t.type = TxType::access_list;
                t.chain_id = u64_value();
                g.label = "type 1";
                break;
            default:
                t.type = TxType::dynamic_fee;
                t.chain_id = u64_value();
                g.label = "type 2";
                break;
        }
        t.nonce = u64_value();
        t.max_fee_per_gas = u256_value();
        if (t.type == TxType::dynamic_fee) {
            // Mostly within the cap, sometimes any value.
            t.max_priority_fee_per_gas = chance(80) && t.max_fee_per_gas != 0
                                             ? t.max_fee_per_gas / (below(4) + 1)
                                             : u256_value();
        } else {
            t.max_priority_fee_per_gas = t.max_fee_per_gas;  // decode fills both from the gas price
        }
        if (chance(80)) t.to = fixed<20>();
        t.value = u256_value();
        g.data.resize(below(301));
        for (auto& b : g.data) b = chance(33) ? 0 : byte();
        if (t.type != TxType::legacy) {
            t.access_list.resize(below(5));
            for (auto& e : t.access_list) {
                e.address = fixed<20>();
                e.storage_keys.resize(below(5));
                for (auto& k : e.storage_keys) k = fixed<32>();
            }
        }
        t.data = g.data;
        // Gas limit: around the intrinsic gas (both sides of it), or anything.
        const uint64_t intrinsic = tx::intrinsic_gas(t);
        switch (below(4)) {
            case 0: t.gas_limit = intrinsic; break;
            case 1: t.gas_limit = intrinsic - 1 - below(100); break;
            case 2: t.gas_limit = intrinsic + below(1'000'000); break;
            default: t.gas_limit = u64_value(); break;
        }
        g.key = fixed<32>();
        return g;
    }

private:
    std::mt19937_64 m_rng;
};

/// An independent statement of the stateless rules: every code the transaction deserves.
/// (validate() may report any one of them; the order is its own business.)
std::set<TxErrorCode> violations(const Transaction& t, uint64_t chain_id) {
    std::set<TxErrorCode> out;
    if (t.chain_id && *t.chain_id != chain_id) out.insert(TxErrorCode::wrong_chain_id);
    if (t.nonce == kU64Max) out.insert(TxErrorCode::nonce_too_big);
    uint64_t gas = 21'000;
    if (!t.to) gas += 32'000 + 2 * ((t.data.size() + 31) / 32);
    for (uint8_t b : t.data) gas += b ? 16 : 4;
    for (const auto& e : t.access_list) gas += 2'400 + 1'900 * e.storage_keys.size();
    if (t.gas_limit < gas) out.insert(TxErrorCode::intrinsic_gas_too_low);
    if (u512{t.gas_limit} * u512{t.max_fee_per_gas} > u512{~u256{0}})
        out.insert(TxErrorCode::fee_cap_overflow);
    if (t.max_priority_fee_per_gas > t.max_fee_per_gas)
        out.insert(TxErrorCode::priority_fee_above_cap);
    if (!t.to && t.data.size() > tx::kMaxInitCodeSize) out.insert(TxErrorCode::init_code_too_large);
    if (t.s > kHalfN) out.insert(TxErrorCode::high_s);
    return out;
}

void expect_validate_matches_oracle(const Transaction& t, uint64_t chain_id,
                                    const std::string& label) {
    const auto expected = violations(t, chain_id);
    const auto result = tx::validate(t, chain_id);
    if (expected.empty()) {
        EXPECT_TRUE(result) << label << ": " << tx::describe(result.error());
    } else if (!result) {
        EXPECT_TRUE(expected.count(result.error().code))
            << label << ": unexpected " << tx::describe(result.error());
    } else {
        ADD_FAILURE() << label << ": validate passed, but the oracle finds "
                      << tx::to_string(*expected.begin());
    }
}

/// Changes enc[pos] to another value and checks that the result cannot pass as a transaction
/// of `sender`: it must fail to decode, to validate or to recover, or recover someone else.
/// Returns true if the mutant was a fully valid transaction (of someone else).
bool check_mutant(Bytes enc, size_t pos, uint8_t x, const Transaction& original,
                  const Address& sender, const std::string& label) {
    enc[pos] ^= x;  // x != 0
    const auto decoded = tx::decode(enc);
    if (!decoded) return false;
    const std::string where = label + ", byte " + std::to_string(pos) + " ^ " + std::to_string(x);
    // Strict decoding is canonical: what decodes re-encodes to the same bytes, so a different
    // encoding is a different transaction with a different hash.
    EXPECT_EQ(tx::encode(*decoded), enc) << where;
    EXPECT_FALSE(*decoded == original) << where;
    if (!tx::validate(*decoded, decoded->chain_id.value_or(1))) return false;
    const auto recovered = tx::recover_sender(*decoded, tx::signing_hash(*decoded));
    if (!recovered) return false;
    EXPECT_NE(*recovered, sender) << where << ": a modified encoding recovers the original sender";
    return true;
}

}  // namespace

TEST(tx_roundtrip, random_transactions) {
    constexpr size_t kCount = 3'000;
    Generator gen{0xba22e1};
    size_t by_type[3] = {}, pre155 = 0, creations = 0, valid = 0, with_access_list = 0,
           big_values = 0;
    size_t mutants = 0, mutants_valid = 0;

    for (size_t i = 0; i < kCount; ++i) {
        Generated g = gen.transaction();
        Transaction& t = g.tx;
        const std::string label = "tx " + std::to_string(i) + " (" + g.label + ")";
        auto sender = tx::address_of(g.key);
        if (!sender) {  // not a valid secret (probability ~2^-128); draw another key
            g.key = gen.fixed<32>();
            sender = tx::address_of(g.key);
        }
        ASSERT_TRUE(sender) << label;
        ASSERT_TRUE(tx::sign(t, g.key)) << label;
        EXPECT_LE(t.s, kHalfN) << label << ": sign must produce low s";

        const Bytes enc = tx::encode(t);
        if (t.type == TxType::legacy)
            EXPECT_GE(enc[0], 0xc0) << label;
        else
            EXPECT_EQ(enc[0], static_cast<uint8_t>(t.type)) << label;
        const auto decoded = tx::decode(enc);
        ASSERT_TRUE(decoded) << label << ": " << tx::describe(decoded.error()) << "\n"
                             << to_hex(enc);
        EXPECT_TRUE(*decoded == t) << label << ": decode(encode(tx)) != tx\n" << to_hex(enc);
        EXPECT_EQ(tx::encode(*decoded), enc) << label;
        EXPECT_EQ(tx::signing_hash(*decoded), tx::signing_hash(t)) << label;
        EXPECT_EQ(tx::hash_of(enc), keccak256(enc)) << label;

        const auto recovered = tx::recover_sender(*decoded, tx::signing_hash(*decoded));
        ASSERT_TRUE(recovered) << label << ": " << tx::describe(recovered.error());
        EXPECT_EQ(*recovered, *sender) << label;

        // validate, on the transaction's own chain and on another one.
        const uint64_t own_chain = t.chain_id.value_or(1);
        expect_validate_matches_oracle(*decoded, own_chain, label);
        expect_validate_matches_oracle(*decoded, own_chain ^ 0x10, label + " on another chain");
        if (violations(*decoded, own_chain).empty()) ++valid;

        // Single-byte modifications: every byte for some transactions, otherwise a few random
        // bytes plus a few in the signature (the last 67 bytes hold v, r and s).
        if (i % 32 == 0) {
            for (size_t pos = 0; pos < enc.size(); ++pos) {
                mutants_valid += check_mutant(enc, pos, static_cast<uint8_t>(1u << gen.below(8)), t,
                                              *sender, label);
                ++mutants;
            }
        } else {
            for (int k = 0; k < 6; ++k) {
                const size_t pos =
                    k < 3 ? gen.below(enc.size())
                          : enc.size() - 1 - gen.below(std::min<size_t>(67, enc.size()));
                const auto x = static_cast<uint8_t>(gen.below(255) + 1);
                mutants_valid += check_mutant(enc, pos, x, t, *sender, label);
                ++mutants;
            }
        }

        ++by_type[static_cast<size_t>(t.type)];
        pre155 += t.type == TxType::legacy && !t.chain_id;
        creations += t.is_creation();
        with_access_list += !t.access_list.empty();
        big_values += t.value > (u256{1} << 200);
        if (HasFatalFailure()) return;
    }
    std::cout << "tx_roundtrip: " << kCount << " transactions (" << by_type[0]
              << " legacy of which " << pre155 << " pre-EIP-155, " << by_type[1] << " type 1, "
              << by_type[2] << " type 2; " << creations << " creations, " << with_access_list
              << " with access lists, " << big_values << " values > 2^200, " << valid << " valid); "
              << mutants << " single-byte mutants, " << mutants_valid
              << " of them valid transactions of other senders\n";
    // The generator must actually reach every kind it is meant to.
    EXPECT_GT(pre155, kCount / 20);
    EXPECT_GT(by_type[1], kCount / 10);
    EXPECT_GT(by_type[2], kCount / 5);
    EXPECT_GT(creations, kCount / 10);
    EXPECT_GT(with_access_list, kCount / 10);
    EXPECT_GT(big_values, kCount / 20);
    EXPECT_GT(valid, kCount / 10);
    EXPECT_LT(valid, kCount - kCount / 10);
    EXPECT_GT(mutants_valid, 0u);  // some mutants are valid, so the recovery check is exercised
}

// The legacy EIP-155 chain ids the design names, including ones whose v needs more than 8 bytes.
TEST(tx_roundtrip, legacy_chain_ids) {
    const Hash key =
        Hash::from_view("4646464646464646464646464646464646464646464646464646464646464646"_hex);
    for (uint64_t chain :
         {uint64_t{1}, uint64_t{56}, (uint64_t{1} << 32) + 5, uint64_t{1} << 63, kU64Max}) {
        Transaction t;
        t.chain_id = chain;
        t.gas_limit = 21'000;
        t.to = Address{};
        ASSERT_TRUE(tx::sign(t, key));
        const Bytes enc = tx::encode(t);
        const auto d = tx::decode(enc);
        ASSERT_TRUE(d) << chain;
        EXPECT_EQ(d->chain_id, std::optional<uint64_t>{chain});
        EXPECT_TRUE(*d == t) << chain;
        EXPECT_EQ(tx::encode(*d), enc) << chain;
        EXPECT_TRUE(tx::validate(*d, chain)) << chain;
        EXPECT_EQ(tx::recover_sender(*d, tx::signing_hash(*d)).value(), tx::address_of(key).value())
            << chain;
    }
}

// EIP-155's worked example (https://eips.ethereum.org/EIPS/eip-155).
TEST(tx_roundtrip, eip155_known_answer) {
    const Hash key =
        Hash::from_view("4646464646464646464646464646464646464646464646464646464646464646"_hex);
    Transaction t;
    t.type = TxType::legacy;
    t.chain_id = 1;
    t.nonce = 9;
    t.max_fee_per_gas = t.max_priority_fee_per_gas = 20'000'000'000ull;
    t.gas_limit = 21'000;
    t.to = Address::from_view("3535353535353535353535353535353535353535"_hex);
    t.value = 1'000'000'000'000'000'000ull;

    // Signing data and hash as the EIP gives them.
    EXPECT_EQ(
        keccak256(
            "ec098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a764000080018080"_hex),
        tx::signing_hash(t));
    EXPECT_EQ(to_hex(tx::signing_hash(t)),
              "0xdaf5a779ae972f972197303d7b574746c7ef83eadac0f2791ad23db92e4c8e53");

    ASSERT_TRUE(tx::sign(t, key));
    EXPECT_FALSE(t.y_parity);  // v = 37
    EXPECT_EQ(
        t.r, u256{"18515461264373351373200002665853028612451056578545711640558177340181847433846"});
    EXPECT_EQ(
        t.s, u256{"46948507304638947509940763649030358759909902576025900602547168820602576006531"});
    const Bytes expected =
        "f86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83"_hex;
    EXPECT_EQ(to_hex(tx::encode(t)), to_hex(expected));

    const auto d = tx::decode(expected);
    ASSERT_TRUE(d);
    EXPECT_TRUE(*d == t);
    EXPECT_TRUE(tx::validate(*d, 1));
    const auto sender = tx::recover_sender(*d, tx::signing_hash(*d));
    ASSERT_TRUE(sender);
    EXPECT_EQ(*sender, tx::address_of(key).value());
    EXPECT_EQ(to_hex(*sender), "0x9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f");
}

TEST(tx_roundtrip, sign_rejects_invalid_keys) {
    Transaction t;
    t.gas_limit = 21'000;
    EXPECT_FALSE(tx::sign(t, Hash{}));  // zero
    const Hash n =
        Hash::from_view("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"_hex);
    EXPECT_FALSE(tx::sign(t, n));  // the group order
    EXPECT_FALSE(tx::address_of(Hash{}).has_value());
    EXPECT_FALSE(tx::address_of(n).has_value());
}
