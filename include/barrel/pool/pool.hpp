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

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace barrel::pool {

struct Config {
    uint64_t chain_id{1};
    /// The chain's base fee: a transaction whose gas price (or EIP-1559 fee cap) is below it
    /// could never be included. Effective tips, which order the pool, are taken at it.
    u256 base_fee{0};
    /// The block gas limit: a transaction asking for more gas could never be included.
    uint64_t block_gas_limit{200'000'000};
    /// Pending transactions held at once (go-ethereum: 5,120). A sealed block takes up to
    /// 2,500, so this holds the next ~26 blocks.
    size_t max_pending{65'536};
    /// Queued transactions (behind a nonce gap) held at once (go-ethereum: 1,024): an honest
    /// wallet queues a few for a moment, so this stays small whatever the pending bound.
    size_t max_queued{4'096};
    /// Transactions of one sender held at once, pending and queued.
    size_t max_per_sender{4'096};
    /// Queued transactions of one sender held at once (go-ethereum: 64).
    size_t max_queued_per_sender{64};
    /// How far past a sender's next pending nonce a transaction may be: one further ahead is
    /// refused ("nonce too high"), as it could not become pending within the bounds for long.
    uint64_t max_nonce_gap{1'024};
    /// How long a queued transaction is kept (go-ethereum: 3 hours).
    std::chrono::seconds queued_lifetime{3 * 3600};
    /// The clock of queued lifetimes (a test's; steady_clock::now when empty).
    std::function<std::chrono::steady_clock::time_point()> clock{};
    /// How many recent blocks' departed transactions queries "as of" an older block still see
    /// (find, pending_nonce): a request's snapshot never lags the pool by more under load.
    size_t recent_blocks{16};
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
    nonce_too_high,           ///< "nonce too high" (past Config::max_nonce_gap)
    insufficient_funds,       ///< "insufficient funds for gas * price + value"
    replacement_underpriced,  ///< "replacement transaction underpriced"
    account_limit,            ///< "account limit exceeded"
    pool_full,                ///< "txpool is full"
    state_unreadable,         ///< the sender's account could not be read (a store failure)
    /// "only replay-protected (EIP-155) transactions allowed over RPC": a legacy transaction
    /// signed without a chain id, where the admission refuses them (Unprotected::refused)
    unprotected,
};

struct Rejection {
    RejectCode code{RejectCode::malformed};
    std::string message;
};

std::string_view to_string(RejectCode code) noexcept;

/// Where a transaction came from. A journal keeps only local ones, as go-ethereum's does: what a
/// consensus engine gossiped (CheckTx) is in the peers' mempools, which hand it to a restarted
/// node again, and writing it cost a validator a write(2) per transaction.
enum class Origin : uint8_t {
    local,  ///< sent to this node (JSON-RPC, its own journal)
    peer,   ///< gossiped by the consensus engine's mempool
};

/// Whether an admission takes legacy transactions signed without a chain id (before EIP-155:
/// valid on every chain, so anyone can replay them). go-ethereum refuses them over RPC unless
/// told otherwise, and still takes them from its journal and its peers.
enum class Unprotected : uint8_t { accepted, refused };

/// A pooled transaction: its encoding and what admission learned about it. Immutable once
/// admitted, shared by the pool, the sealer and queries (the decoded calldata views `encoding`).
struct PooledTx {
    Bytes encoding;
    tx::Transaction tx;
    Hash hash;
    Address sender;
    u256 cost;  ///< gas limit × fee cap + value: the most it can take from the sender
    /// tx::effective_tip at the chain's base fee: the price that orders eviction (the cheapest
    /// leaves first).
    u256 tip;
    /// How many blocks the pool had seen committed when it admitted this: the "arrival" of the
    /// ordering rule. Coarse on purpose: the order in which transactions arrive between two
    /// blocks must not change the next block, or the chain would depend on network timing.
    uint64_t arrival_block{0};
    uint64_t sequence{0};  ///< admission order, pool-wide (journals keep it)
    std::chrono::steady_clock::time_point admitted_at{};  ///< by Config::clock: for expiry
    Origin origin{Origin::local};
};
using TxPtr = std::shared_ptr<const PooledTx>;

struct Admitted {
    Hash hash;
    Address sender;
    uint64_t gas_limit{0};  ///< the transaction's (CheckTx answers it as gas_wanted)
    bool pending{false};    ///< executable now (else queued behind a nonce gap)
    bool replaced{false};   ///< it replaced a pooled transaction with the same nonce
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

class JournalWriter;

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
    /// `hashes`, when given, are the encodings' tx::hash_of, computed by a caller that has just
    /// looked each one up (find) and not found it (CheckTx): admission neither hashes them nor
    /// looks them up again before recovery. Another admission of the same transaction in
    /// between costs a recovery at most (the sender cache is asked first); the check under the
    /// lock still refuses it as already known.
    /// `unprotected`: with Unprotected::refused, a legacy transaction without a chain id is
    /// refused (RejectCode::unprotected) once it decodes, before any other check, as
    /// go-ethereum's RPC refuses it before its pool sees it.
    std::vector<AdmitResult> admit(std::span<const BytesView> encodings,
                                   Origin origin = Origin::local, std::span<const Hash> hashes = {},
                                   Unprotected unprotected = Unprotected::accepted);
    AdmitResult admit_one(BytesView encoding, Origin origin = Origin::local,
                          Unprotected unprotected = Unprotected::accepted);
    /// admit() of one transaction the caller hashed and did not find: see `hashes` above.
    AdmitResult admit_one(BytesView encoding, const Hash& hash, Origin origin);

    /// A pooled transaction, pending or queued, by hash, as a reader whose store snapshot's
    /// head is block `as_of` sees the pool: a transaction that left with a later block (one the
    /// reader cannot see yet) is still found, so that it is never in neither place. Recent
    /// blocks only (Config::recent_blocks).
    TxPtr find(const Hash& hash, uint64_t as_of) const;

    /// The next nonce of `sender` counting its pending transactions (eth_getTransactionCount
    /// "pending"), for a reader whose snapshot's head is block `as_of`, where the account's
    /// nonce is `account_nonce`: the first nonce from `account_nonce` on that the pool held as
    /// of that block (transactions that left with later blocks count as held).
    uint64_t pending_nonce(const Address& sender, uint64_t account_nonce, uint64_t as_of) const;

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

    /// Block `number` was committed: its transactions leave the pool, the accounts in
    /// `touched` (the block's senders and recipients) are read again from the state, and what
    /// the block made invalid leaves too: transactions below an account's new nonce, and a
    /// sender's transactions from the first one its balance no longer covers. Queued
    /// transactions whose gap closed become pending. What left is remembered with `number` for
    /// the readers of find() and pending_nonce() whose snapshots are older.
    void committed(uint64_t number, std::span<const Hash> included,
                   std::span<const Address> touched);

    /// The blocks built from take() since the last committed() will not be committed (a commit
    /// failed): their transactions can be taken again.
    void abandon_taken();

    /// Every pooled transaction, each sender's in nonce order (senders in arrival order of their
    /// first transaction), for a journal that admit() can read back. Expired ones have left.
    std::vector<TxPtr> all();
    /// all() but what peers gossiped (Origin::peer): what a journal keeps.
    std::vector<TxPtr> local();

    /// Removes the queued transactions older than Config::queued_lifetime (admission and
    /// committed() do it too; this is for a caller whose pool sits idle).
    void expire();

    /// What is wrong with the pool's internal state, recomputed from scratch ("" when nothing):
    /// every sum and count, each transaction's class and index entries, every bound. O(n): for
    /// tests after each step (go-ethereum's validatePoolInternals).
    std::string invariant_violation() const;

    /// From now on, every admitted batch's local transactions are appended to `journal` as they
    /// are admitted, in admission order; `entries` is how many strings the journal's file holds
    /// already. When the file would pass journal_capacity(config) strings, it is rewritten with
    /// the pool's local() instead. `journal` must outlive the pool, or be detached with nullptr.
    void journal_to(JournalWriter* journal, size_t entries);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// The pool's journal: what a node writes as it admits and at shutdown, and re-admits at start,
/// so that a restart (after a stop, or a SIGKILL) loses no transaction a client was told was
/// accepted. The file is the transactions' encodings as a stream of RLP strings (go-ethereum's
/// transactions.rlp holds the same stream): each admitted batch appended with one write(2) as it
/// is admitted (JournalWriter), and the whole pool, in Pool::all() order, written beside its
/// path and renamed over it at a stop and whenever the appends pass journal_capacity(), so a
/// crash leaves a whole journal, at worst with a cut tail. `sync`: fsync the file and its
/// directory (a stop) or not (a compaction while running: SIGKILL cannot lose what write(2)
/// returned, only a power loss can).
Expected<void, std::string> write_journal(const std::string& path, std::span<const TxPtr> txs,
                                          bool sync = true);

/// The most strings a journal holds: the appends of twice what the pool holds, then a
/// compaction.
size_t journal_capacity(const Config& config) noexcept;

/// Appends admitted batches to a journal file, in the order the pool hands them over (tickets),
/// one write(2) per batch and no fsync. Thread-safe. A failed write is remembered (error()),
/// never thrown: the transactions stay pooled and the stop writes them again.
class JournalWriter {
public:
    /// Opens `path` for appending (creating it); refuses anything but a regular file (a FIFO
    /// would block the node).
    static Expected<std::unique_ptr<JournalWriter>, std::string> open(std::string path);
    ~JournalWriter();
    JournalWriter(const JournalWriter&) = delete;
    JournalWriter& operator=(const JournalWriter&) = delete;

    /// The next place in the file's order: taken where the order is decided (under the pool's
    /// lock), and then given to write() exactly once.
    uint64_t take_ticket() noexcept;

    /// Waits for the batches of earlier tickets, then appends `txs` (or, with `rewrite`,
    /// replaces the file with them: a compaction).
    void write(uint64_t ticket, std::span<const TxPtr> txs, bool rewrite);

    /// The first failure, if any ("" when none).
    std::string error() const;

private:
    JournalWriter(std::string path, int fd);
    struct State;
    std::unique_ptr<State> m_state;
};

/// The encodings of a journal (none if the file does not exist). A damaged tail (a crash while
/// writing it) ends the stream: what came before it is returned, and `damaged` says so. It
/// reads no more than journal_capacity(config) strings, none longer than
/// max_transaction_bytes, so a journal replaced by something huge costs no more than a full
/// journal; strings past that are left and `truncated` says so. Anything but a regular file (a
/// FIFO, a device) is refused without being read.
struct Journal {
    std::vector<Bytes> transactions;
    bool damaged{false};
    bool truncated{false};
};
Expected<Journal, std::string> read_journal(const std::string& path, const Config& config);

}  // namespace barrel::pool
