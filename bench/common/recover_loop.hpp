#pragma once
// The recovery ceiling both benchmark programs report: a bare secp256k1_ecdsa_recover loop over
// (up to 5,000 of) the run's own signatures. At all threads it is the ceiling no verify stage,
// and no node that recovers each sender once, can beat; at 1 thread against all threads, how
// far this machine scales at the moment (on a shared VM the second core is not always all
// there), which bounds every stage's speedup.

#include <barrel/core/bytes.hpp>
#include <barrel/tx/transaction.hpp>

#include <secp256k1.h>
#include <secp256k1_recovery.h>

#include <cstddef>
#include <vector>

namespace barrel::bench {

class RecoverLoop {
public:
    static constexpr size_t kMaxSignatures = 5000;

    /// Adds the signature of `tx` (a signed transaction); false once the loop holds
    /// kMaxSignatures, so that a caller walking many transactions can stop.
    bool add(const tx::Transaction& tx);

    /// Recoveries per second of one pass over the signatures on `threads` threads; 0 if none.
    double rate(size_t threads) const;

    /// CPU microseconds one recovery takes on the calling thread (one pass, timed by the thread's
    /// own CPU clock, so other processes on the machine do not stretch it as they stretch a wall
    /// time); 0 if the loop holds no signature. The yardstick of a node's CPU per transaction.
    double cpu_us_per_recovery() const;

private:
    struct Sig {
        secp256k1_ecdsa_recoverable_signature sig;
        Hash sighash;
    };
    std::vector<Sig> m_sigs;
};

/// Rates of the recovery loop, passes at all threads and at 1 thread alternating, and the CPU
/// time of one recovery.
struct RecoverRates {
    std::vector<double> all_threads, one_thread, cpu_us;

    /// Five passes at `threads` (and, if more than 1, five at 1 thread, alternating), and five
    /// timed by CPU clock.
    void sample(const RecoverLoop& loop, size_t threads);
};

}  // namespace barrel::bench
