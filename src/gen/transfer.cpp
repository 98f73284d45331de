#include <barrel/gen/transfer.hpp>

#include <stdexcept>

namespace barrel::gen {

tx::Transaction sign_transfer(const Transfer& transfer) {
    tx::Transaction t;
    t.type = transfer.type;
    t.chain_id = transfer.chain_id;
    t.nonce = transfer.nonce;
    t.max_fee_per_gas = transfer.fee_cap;
    // A legacy transaction's one price is both caps.
    t.max_priority_fee_per_gas =
        transfer.type == tx::TxType::legacy ? transfer.fee_cap : transfer.tip;
    t.gas_limit = transfer.gas;
    t.to = transfer.to;
    t.value = transfer.value;
    if (!tx::sign(t, transfer.key))
        throw std::invalid_argument{"gen::sign_transfer: the key is not a valid secret"};
    return t;
}

Bytes signed_transfer(const Transfer& transfer) { return tx::encode(sign_transfer(transfer)); }

}  // namespace barrel::gen
