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

private:
    struct Sig {
        secp256k1_ecdsa_recoverable_signature sig;
        Hash sighash;
    };
    std::vector<Sig> m_sigs;
};

/// Rates of the recovery loop, passes at all threads and at 1 thread alternating.
struct RecoverRates {
    std::vector<double> all_threads, one_thread;

    /// Five passes at `threads` (and, if more than 1, five at 1 thread, alternating).
    void sample(const RecoverLoop& loop, size_t threads);
};

}  // namespace barrel::bench
