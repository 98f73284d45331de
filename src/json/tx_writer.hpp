#pragma once
/// @file
/// The serializer behind a transaction's JSON (barrel/json/tx_json.hpp), for the modules that
/// write documents without a DOM (the store, the RPC service). Internal to the library.

#include <barrel/json/tx_json.hpp>

#include "json/writer.hpp"

#include <optional>

namespace barrel {

/// Writes the object of to_json (barrel/json/tx_json.hpp) (plus `at`'s fields when given) as the
/// next value of `w`: the same bytes nlohmann::json::dump() makes of it, without building a DOM.
void write_tx_json(JsonWriter& w, const tx::Transaction& tx, const Hash& hash,
                   const std::optional<Address>& sender, const TxLocation* at = nullptr);

}  // namespace barrel
