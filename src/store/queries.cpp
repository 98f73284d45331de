// Point reads of the stored documents, for the CLI's `get` and `export` and for a node's queries.

#include "store_impl.hpp"

namespace barrel::store {

using nlohmann::json;

Expected<std::optional<std::string>, StoreError> Store::Impl::get(size_t cf,
                                                                  std::string_view key) const {
    std::string value;
    const auto s = db->Get(rocksdb::ReadOptions{}, cfs[cf], slice(key), &value);
    if (s.IsNotFound()) return std::optional<std::string>{};
    if (!s.ok()) return from_status(s, "read");
    return std::optional<std::string>{std::move(value)};
}

Expected<std::optional<json>, StoreError> Store::Impl::get_json(size_t cf,
                                                                std::string_view key) const {
    auto v = get(cf, key);
    if (!v) return unexpected(v.error());
    if (!*v) return std::optional<json>{};
    json doc = json::parse(**v, nullptr, false);
    if (doc.is_discarded())
        return fail(StoreErrorCode::corruption, "stored document does not parse");
    return std::optional<json>{std::move(doc)};
}

Expected<std::optional<Bytes>, StoreError> Store::raw_block(uint64_t number) const {
    auto v = m_impl->get(kBlocks, number_key(number));
    if (!v) return unexpected(v.error());
    if (!*v) return std::optional<Bytes>{};
    return std::optional<Bytes>{Bytes(v->value().begin(), v->value().end())};
}

Expected<std::optional<json>, StoreError> Store::header(uint64_t number) const {
    return m_impl->get_json(kHeaders, number_key(number));
}

Expected<std::optional<uint64_t>, StoreError> Store::block_number(const Hash& block_hash) const {
    auto v = m_impl->get(kMeta, hash_key(block_hash));
    if (!v) return unexpected(v.error());
    if (!*v) return std::optional<uint64_t>{};
    if ((*v)->size() != 8) return fail(StoreErrorCode::corruption, "block hash index entry");
    uint64_t n = 0;
    for (char c : **v) n = (n << 8) | static_cast<uint8_t>(c);
    return std::optional<uint64_t>{n};
}

Expected<std::optional<json>, StoreError> Store::transaction(const Hash& tx_hash) const {
    return m_impl->get_json(kTxs, hash_bytes_key(tx_hash));
}

Expected<std::optional<json>, StoreError> Store::receipt(const Hash& tx_hash) const {
    return m_impl->get_json(kReceipts, hash_bytes_key(tx_hash));
}

Expected<std::optional<json>, StoreError> Store::account_document(const Address& address) const {
    return m_impl->get_json(kAccounts, address_key(address));
}

Expected<std::optional<json>, StoreError> Store::user_document(std::string_view name) const {
    return m_impl->get_json(kUsers, name);
}

}  // namespace barrel::store
