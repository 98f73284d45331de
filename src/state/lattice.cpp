// The state commitment (docs/formats.md, "State commitment"; DESIGN: SIMD-0215's lattice hash).
//
// An element is the 2,048-byte keystream of ChaCha20 (OpenSSL 3) under a 256-bit key that
// BLAKE3 derives from the entry's encoding, in derive-key mode with barrel's own context
// string. ChaCha20 and AES-256-CTR were the fastest sound expansions measured here, tied
// (docs/benchmarks.md, "State commitment"): BLAKE3 1.3.1's own XOF produces its 32 output blocks
// one compression at a time, OpenSSL's ciphers run the 32 blocks through SIMD lanes at once.
// ChaCha20 is kept: under keys that are hash outputs it has no related-key question, and its
// keystream is a public function of the key as BLAKE3's XOF output is of its chaining value:
// both are a ChaCha-style permutation in counter mode, ChaCha20 with 20 rounds to BLAKE3's 7.

#include <barrel/rlp/encode.hpp>
#include <barrel/state/lattice.hpp>

#include "core/parallel.hpp"
#include <blake3.h>
#include <openssl/evp.h>
#include <tbb/combinable.h>

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace barrel::state {

namespace {

constexpr uint8_t kAccountKind = 0x01;
constexpr uint8_t kUserKind = 0x02;

/// BLAKE3 derive-key contexts (globally unique, hard-coded, as BLAKE3's authors ask of them).
constexpr const char* kElementContext = "barrel 2026-11-28 state lattice element v1";
constexpr const char* kRootContext = "barrel 2026-11-28 state lattice root v1";

/// RLP([kind ‖ key, value]) with `value` already encoded, appended to `out` with no buffer of its
/// own (the hot path of the commitment encodes two entries per written key).
void encode_entry_of(Bytes& out, uint8_t kind, BytesView key, BytesView value) {
    // kind ‖ key is at least 2 bytes (an address, a non-empty name) or starts with a kind byte
    // below 0x80 alone: either way a string header, as rlp::encode would write.
    const size_t key_length = 1 + key.size();
    const size_t key_header = key_length == 1 ? 0 : rlp::header_length(key_length);
    const size_t payload = key_header + key_length + value.size();
    out.reserve(out.size() + rlp::header_length(payload) + payload);
    rlp::encode_header(out, {.list = true, .payload_length = payload});
    if (key_header != 0) rlp::encode_header(out, {.list = false, .payload_length = key_length});
    out.push_back(kind);
    out.insert(out.end(), key.begin(), key.end());
    out.insert(out.end(), value.begin(), value.end());
}

/// The OpenSSL cipher context of this thread: fetched and set up once, then only re-keyed.
/// Re-keying an initialised context skips the provider look-up that a fresh init pays (about a
/// tenth of an element's time, measured: 708 → 621 ns).
class ChaChaStream {
public:
    ChaChaStream()
        : m_ctx{EVP_CIPHER_CTX_new()}, m_cipher{EVP_CIPHER_fetch(nullptr, "ChaCha20", nullptr)} {
        static constexpr uint8_t kZeroKey[32] = {};
        static constexpr uint8_t kZeroIv[16] = {};
        if (!m_ctx || !m_cipher ||
            EVP_EncryptInit_ex2(m_ctx.get(), m_cipher.get(), kZeroKey, kZeroIv, nullptr) != 1)
            fatal("ChaCha20 is not available from OpenSSL");
    }

    /// out = ChaCha20 keystream of `key`, block counter 0 and nonce 0 (IV: 16 zero bytes).
    void keystream(const uint8_t (&key)[32], std::span<uint8_t, Lattice::kBytes> out) {
        static constexpr uint8_t kZeroIv[16] = {};
        static constexpr uint8_t kZeros[Lattice::kBytes] = {};
        int written = 0;
        if (EVP_EncryptInit_ex2(m_ctx.get(), nullptr, key, kZeroIv, nullptr) != 1 ||
            EVP_EncryptUpdate(m_ctx.get(), out.data(), &written, kZeros, Lattice::kBytes) != 1 ||
            written != static_cast<int>(Lattice::kBytes))
            fatal("OpenSSL's ChaCha20 failed");
    }

private:
    /// The commitment cannot be computed without its cipher, and a wrong root must never be
    /// written: there is nothing to go on with.
    [[noreturn]] static void fatal(const char* what) {
        std::fprintf(stderr, "barrel: state commitment: %s\n", what);
        std::abort();
    }
    struct FreeCtx {
        void operator()(EVP_CIPHER_CTX* c) const noexcept { EVP_CIPHER_CTX_free(c); }
    };
    struct FreeCipher {
        void operator()(EVP_CIPHER* c) const noexcept { EVP_CIPHER_free(c); }
    };
    std::unique_ptr<EVP_CIPHER_CTX, FreeCtx> m_ctx;
    std::unique_ptr<EVP_CIPHER, FreeCipher> m_cipher;
};

/// A BLAKE3 hasher already set up in derive-key mode for `context`: derive-key mode hashes the
/// context string first, which would cost a compression per element; a copy of the set-up hasher
/// skips it.
class DerivedHasher {
public:
    explicit DerivedHasher(const char* context) noexcept {
        blake3_hasher_init_derive_key(&m_ready, context);
    }
    void hash(BytesView input, uint8_t* out, size_t length) const noexcept {
        blake3_hasher h = m_ready;
        blake3_hasher_update(&h, input.data(), input.size());
        blake3_hasher_finalize(&h, out, length);
    }

private:
    blake3_hasher m_ready;
};

const DerivedHasher& element_hasher() noexcept {
    static const DerivedHasher h{kElementContext};
    return h;
}

/// The element's 2,048 bytes.
void expand(BytesView encoded_entry, std::span<uint8_t, Lattice::kBytes> out) noexcept {
    uint8_t key[32];
    element_hasher().hash(encoded_entry, key, sizeof key);
    thread_local ChaChaStream stream;
    stream.keystream(key, out);
}

/// Lane i of an element is bytes 2i and 2i+1, little-endian.
inline uint16_t lane(const uint8_t* bytes, size_t i) noexcept {
    uint16_t v;
    std::memcpy(&v, bytes + 2 * i, sizeof v);
    if constexpr (std::endian::native == std::endian::big)
        v = static_cast<uint16_t>((v >> 8) | (v << 8));
    return v;
}

}  // namespace

void encode_entry(Bytes& out, const Address& address, const Account& account) {
    // RLP([nonce, balance]), at most 1 + 9 + 33 bytes, in a buffer the thread keeps.
    thread_local Bytes value;
    value.clear();
    const size_t payload =
        rlp::encoded_length(account.nonce) + rlp::encoded_length(account.balance);
    rlp::encode_header(value, {.list = true, .payload_length = payload});
    rlp::encode(value, account.nonce);
    rlp::encode(value, account.balance);
    encode_entry_of(out, kAccountKind, address.view(), value);
}

void encode_entry(Bytes& out, std::string_view name, const u256& balance) {
    thread_local Bytes value;
    value.clear();
    rlp::encode(value, balance);
    encode_entry_of(out, kUserKind, as_bytes(name), value);
}

Lattice Lattice::element(BytesView encoded_entry) noexcept {
    Lattice l;
    l.add(encoded_entry);
    return l;
}

Lattice Lattice::element(const Address& address, const Account& account) {
    Bytes e;
    encode_entry(e, address, account);
    return element(e);
}

Lattice Lattice::element(std::string_view name, const u256& balance) {
    Bytes e;
    encode_entry(e, name, balance);
    return element(e);
}

void Lattice::add(BytesView encoded_entry) noexcept {
    alignas(64) uint8_t bytes[kBytes];
    expand(encoded_entry, bytes);
    for (size_t i = 0; i < kLanes; ++i)
        m_lanes[i] = static_cast<uint16_t>(m_lanes[i] + lane(bytes, i));
}

void Lattice::remove(BytesView encoded_entry) noexcept {
    alignas(64) uint8_t bytes[kBytes];
    expand(encoded_entry, bytes);
    for (size_t i = 0; i < kLanes; ++i)
        m_lanes[i] = static_cast<uint16_t>(m_lanes[i] - lane(bytes, i));
}

Lattice& Lattice::operator+=(const Lattice& other) noexcept {
    for (size_t i = 0; i < kLanes; ++i)
        m_lanes[i] = static_cast<uint16_t>(m_lanes[i] + other.m_lanes[i]);
    return *this;
}

Lattice& Lattice::operator-=(const Lattice& other) noexcept {
    for (size_t i = 0; i < kLanes; ++i)
        m_lanes[i] = static_cast<uint16_t>(m_lanes[i] - other.m_lanes[i]);
    return *this;
}

bool Lattice::is_zero() const noexcept {
    for (uint16_t v : m_lanes)
        if (v != 0) return false;
    return true;
}

void Lattice::to_bytes(std::span<uint8_t, kBytes> out) const noexcept {
    for (size_t i = 0; i < kLanes; ++i) {
        out[2 * i] = static_cast<uint8_t>(m_lanes[i]);
        out[2 * i + 1] = static_cast<uint8_t>(m_lanes[i] >> 8);
    }
}

Bytes Lattice::bytes() const {
    Bytes out(kBytes);
    to_bytes(std::span<uint8_t, kBytes>{out.data(), kBytes});
    return out;
}

std::optional<Lattice> Lattice::from_bytes(BytesView bytes) noexcept {
    if (bytes.size() != kBytes) return std::nullopt;
    Lattice l;
    for (size_t i = 0; i < kLanes; ++i) l.m_lanes[i] = lane(bytes.data(), i);
    return l;
}

Hash Lattice::root() const noexcept {
    alignas(64) uint8_t bytes[kBytes];
    to_bytes(bytes);
    static const DerivedHasher root_hasher{kRootContext};
    Hash h;
    root_hasher.hash(BytesView{bytes, kBytes}, h.data(), Hash::size());
    return h;
}

namespace {

/// Sums f(acc, i) over i in [0, n) into `acc`: one accumulator per worker (tbb::combinable), then
/// their sum; addition mod 2^16 commutes, so the split does not change the result.
template <class F>
void sum_entries(Lattice& acc, size_t n, bool parallel, F&& f) {
    if (!parallel || n < 64) {
        for (size_t i = 0; i < n; ++i) f(acc, i);
        return;
    }
    tbb::combinable<Lattice> partial;
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 32),
                      [&](const tbb::blocked_range<size_t>& r) {
                          Lattice& local = partial.local();
                          for (size_t i = r.begin(); i != r.end(); ++i) f(local, i);
                      });
    partial.combine_each([&](const Lattice& l) { acc += l; });
}

