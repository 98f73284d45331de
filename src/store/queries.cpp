// Point reads of the stored documents, for the CLI's `get` and `export` and for a node's queries,
// of the newest values or at a snapshot.

#include <barrel/core/hex.hpp>
#include <barrel/store/documents.hpp>

#include "store_impl.hpp"

namespace barrel::store {

using nlohmann::json;

Expected<std::optional<std::string>, StoreError> Store::Impl::get(
    size_t cf, std::string_view key, const rocksdb::Snapshot* at) const {
    std::string value;
    rocksdb::ReadOptions ro;
    ro.snapshot = at;
    const auto s = db->Get(ro, cfs[cf], slice(key), &value);
    if (s.IsNotFound()) return std::optional<std::string>{};
    if (!s.ok()) return from_status(s, "read");
    return std::optional<std::string>{std::move(value)};
}

Expected<std::optional<json>, StoreError> Store::Impl::get_json(size_t cf, std::string_view key,
                                                                const rocksdb::Snapshot* at) const {
    auto v = get(cf, key, at);
    if (!v) return unexpected(v.error());
    if (!*v) return std::optional<json>{};
    json doc = json::parse(**v, nullptr, false);
    if (doc.is_discarded())
        return fail(StoreErrorCode::corruption, "stored document does not parse");
    return std::optional<json>{std::move(doc)};
}

namespace {

// Each query once, at a snapshot or of the newest values: Store and Snapshot share them.

/// Where a query reads: a snapshot and the earliest block held in it, or (no snapshot) the
/// newest values, whose earliest block is read after the value (Store::Impl::earliest says why
/// that is enough for a block never to be seen in part).
struct At {
    const rocksdb::Snapshot* snapshot{nullptr};
    uint64_t earliest{0};

