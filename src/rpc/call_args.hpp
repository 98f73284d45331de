#pragma once
// The call object of eth_call and eth_estimateGas (go-ethereum's internal/ethapi
// transaction_args.go): its members as given, then the unsigned transaction they make, with
// go-ethereum's checks of how they go together, in its words.

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/tx/transaction.hpp>

#include "rpc/jsonrpc.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace barrel::rpc {

/// A call object's members as given (go-ethereum's TransactionArgs): what eth_call and
/// eth_estimateGas decode before they check how the members go together (call_tx).
struct CallObject {
    std::optional<Address> from, to;
    std::optional<uint64_t> gas, chain_id;
    std::optional<u256> value, gas_price, max_fee, max_priority_fee;
    std::optional<Bytes> data, input;

    /// A method parameter (params.hpp): a JSON object; a member's error names it ("gas: …").
    static Expected<CallObject, std::string> read(const json& object);
};

/// A call object as an unsigned transaction, and its sender.
struct CallTx {
    tx::Transaction tx;  ///< fees as given (legacy with gasPrice, or EIP-1559's two caps)
    Bytes data;
    Address from;
    bool gas_given{false};  ///< "gas" was set (0 included: go-ethereum takes it as given)
};

/// A call object as an unsigned transaction, as go-ethereum's TransactionArgs makes one for
/// eth_call and eth_estimateGas: the errors of its CallDefaults and of its data/input rule, in
/// its words (-32000).
Expected<CallTx, Error> call_tx(CallObject object, const exec::ChainConfig& config);

}  // namespace barrel::rpc
