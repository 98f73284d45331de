#include "rpc/call_args.hpp"

#include "rpc/context.hpp"
#include "rpc/params.hpp"

#include <utility>

namespace barrel::rpc {

namespace {

/// Reads one member of a call object into `out`; the error is the reason ("gas: …").
Expected<void, std::string> read_call_member(CallObject& out, const std::string& key,
                                             const json& value) {
    auto fail = [&](const std::string& why) { return unexpected(key + ": " + why); };
    if (key == "from" || key == "to") {
        auto bytes = parse_data(value);
        if (!bytes || bytes->size() != 20) return fail(bytes ? "want 20 bytes" : bytes.error());
        (key == "from" ? out.from : out.to) = Address::from_view(*bytes);
    } else if (key == "gas" || key == "chainId" || key == "nonce" || key == "type") {
        auto v = parse_quantity(value, 64);
        if (!v) return fail(v.error());
        if (key == "gas") out.gas = static_cast<uint64_t>(*v);
        if (key == "chainId") out.chain_id = static_cast<uint64_t>(*v);
    } else if (key == "gasPrice" || key == "maxFeePerGas" || key == "maxPriorityFeePerGas" ||
               key == "value") {
        auto v = parse_quantity(value, 256);
        if (!v) return fail(v.error());
        (key == "value"          ? out.value
         : key == "gasPrice"     ? out.gas_price
         : key == "maxFeePerGas" ? out.max_fee
                                 : out.max_priority_fee) = *v;
    } else if (key == "data" || key == "input") {
        auto v = parse_data(value);
        if (!v) return fail(v.error());
        (key == "data" ? out.data : out.input) = std::move(*v);
    }
    // Other members (accessList, …) do not change what barrel computes.
    return {};
}

}  // namespace

Expected<CallObject, std::string> CallObject::read(const json& object) {
    if (!object.is_object()) return unexpected(std::string{"want a call object"});
    CallObject out;
    for (const auto& [key, value] : object.items()) {
        if (value.is_null()) continue;
        if (auto member = read_call_member(out, key, value); !member)
            return unexpected(std::move(member.error()));
    }
    return out;
}

Expected<CallTx, Error> call_tx(CallObject object, const exec::ChainConfig& config) {
    if (object.chain_id && *object.chain_id != config.chain_id)
        return server_error(
            "chainId does not match node's (have=" + std::to_string(*object.chain_id) +
            ", want=" + std::to_string(config.chain_id) + ")");
    if (object.data && object.input && *object.data != *object.input)
        return server_error(
            R"(both "data" and "input" are set and not equal. Please use "input" to pass )"
            "transaction call data");
    if (object.gas_price && (object.max_fee || object.max_priority_fee))
        return server_error("both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified");
    CallTx out;
    tx::Transaction& t = out.tx;
    out.from = object.from.value_or(Address{});
    t.to = object.to;
    t.value = object.value.value_or(0);
    out.gas_given = object.gas.has_value();
    t.gas_limit = object.gas.value_or(0);
    if (object.max_fee || object.max_priority_fee) {
        t.type = tx::TxType::dynamic_fee;
        t.max_fee_per_gas = object.max_fee.value_or(0);
        t.max_priority_fee_per_gas = object.max_priority_fee.value_or(0);
    } else {
        t.type = tx::TxType::legacy;
        t.max_fee_per_gas = t.max_priority_fee_per_gas = object.gas_price.value_or(0);
    }
    if (object.input)
        out.data = std::move(*object.input);
    else if (object.data)
        out.data = std::move(*object.data);
    t.data = out.data;
    return out;
}

}  // namespace barrel::rpc
