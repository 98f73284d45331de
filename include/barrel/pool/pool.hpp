#pragma once
/// @file
/// The transaction pool: signed transactions waiting for a block. A node's RPC threads admit
/// what clients send; a sealer takes what is ready; a consensus follower links the same module
/// to hold what it has heard of.
///
/// Admission does the expensive work once, outside the pool's lock and in parallel over each
/// batch of arriving transactions: decode, the stateless checks, and sender recovery, which it
/// records in the sender cache so that the verify stage of a block built from the pool finds
/// every sender there. Only the stateful checks (nonce, balance, replacement, bounds) run under
/// the lock, in arrival order.
///
/// Per sender, the transactions from the account's nonce on without a gap are *pending*
/// (executable in order); later ones are *queued* until the gap closes. A sender's pooled
/// transactions together must fit its balance (gas limit × fee cap + value each), so a block
/// made of pending transactions is always valid. A transaction with the nonce of a pooled one
/// replaces it only if it raises both fee caps by at least the price bump (10%).
///
/// Rejections carry go-ethereum's message for the same condition ("nonce too low: next nonce 3,
/// tx nonce 1"), since wallets and SDKs match on those words.

#include <barrel/block/sender_cache.hpp>
#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/state/state.hpp>
#include <barrel/tx/transaction.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace barrel::pool {