/// Reuses one encoding buffer per call site and thread.
struct EntryScratch {
    Bytes bytes;
    BytesView account(const Address& a, const Account& v) {
        bytes.clear();
        encode_entry(bytes, a, v);
        return bytes;
    }
    BytesView user(std::string_view name, const u256& balance) {
        bytes.clear();
        encode_entry(bytes, name, balance);
        return bytes;
    }
};

}  // namespace

// ---- Sums ------------------------------------------------------------------------------------

Lattice lattice_of(const WriteSet& entries, bool parallel) {
    Lattice acc;
    const size_t accounts = entries.accounts.size();
    sum_entries(acc, entries.size(), parallel, [&](Lattice& l, size_t i) {
        thread_local EntryScratch scratch;
        if (i < accounts) {
            const auto& [address, account] = entries.accounts[i];
            l.add(scratch.account(address, account));
        } else {
            const auto& [name, balance] = entries.users[i - accounts];
            l.add(scratch.user(name, balance));
        }
    });
    return acc;
}

Lattice next_lattice(const Lattice& parent, const WriteSet& writes, bool parallel) {
    if (!writes.has_before()) {
        // A caller's bug, never the data's: a root computed without the old values would be
        // wrong, and a wrong root must never be committed.
        std::fprintf(stderr, "barrel: next_lattice: the write set lacks its before values\n");
        std::abort();
    }
    Lattice acc = parent;
    const size_t accounts = writes.accounts.size();
    sum_entries(acc, writes.size(), parallel, [&](Lattice& l, size_t i) {
        thread_local EntryScratch scratch;
        if (i < accounts) {
            const auto& [address, account] = writes.accounts[i];
            if (const auto& before = writes.accounts_before[i])
                l.remove(scratch.account(address, *before));
            l.add(scratch.account(address, account));
        } else {
            const auto& [name, balance] = writes.users[i - accounts];
            if (const auto& before = writes.users_before[i - accounts])
                l.remove(scratch.user(name, *before));
            l.add(scratch.user(name, balance));
        }
    });
    return acc;
}

}  // namespace barrel::state
