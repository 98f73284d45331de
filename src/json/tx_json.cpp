#include <barrel/json/tx_json.hpp>

#include "json/tx_writer.hpp"

namespace barrel {

u256 json_v(const tx::Transaction& tx) {
    const unsigned parity = tx.y_parity ? 1 : 0;
    if (tx.type != tx::TxType::legacy) return parity;
    if (!tx.chain_id) return 27 + parity;
    return u256{*tx.chain_id} * 2 + 35 + parity;
}

void write_tx_json(JsonWriter& w, const tx::Transaction& t, const Hash& hash,
                   const std::optional<Address>& sender, const TxLocation* at) {
    // Keys in ascending byte order, as the writer requires (and dump() produces).
    const bool typed = t.type != tx::TxType::legacy;
    const bool dynamic_fee = t.type == tx::TxType::dynamic_fee;
    w.begin_object();
    if (typed) {
        w.key("access_list").begin_array();
        for (const auto& entry : t.access_list) {
            w.begin_object().key("address").bytes(entry.address).key("storage_keys").begin_array();
            for (const auto& storage_key : entry.storage_keys) w.bytes(storage_key);
            w.end_array().end_object();
        }
        w.end_array();
    }
    if (at)
        w.key("block_hash").bytes(at->block_hash).key("block_number").quantity(at->block_number);
    w.key("chain_id");
    t.chain_id ? w.quantity(*t.chain_id) : w.null();
    w.key("gas_limit").quantity(t.gas_limit);
    if (!dynamic_fee) w.key("gas_price").quantity(t.gas_price());
    w.key("hash").bytes(hash);
    if (at) w.key("index").quantity(uint64_t{at->index});
    w.key("input").bytes(t.data);
    if (dynamic_fee) {
        w.key("max_fee_per_gas").quantity(t.max_fee_per_gas);
        w.key("max_priority_fee_per_gas").quantity(t.max_priority_fee_per_gas);
    }
    w.key("nonce").quantity(t.nonce);
    w.key("r").quantity(t.r);
    w.key("s").quantity(t.s);
    w.key("sender");
    sender ? w.bytes(*sender) : w.null();
    w.key("to");
    t.to ? w.bytes(*t.to) : w.null();
    w.key("type").quantity(static_cast<uint64_t>(t.type));
    w.key("v").quantity(json_v(t));
    w.key("value").quantity(t.value);
    w.end_object();
}

nlohmann::json to_json(const tx::Transaction& tx, const Hash& hash,
                       const std::optional<Address>& sender) {
    // The command line's few transactions go through the store's serializer and back, so that
    // both print the same object.
    std::string text;
    JsonWriter w{text};
    write_tx_json(w, tx, hash, sender);
    return nlohmann::json::parse(text);
}

}  // namespace barrel
