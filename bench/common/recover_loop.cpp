#include "recover_loop.hpp"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <chrono>
#include <cstdlib>
#include <ctime>

namespace barrel::bench {

bool RecoverLoop::add(const tx::Transaction& t) {
    if (m_sigs.size() >= kMaxSignatures) return false;
    const auto* ctx = tx::shared_secp256k1_context();
    Sig s;
    uint8_t compact[64];
    store_be32(t.r, compact);
    store_be32(t.s, compact + 32);
    if (secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, &s.sig, compact,
                                                            t.y_parity ? 1 : 0) != 1)
        return true;  // not a signature the loop can time; the next one may be
    s.sighash = tx::signing_hash(t);
    m_sigs.push_back(s);
    return true;
}

double RecoverLoop::rate(size_t threads) const {
    using Clock = std::chrono::steady_clock;
    if (m_sigs.empty()) return 0;
    const auto* ctx = tx::shared_secp256k1_context();
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    const auto t0 = Clock::now();
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, m_sigs.size()), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t i = r.begin(); i != r.end(); ++i) {
                secp256k1_pubkey pk;
                if (secp256k1_ecdsa_recover(ctx, &pk, &m_sigs[i].sig, m_sigs[i].sighash.data()) !=
                    1)
                    std::abort();
            }
        });
    return static_cast<double>(m_sigs.size()) /
           std::chrono::duration<double>(Clock::now() - t0).count();
}

namespace {

double thread_cpu_seconds() {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

double RecoverLoop::cpu_us_per_recovery() const {
    if (m_sigs.empty()) return 0;
    const auto* ctx = tx::shared_secp256k1_context();
    const double t0 = thread_cpu_seconds();
    for (const Sig& s : m_sigs) {
        secp256k1_pubkey pk;
        if (secp256k1_ecdsa_recover(ctx, &pk, &s.sig, s.sighash.data()) != 1) std::abort();
    }
    return (thread_cpu_seconds() - t0) * 1e6 / static_cast<double>(m_sigs.size());
}

void RecoverRates::sample(const RecoverLoop& loop, size_t threads) {
    for (int pass = 0; pass < 5; ++pass) {
        all_threads.push_back(loop.rate(threads));
        if (threads > 1) one_thread.push_back(loop.rate(1));
        cpu_us.push_back(loop.cpu_us_per_recovery());
    }
}

}  // namespace barrel::bench
