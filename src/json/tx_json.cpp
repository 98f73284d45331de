#include <barrel/json/tx_json.hpp>

namespace barrel {

namespace {

nlohmann::json access_list_json(const std::vector<tx::AccessListEntry>& list) {
    auto out = nlohmann::json::array();
    for (const auto& entry : list) {
        auto keys = nlohmann::json::array();
        for (const auto& key : entry.storage_keys) keys.push_back(json_bytes(key));
        out.push_back({{"address", json_bytes(entry.address)}, {"storage_keys", std::move(keys)}});
    }
    return out;
}

}  // namespace

u256 json_v(const tx::Transaction& tx) {
    const unsigned parity = tx.y_parity ? 1 : 0;
    if (tx.type != tx::TxType::legacy) return parity;
    if (!tx.chain_id) return 27 + parity;
    return u256{*tx.chain_id} * 2 + 35 + parity;
}

nlohmann::json to_json(const tx::Transaction& tx, const Hash& hash,
                       const std::optional<Address>& sender) {
    const bool typed = tx.type != tx::TxType::legacy;
    nlohmann::json j = {
        {"type", json_quantity(static_cast<uint64_t>(tx.type))},
        {"chain_id", json_nullable(tx.chain_id, [](uint64_t id) { return json_quantity(id); })},
        {"nonce", json_quantity(tx.nonce)},
        {"gas_limit", json_quantity(tx.gas_limit)},
        {"to", json_nullable(tx.to, [](const Address& a) { return json_bytes(a); })},
        {"value", json_quantity(tx.value)},
        {"input", json_bytes(tx.data)},
        {"v", json_quantity(json_v(tx))},
        {"r", json_quantity(tx.r)},
        {"s", json_quantity(tx.s)},
        {"hash", json_bytes(hash)},
        {"sender", json_nullable(sender, [](const Address& a) { return json_bytes(a); })},
    };
    if (tx.type == tx::TxType::dynamic_fee) {
        j["max_fee_per_gas"] = json_quantity(tx.max_fee_per_gas);
        j["max_priority_fee_per_gas"] = json_quantity(tx.max_priority_fee_per_gas);
    } else {
        j["gas_price"] = json_quantity(tx.gas_price());
    }
    if (typed) j["access_list"] = access_list_json(tx.access_list);
    return j;
}

}  // namespace barrel
