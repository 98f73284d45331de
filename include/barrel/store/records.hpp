#pragma once
/// @file
/// What the store holds, as typed records: one read interface (Reader) that a Store (the newest
/// values) and a Snapshot (one moment) both implement, so a node's queries read headers,
/// transactions, receipts, accounts and DagTransfer users without knowing how they are stored.
/// The stored documents are decoded here, in the store module; a document that does not decode
/// is a StoreError (corruption) naming the document and its field, never a default value.

#include <barrel/block/header.hpp>
#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/json/tx_json.hpp>
#include <barrel/state/state.hpp>
#include <barrel/tx/transaction.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace barrel::store {

struct StoreError;

/// A committed block's header with what its header document adds.
struct HeaderRecord {
    block::Header header;
    Hash hash;
    uint64_t transaction_count{0};
};

/// A committed transaction, where it sits, and its recovered sender. `tx.data` views `input`,
/// which the record owns: a record may be moved (the vector's buffer moves with it), not copied.
struct TransactionRecord {
    TransactionRecord() = default;
    TransactionRecord(TransactionRecord&&) noexcept = default;
    TransactionRecord& operator=(TransactionRecord&&) noexcept = default;
    TransactionRecord(const TransactionRecord&) = delete;
    TransactionRecord& operator=(const TransactionRecord&) = delete;

    tx::Transaction tx;
    Bytes input;
    Hash hash;
    Address sender;
    TxLocation location;
};

/// A committed transaction's receipt and where its transaction sits.
struct ReceiptRecord {
    exec::Receipt receipt;
    Hash transaction_hash;
    uint64_t block_number{0};
    uint64_t index{0};
};

template <typename T>
using ReadOutcome = Expected<std::optional<T>, StoreError>;

/// The store's queries, of the newest values (Store) or at one moment (Snapshot). Accounts and
/// users come through state::StateReader (account(), user()). Not found is an empty optional.
class Reader : public state::StateReader {
public:
    virtual ReadOutcome<HeaderRecord> header_record(uint64_t number) const = 0;
    virtual ReadOutcome<uint64_t> block_number(const Hash& block_hash) const = 0;
    virtual ReadOutcome<TransactionRecord> transaction_record(const Hash& tx_hash) const = 0;
    virtual ReadOutcome<ReceiptRecord> receipt_record(const Hash& tx_hash) const = 0;
    /// The block as it came (RLP, with the transaction offset index: docs/formats.md).
    virtual ReadOutcome<Bytes> raw_block(uint64_t number) const = 0;
};

/// The documents' decoders (docs/formats.md, "Storage"). The error names the first field that is
/// missing or malformed ("gas_used", "access_list[2].address", or "" when the text is not a
/// JSON object).
Expected<HeaderRecord, std::string> parse_header_document(std::string_view text);
Expected<TransactionRecord, std::string> parse_transaction_document(std::string_view text);
Expected<ReceiptRecord, std::string> parse_receipt_document(std::string_view text);

}  // namespace barrel::store