    bool holds(const Store::Impl& impl, uint64_t number) const {
        return Store::Impl::held(number, snapshot != nullptr ? earliest : impl.earliest.load());
    }
};

constexpr At kNewest{};

Expected<std::optional<Bytes>, StoreError> raw_block_at(const Store::Impl& impl, uint64_t number,
                                                        const At& at) {
    auto v = impl.get(kBlocks, number_key(number), at.snapshot);
    if (!v) return unexpected(v.error());
    if (!*v || !at.holds(impl, number)) return std::optional<Bytes>{};
    return std::optional<Bytes>{Bytes(v->value().begin(), v->value().end())};
}

Expected<std::optional<Bytes>, StoreError> consensus_hash_at(const Store::Impl& impl,
                                                             uint64_t number, const At& at) {
    auto v = impl.get(kMeta, consensus_hash_key(number), at.snapshot);
    if (!v) return unexpected(v.error());
    if (!*v || !at.holds(impl, number)) return std::optional<Bytes>{};
    return std::optional<Bytes>{Bytes(v->value().begin(), v->value().end())};
}

Expected<std::optional<uint64_t>, StoreError> block_number_at(const Store::Impl& impl,
                                                              const Hash& block_hash,
                                                              const At& at) {
    auto v = impl.get(kMeta, hash_key(block_hash), at.snapshot);
    if (!v) return unexpected(v.error());
    if (!*v) return std::optional<uint64_t>{};
    const auto n = number_of(**v);
    if (!n) return fail(StoreErrorCode::corruption, "block hash index entry");
    if (!at.holds(impl, *n)) return std::optional<uint64_t>{};
    return std::optional<uint64_t>{*n};
}

/// A document decoded into its record: not found is empty, a damaged one an error naming the
/// document and the field (`what`: "the header of block 7").
template <typename Record>
ReadOutcome<Record> record_at(const Store::Impl& impl, size_t cf, std::string_view key,
                              const At& at,
                              Expected<Record, std::string> (*parse)(std::string_view),
                              const std::string& what) {
    auto v = impl.get(cf, key, at.snapshot);
    if (!v) return unexpected(v.error());
    if (!*v) return std::optional<Record>{};
    auto record = parse(**v);
    if (!record)
        return fail(StoreErrorCode::corruption,
                    "the stored document of " + what + " is damaged" +
                        (record.error().empty() ? std::string{" (not a JSON object)"}
                                                : " (field " + record.error() + ")"));
    return std::optional<Record>{std::move(*record)};
}

ReadOutcome<HeaderRecord> header_at(const Store::Impl& impl, uint64_t number, const At& at) {
    auto header =
        record_at<HeaderRecord>(impl, kHeaders, number_key(number), at, parse_header_document,
                                "the header of block " + std::to_string(number));
    if (header && *header && !at.holds(impl, number)) return std::optional<HeaderRecord>{};
    return header;
}

ReadOutcome<TransactionRecord> transaction_at(const Store::Impl& impl, const Hash& tx_hash,
                                              const At& at) {
    auto tx =
        record_at<TransactionRecord>(impl, kTxs, hash_bytes_key(tx_hash), at,
                                     parse_transaction_document, "transaction " + to_hex(tx_hash));
    if (tx && *tx && !at.holds(impl, (*tx)->location.block_number))
        return std::optional<TransactionRecord>{};
    return tx;
}

ReadOutcome<ReceiptRecord> receipt_at(const Store::Impl& impl, const Hash& tx_hash, const At& at) {
    auto receipt = record_at<ReceiptRecord>(impl, kReceipts, hash_bytes_key(tx_hash), at,
                                            parse_receipt_document,
                                            "the receipt of transaction " + to_hex(tx_hash));
    if (receipt && *receipt && !at.holds(impl, (*receipt)->block_number))
        return std::optional<ReceiptRecord>{};
    return receipt;
}

/// A stored document for `get`: absent when its block (the document's `block_number`, or
/// `number` for a header) is not held.
Expected<std::optional<json>, StoreError> document_of_block(const Store::Impl& impl, size_t cf,
                                                            std::string_view key) {
    auto doc = impl.get_json(cf, key);
    if (!doc || !*doc) return doc;
    const char* field = cf == kHeaders ? "number" : "block_number";
    const auto it = (*doc)->find(field);
    const auto number =
        it != (*doc)->end() && it->is_string() ? parse_u64(it->get<std::string>()) : std::nullopt;
    if (number && !kNewest.holds(impl, *number)) return std::optional<json>{};
    return doc;
}

}  // namespace

ReadOutcome<HeaderRecord> Store::header_record(uint64_t number) const {
    return header_at(*m_impl, number, kNewest);
}

ReadOutcome<TransactionRecord> Store::transaction_record(const Hash& tx_hash) const {
    return transaction_at(*m_impl, tx_hash, kNewest);
}

Expected<bool, StoreError> Store::took_transaction(const Hash& tx_hash) const {
    auto stored = m_impl->get(kTxs, hash_bytes_key(tx_hash));
    if (!stored) return unexpected(std::move(stored).error());
    return stored->has_value();
}

ReadOutcome<ReceiptRecord> Store::receipt_record(const Hash& tx_hash) const {
    return receipt_at(*m_impl, tx_hash, kNewest);
}

Expected<std::optional<Bytes>, StoreError> Store::raw_block(uint64_t number) const {
    return raw_block_at(*m_impl, number, kNewest);
}

ReadOutcome<Bytes> Store::consensus_hash(uint64_t number) const {
    return consensus_hash_at(*m_impl, number, kNewest);
}

Expected<std::optional<json>, StoreError> Store::header(uint64_t number) const {
    return document_of_block(*m_impl, kHeaders, number_key(number));
}

Expected<std::optional<uint64_t>, StoreError> Store::block_number(const Hash& block_hash) const {
    return block_number_at(*m_impl, block_hash, kNewest);
}

Expected<std::optional<json>, StoreError> Store::transaction(const Hash& tx_hash) const {
    return document_of_block(*m_impl, kTxs, hash_bytes_key(tx_hash));
}

Expected<std::optional<json>, StoreError> Store::receipt(const Hash& tx_hash) const {
    return document_of_block(*m_impl, kReceipts, hash_bytes_key(tx_hash));
}

Expected<std::optional<json>, StoreError> Store::account_document(const Address& address) const {
    return m_impl->get_json(kAccounts, address_key(address));
}

Expected<std::optional<json>, StoreError> Store::user_document(std::string_view name) const {
    return m_impl->get_json(kUsers, name);
}

// ---- Snapshot
// ------------------------------------------------------------------------------------

Snapshot::Snapshot(const Store::Impl& impl, std::unique_ptr<Handle> handle, const Head& head,
                   uint64_t earliest) noexcept
    : m_impl{impl}, m_handle{std::move(handle)}, m_head{head}, m_earliest{earliest} {}

Snapshot::~Snapshot() = default;

Expected<std::unique_ptr<Snapshot>, StoreError> Store::snapshot() const {
    auto handle = std::make_unique<Snapshot::Handle>(*m_impl->db, m_impl->db->GetSnapshot());
    // The head as the snapshot has it: its block's documents are in the same WriteBatch.
    auto text = m_impl->get(kMeta, kHeadKey, handle->snapshot);
    if (!text) return unexpected(text.error());
    const auto head = *text ? parse_head(**text) : std::nullopt;
    if (!head) return fail(StoreErrorCode::corruption, "datadir has no valid head");
    auto earliest = m_impl->get(kMeta, kEarliestKey, handle->snapshot);
    if (!earliest) return unexpected(earliest.error());
    const auto first = *earliest ? number_of(**earliest) : std::optional<uint64_t>{0};
    if (!first)
        return fail(StoreErrorCode::corruption, "the datadir's earliest block entry is damaged");
    return std::unique_ptr<Snapshot>{new Snapshot{*m_impl, std::move(handle), *head, *first}};
}

state::ReadResult<state::Account> Snapshot::account(const Address& address) const {
    auto v = m_impl.get(kAccounts, address_key(address), m_handle->snapshot);
    if (!v)
        return unexpected(
            state::ReadError{state::ReadErrorCode::io, "state read: " + v.error().message});
    if (!*v) return std::optional<state::Account>{};
    auto a = parse_account_document(**v);
    if (!a)
        return unexpected(state::ReadError{
            state::ReadErrorCode::corruption,
            "the stored account document of " + to_hex(address) + " does not parse"});
    return std::optional<state::Account>{*a};
}

state::ReadResult<u256> Snapshot::user(std::string_view name) const {
    auto v = m_impl.get(kUsers, name, m_handle->snapshot);
    if (!v)
        return unexpected(
            state::ReadError{state::ReadErrorCode::io, "state read: " + v.error().message});
    if (!*v) return std::optional<u256>{};
    auto b = parse_user_document(**v);
    if (!b)
        return unexpected(state::ReadError{
            state::ReadErrorCode::corruption,
            "the stored document of user " + to_hex(as_bytes(name)) + " does not parse"});
    return std::optional<u256>{*b};
}

Expected<std::optional<Bytes>, StoreError> Snapshot::raw_block(uint64_t number) const {
    return raw_block_at(m_impl, number, At{m_handle->snapshot, m_earliest});
}

ReadOutcome<Bytes> Snapshot::consensus_hash(uint64_t number) const {
    return consensus_hash_at(m_impl, number, At{m_handle->snapshot, m_earliest});
}

Expected<std::optional<uint64_t>, StoreError> Snapshot::block_number(const Hash& block_hash) const {
    return block_number_at(m_impl, block_hash, At{m_handle->snapshot, m_earliest});
}

ReadOutcome<HeaderRecord> Snapshot::header_record(uint64_t number) const {
    return header_at(m_impl, number, At{m_handle->snapshot, m_earliest});
}

ReadOutcome<TransactionRecord> Snapshot::transaction_record(const Hash& tx_hash) const {
    return transaction_at(m_impl, tx_hash, At{m_handle->snapshot, m_earliest});
}

ReadOutcome<ReceiptRecord> Snapshot::receipt_record(const Hash& tx_hash) const {
    return receipt_at(m_impl, tx_hash, At{m_handle->snapshot, m_earliest});
}

}  // namespace barrel::store
