#pragma once
/// @file
/// A block on the wire and stages 1 (decode) and 2 (verify) of the pipeline.
///
/// Wire format (docs/formats.md): RLP list [header, txs] where txs is an RLP byte string holding
/// the offset-indexed transaction list: u32 BE count, count+1 u32 BE offsets (first 0, strictly
/// increasing, last = object area size), then the concatenated transaction encodings. A plain RLP
/// list of transactions (go-ethereum's encoding of []*types.Transaction: legacy transactions as
/// lists, typed ones as byte strings holding the envelope) is accepted in its place.

#include <barrel/block/header.hpp>
#include <barrel/block/sender_cache.hpp>
#include <barrel/tx/transaction.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace barrel::block {

enum class [[nodiscard]] BlockErrorCode : uint8_t{
    malformed_block,         ///< the outer [header, txs] list is malformed: see rlp
    malformed_header,        ///< see header_field and rlp
    truncated_index,         ///< the offset index is cut off (fewer than 4 + 4·(count+1) bytes)
    count_too_large,         ///< the count cannot fit the bytes that follow it
    first_offset_not_zero,   ///< offsets[0] != 0
    offsets_not_increasing,  ///< offsets[i+1] <= offsets[i] (tx_index = i)
    offset_out_of_range,     ///< offsets[i+1] beyond the object area (tx_index = i)
    last_offset_mismatch,    ///< offsets[count] != size of the object area
    malformed_tx_list,       ///< a plain RLP transaction list is malformed: see rlp
    slot_trailing_bytes,     ///< a slot holds a transaction followed by more bytes (tx_index)
    malformed_tx,            ///< a transaction does not decode (tx_index, tx)
    invalid_tx,              ///< a transaction fails verification (tx_index, tx)
    wrong_chain_id,          ///< the block's chain id is not the chain's
};

struct BlockError {
    BlockErrorCode code{BlockErrorCode::malformed_block};
    std::optional<size_t> tx_index;
    tx::TxError tx{};
    rlp::DecodingError rlp{};
    HeaderField header_field{HeaderField::list};

    friend bool operator==(const BlockError&, const BlockError&) = default;
};

std::string_view to_string(BlockErrorCode code) noexcept;
/// One line naming the reason and, where it lies in one transaction, its index, e.g.
/// "transaction 17: malformed_tx: nonce: leading_zero".
std::string describe(const BlockError& error);

/// A block's decoded transactions: contiguous, in block order. decode_block creates them in its
/// parallel loop, each page first touched by a thread that fills it (src/core/slots.hpp), in
/// storage that stays internal to the block module; a block assembled by hand (tests,
/// benchmarks) appends with push_back.
class Transactions {
public:
    Transactions() noexcept;
    Transactions(Transactions&& other) noexcept;
    Transactions& operator=(Transactions&& other) noexcept;
    Transactions(const Transactions&) = delete;
    Transactions& operator=(const Transactions&) = delete;
    ~Transactions();

    size_t size() const noexcept { return m_size; }
    bool empty() const noexcept { return m_size == 0; }
    tx::Transaction* data() noexcept { return m_data; }
    const tx::Transaction* data() const noexcept { return m_data; }
    tx::Transaction& operator[](size_t i) noexcept { return m_data[i]; }
    const tx::Transaction& operator[](size_t i) const noexcept { return m_data[i]; }
    tx::Transaction& back() noexcept { return m_data[m_size - 1]; }
    const tx::Transaction& back() const noexcept { return m_data[m_size - 1]; }
    tx::Transaction* begin() noexcept { return m_data; }
    tx::Transaction* end() noexcept { return m_data + m_size; }
    const tx::Transaction* begin() const noexcept { return m_data; }
    const tx::Transaction* end() const noexcept { return m_data + m_size; }

    void push_back(tx::Transaction t);
    void clear() noexcept;

    /// The storage, defined and built by the block module only (src/block/transactions.hpp).
    struct Storage;
    explicit Transactions(std::unique_ptr<Storage> storage) noexcept;

private:
    /// Reads the element pointer and count back from the storage after it changed.
    void refresh() noexcept;

    std::unique_ptr<Storage> m_storage;
    tx::Transaction* m_data{nullptr};
    size_t m_size{0};
};

/// A decoded block. Transactions are views into `wire`, which the block owns, so a Block is
/// move-only (moving a vector keeps its buffer, so the views stay valid).
struct Block {
    Bytes wire;                    ///< the bytes everything below views into
    std::optional<Header> header;  ///< absent for a bare transaction list
    Hash hash;                     ///< block hash (zero for a bare transaction list)
    std::vector<BytesView> tx_encodings;
    Transactions txs;  ///< built in parallel by decode
    std::vector<Hash> tx_hashes;
    std::vector<Address> senders;  ///< filled by recover_senders

    Block() = default;
    Block(Block&&) noexcept = default;
    Block& operator=(Block&&) noexcept = default;
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;

    size_t size() const noexcept { return txs.size(); }
};

// ---- encoding --------------------------------------------------------------------------------

/// The offset-indexed transaction list (the payload of the txs string).
void encode_indexed_txs(Bytes& out, std::span<const BytesView> tx_encodings);

/// A wire block with an offset-indexed transaction list.
void encode_block(Bytes& out, const Header& header, std::span<const BytesView> tx_encodings);
Bytes encode_block(const Header& header, std::span<const BytesView> tx_encodings);

/// A plain RLP list of transactions as go-ethereum writes []*types.Transaction.
Bytes encode_plain_tx_list(std::span<const BytesView> tx_encodings);

/// `block` under `header` instead of its own (a sealed template: execution filled in gas used
/// and the roots): the wire is encoded again around the same transaction bytes, and everything
/// decoded from them carries over, its views moved to the same bytes in the new wire. Only the
/// header is hashed; no transaction is decoded or hashed again.
Block with_header(Block block, const Header& header);

// ---- stage 1: decode -------------------------------------------------------------------------

/// Splits the first wire block off the front of `from` without decoding its transactions:
/// used to walk chain files. Returns the view of the whole block.
Expected<BytesView, BlockError> split_block(BytesView& from) noexcept;

/// Decodes a wire block that spans all of `wire`: header, block hash, then every transaction in
/// parallel (tbb::parallel_for over blocked ranges), each writing only its own slot, with its hash
/// computed in the same pass. On several bad transactions the lowest index is reported.
/// `parallel = false` runs the same code on the calling thread (the serial baseline).
Expected<Block, BlockError> decode_block(Bytes wire, bool parallel = true);

/// Decodes a bare transaction list: a plain RLP list of transactions or an offset-indexed list.
Expected<Block, BlockError> decode_tx_list(Bytes wire, bool parallel = true);

/// The hashes of a wire block's transactions (keccak-256 of each encoding) from its framing
/// alone: the transactions are split, never decoded. For a block decoded and verified before, a
/// stored one: listing a block's hashes (eth_getBlockByNumber) then costs its hashing only.
/// Errors are decode_block's for the framing; a transaction's own bytes are not checked.
Expected<std::vector<Hash>, BlockError> transaction_hashes(BytesView wire);

// ---- stage 2: verify -------------------------------------------------------------------------

/// Checks every transaction statelessly against `chain_id` (tx::validate) and recovers every
/// sender in parallel, consulting and filling `cache` when given. Fills block.senders. The error
/// reported is always that of the lowest bad index, whatever the thread timing.
Expected<void, BlockError> recover_senders(Block& block, uint64_t chain_id, SenderCache* cache,
                                           bool parallel = true);

}  // namespace barrel::block