struct Config {
    uint64_t chain_id{1};
    /// The chain's EIP-1559 base fee: a type-2 transaction whose fee cap is below it could never
    /// be included.
    u256 base_fee{0};
    /// The block gas limit: a transaction asking for more gas could never be included.
    uint64_t block_gas_limit{200'000'000};
    /// Transactions held at once, pending and queued (go-ethereum: 5,120). A sealed block takes
    /// up to 2,500, so this holds the next ~26 blocks.
    size_t max_transactions{65'536};
    /// Transactions of one sender held at once, pending and queued.
    size_t max_per_sender{4'096};
    /// Largest transaction encoding accepted (go-ethereum: 4 × 32 KiB).
    size_t max_transaction_bytes{128 * 1024};
    /// A replacement must raise the fee cap and the priority fee cap by this many percent.
    unsigned price_bump_percent{10};
};

/// Why a transaction was not admitted. The codes a wallet can act on are distinct; `message` is
/// go-ethereum's text for the same condition, with its details.
enum class [[nodiscard]] RejectCode : uint8_t{
    malformed,       ///< not a transaction encoding ("rlp: …", "transaction type not supported")
    oversized,       ///< "oversized data"
    invalid,         ///< a stateless rule (intrinsic gas, fee caps, init code size, nonce max)
    invalid_sender,  ///< bad signature or another chain's ("invalid sender: …")
    exceeds_block_gas_limit,  ///< "exceeds block gas limit"
    fee_cap_below_base_fee,   ///< "max fee per gas less than block base fee"
    already_known,            ///< "already known"
    nonce_too_low,            ///< "nonce too low"
    insufficient_funds,       ///< "insufficient funds for gas * price + value"
    replacement_underpriced,  ///< "replacement transaction underpriced"
    account_limit,            ///< "account limit exceeded"
    pool_full,                ///< "txpool is full"
    state_unreadable,         ///< the sender's account could not be read (a store failure)
};

struct Rejection {
    RejectCode code{RejectCode::malformed};
    std::string message;
};

std::string_view to_string(RejectCode code) noexcept;

/// A pooled transaction: its encoding and what admission learned about it. Immutable once
/// admitted, shared by the pool, the sealer and queries (the decoded calldata views `encoding`).
struct PooledTx {
    Bytes encoding;
    tx::Transaction tx;
    Hash hash;
    Address sender;
    u256 cost;  ///< gas limit × fee cap + value: the most it can take from the sender
    /// How many blocks the pool had seen committed when it admitted this: the "arrival" of the
    /// ordering rule. Coarse on purpose: the order in which transactions arrive between two
    /// blocks must not change the next block, or the chain would depend on network timing.
    uint64_t arrival_block{0};
    uint64_t sequence{0};  ///< admission order, pool-wide (journals keep it)
};
using TxPtr = std::shared_ptr<const PooledTx>;

struct Admitted {
    Hash hash;
    Address sender;
    bool pending{false};   ///< executable now (else queued behind a nonce gap)
    bool replaced{false};  ///< it replaced a pooled transaction with the same nonce
};
using AdmitResult = Expected<Admitted, Rejection>;

struct Status {
    size_t pending{0};
    size_t queued{0};
};

/// A block's worth of pending transactions, chosen by Pool::take.
struct Selection {
    std::vector<TxPtr> txs;
    uint64_t gas{0};  ///< sum of the gas limits
};

class Pool {
public:
    /// `state` is the committed state the pool checks nonces and balances against (a Store);
    /// `cache`, when given, receives every admitted transaction's sender.
    Pool(const Config& config, const state::StateReader& state, block::SenderCache* cache);
    ~Pool();
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    /// Admits a batch of encodings (as eth_sendRawTransaction receives them), one result per
    /// encoding in the same order. Decoding, the stateless checks and sender recovery run in
    /// parallel over the batch; the stateful checks run in batch order, so two transactions of
    /// one sender in a batch are checked as if sent one after the other. Thread-safe.
    std::vector<AdmitResult> admit(std::span<const BytesView> encodings);
    AdmitResult admit_one(BytesView encoding);

    /// A pooled transaction, pending or queued, by hash.
    TxPtr find(const Hash& hash) const;

    /// The next nonce of `sender` counting its pending transactions (eth_getTransactionCount
    /// "pending"); nullopt when the pool holds nothing of it (the account's nonce is then the
    /// answer).
    std::optional<uint64_t> pending_nonce(const Address& sender) const;

    Status status() const;

    /// Pending transactions that take() would return now (not already taken).
    size_t ready() const;

    /// Removes one transaction (a block built with it failed for a reason of its own); its
    /// sender's later transactions wait behind the gap it leaves.
    void drop(const Hash& hash);

    /// Takes up to `max_txs` pending transactions whose gas limits sum to at most `gas_limit`,
    /// for the next block: per sender in nonce order; across senders the highest effective tip
    /// (min(priority fee cap, fee cap − base fee)) first, then the earliest arrival_block, then
    /// the lowest sender address, so the block does not depend on arrival order within one
    /// block interval. Taken
    /// transactions stay in the pool (queries still find them) but are not taken again, so the
    /// next block can be built while this one commits; they leave at committed(), or become
    /// available again at abandon_taken().
    Selection take(size_t max_txs, uint64_t gas_limit);

    /// A block was committed: its transactions leave the pool, the accounts in `touched` (the
    /// block's senders and recipients) are read again from the state, and what the block made
    /// invalid leaves too: transactions below an account's new nonce, and a sender's
    /// transactions from the first one its balance no longer covers. Queued transactions whose
    /// gap closed become pending.
    void committed(std::span<const Hash> included, std::span<const Address> touched);

    /// The blocks built from take() since the last committed() will not be committed (a commit
    /// failed): their transactions can be taken again.
    void abandon_taken();

    /// Every pooled transaction, each sender's in nonce order (senders in arrival order of their
    /// first transaction), for a journal that admit() can read back.
    std::vector<TxPtr> all() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// The pool's journal: what a node writes at shutdown and re-admits at start, so that a restart
/// loses no transaction a client was told was accepted. The file is the transactions' encodings
/// as a stream of RLP strings, in Pool::all() order (go-ethereum's transactions.rlp holds the
/// same stream). Written beside its path and renamed over it, so a crash leaves the old journal
/// or the new one.
Expected<void, std::string> write_journal(const std::string& path, std::span<const TxPtr> txs);

/// The encodings of a journal (none if the file does not exist). A damaged tail (a crash while
/// an old version wrote it) ends the stream: what came before it is returned, and `damaged`
/// says so. It reads no more than a pool with `config` holds (max_transactions strings, none
/// longer than max_transaction_bytes), so a journal replaced by something huge or endless costs
/// no more than a full pool; strings past max_transactions are left and `truncated` says so.
struct Journal {
    std::vector<Bytes> transactions;
    bool damaged{false};
    bool truncated{false};
};
Expected<Journal, std::string> read_journal(const std::string& path, const Config& config);

}  // namespace barrel::pool
