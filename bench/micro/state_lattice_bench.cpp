// The state commitment's expansion (docs/formats.md, "State commitment"): the candidates for the
// 2,048-byte element of an entry, each measured on one thread over the same 56-byte entries, and
// the one barrel uses (Lattice::element), and a block's update. docs/benchmarks.md, "State
// commitment", quotes them; BM_lattice_candidate/<name> items/s = expansions per second per core.
//
//   blake3_xof          BLAKE3 derive-key, 2,048 bytes of its XOF (SIMD-0215's function)
//   chacha20            BLAKE3 derive-key to 32 bytes, then OpenSSL's ChaCha20 keystream (barrel's)
//   aes256ctr           the same key, OpenSSL's AES-256-CTR keystream (AES-NI)
//   shake256            OpenSSL's SHAKE256, 2,048 bytes

#include <barrel/state/lattice.hpp>

#include <benchmark/benchmark.h>
#include <blake3.h>
#include <openssl/evp.h>

#include <array>
#include <cstring>
#include <vector>

using namespace barrel;

namespace {

constexpr size_t kEntryBytes = 56;  // an account entry with a full balance is about this long
constexpr const char* kContext = "barrel benchmark lattice candidates";

/// A 32-byte key from BLAKE3 in derive-key mode (the step every keyed candidate shares).
void derive_key(const uint8_t* entry, uint8_t* key) {
    blake3_hasher h;
    blake3_hasher_init_derive_key(&h, kContext);
    blake3_hasher_update(&h, entry, kEntryBytes);
    blake3_hasher_finalize(&h, key, 32);
}

/// One thread's candidate run: `expand(entry, out)` per iteration, the lanes summed as the
/// lattice does, so that nothing is optimised away.
template <class Expand>
void run(benchmark::State& state, Expand&& expand) {
    std::array<uint8_t, kEntryBytes> entry{};
    alignas(64) std::array<uint8_t, state::Lattice::kBytes> out{};
    std::array<uint16_t, state::Lattice::kLanes> sum{};
    uint64_t n = 0;
    for (auto _ : state) {
        std::memcpy(entry.data(), &n, sizeof n);
        ++n;
        expand(entry.data(), out.data());
        for (size_t i = 0; i < sum.size(); ++i) {
            uint16_t lane;
            std::memcpy(&lane, out.data() + 2 * i, 2);
            sum[i] = static_cast<uint16_t>(sum[i] + lane);
        }
    }
    benchmark::DoNotOptimize(sum);
    state.SetItemsProcessed(state.iterations());
}

/// An OpenSSL keystream under a derived key, the context set up once and re-keyed per entry.
void bm_cipher(benchmark::State& state, const char* cipher_name) {
    EVP_CIPHER* cipher = EVP_CIPHER_fetch(nullptr, cipher_name, nullptr);
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    static constexpr uint8_t kZero[state::Lattice::kBytes] = {};
    static constexpr uint8_t kIv[16] = {};
    if (!cipher || !ctx || EVP_EncryptInit_ex2(ctx, cipher, kZero, kIv, nullptr) != 1) {
        state.SkipWithError("cipher unavailable");
        return;
    }
    run(state, [&](const uint8_t* entry, uint8_t* out) {
        uint8_t key[32];
        derive_key(entry, key);
        int written = 0;
        EVP_EncryptInit_ex2(ctx, nullptr, key, kIv, nullptr);
        EVP_EncryptUpdate(ctx, out, &written, kZero, state::Lattice::kBytes);
    });
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(cipher);
}

void BM_lattice_candidate_blake3_xof(benchmark::State& state) {
    run(state, [](const uint8_t* entry, uint8_t* out) {
        blake3_hasher h;
        blake3_hasher_init_derive_key(&h, kContext);
        blake3_hasher_update(&h, entry, kEntryBytes);
        blake3_hasher_finalize(&h, out, state::Lattice::kBytes);
    });
}
BENCHMARK(BM_lattice_candidate_blake3_xof);

void BM_lattice_candidate_chacha20(benchmark::State& state) { bm_cipher(state, "ChaCha20"); }
BENCHMARK(BM_lattice_candidate_chacha20);

void BM_lattice_candidate_aes256ctr(benchmark::State& state) { bm_cipher(state, "AES-256-CTR"); }
BENCHMARK(BM_lattice_candidate_aes256ctr);

void BM_lattice_candidate_shake256(benchmark::State& state) {
    EVP_MD* md = EVP_MD_fetch(nullptr, "SHAKE256", nullptr);
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    run(state, [&](const uint8_t* entry, uint8_t* out) {
        EVP_DigestInit_ex(ctx, md, nullptr);
        EVP_DigestUpdate(ctx, entry, kEntryBytes);
        EVP_DigestFinalXOF(ctx, out, state::Lattice::kBytes);
    });
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
}
BENCHMARK(BM_lattice_candidate_shake256);

/// barrel's element as the lattice adds it (the encoding's key, the keystream, the lanes).
void BM_lattice_add_entry(benchmark::State& state) {
    Bytes entry;
    state::encode_entry(entry, Address{}, state::Account{1, u256{1} << 200});
    state::Lattice l;
    uint64_t n = 0;
    for (auto _ : state) {
        std::memcpy(entry.data() + 4, &n, sizeof n);  // inside the address
        ++n;
        l.add(entry);
    }
    benchmark::DoNotOptimize(l);
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_lattice_add_entry);

/// A block's update: `Arg` written accounts, each subtracted and added (two elements per key),
/// serial and on every thread.
void BM_lattice_block_update(benchmark::State& state, bool parallel) {
    state::WriteSet w;
    const auto keys = static_cast<size_t>(state.range(0));
    for (size_t i = 0; i < keys; ++i) {
        Address a;
        std::memcpy(a.data(), &i, sizeof i);
        w.accounts.emplace_back(a, state::Account{i + 1, u256{i} << 64});
        w.accounts_before.emplace_back(state::Account{i, u256{i} << 64});
    }
    const state::Lattice parent;
    for (auto _ : state) benchmark::DoNotOptimize(state::next_lattice(parent, w, parallel));
    state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(keys));
}
BENCHMARK_CAPTURE(BM_lattice_block_update, serial, false)->Arg(5000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_lattice_block_update, parallel, true)
    ->Arg(5000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
