// `tx decode`: one transaction from its network encoding to JSON (barrel/json/tx_json.hpp),
// validated and with its sender recovered, so what it prints is what a block would accept.

#include <barrel/cli/cli.hpp>
#include <barrel/json/tx_json.hpp>
#include <barrel/tx/transaction.hpp>

#include "command.hpp"

#include <optional>
#include <ostream>

namespace barrel::cli {

namespace {

int tx_decode(Context& ctx, const ParsedArgs& args) {
    // Like foundry's `cast`, any chain by default: the transaction is checked against the chain
    // it was signed for (a pre-EIP-155 one names none), and against --chain-id only when given.
    std::optional<uint64_t> option_chain_id;
    if (const auto v = args.value("--chain-id"))
        option_chain_id = parse_u64_option("--chain-id", *v);

    const Bytes bytes = read_hex_argument(ctx, args.positionals[0]);
    const auto tx = tx::decode(bytes);
    if (!tx) fail("tx: " + tx::describe(tx.error()));
    // No chain has id 0 (the genesis parser refuses it): a signature for it is wrong whatever
    // the option says, and without the option it is checked against chain 1 to say so.
    const uint64_t chain_id =
        option_chain_id.value_or(tx->chain_id && *tx->chain_id != 0 ? *tx->chain_id : 1);
    if (const auto valid = tx::validate(*tx, chain_id); !valid) {
        std::string message = "tx: " + tx::describe(valid.error());
        if (valid.error().code == tx::TxErrorCode::wrong_chain_id && tx->chain_id)
            message += " (signed for chain " + std::to_string(*tx->chain_id) +
                       (option_chain_id ? ", --chain-id is " + std::to_string(chain_id) + ")"
                                        : ", which no chain has)");
        fail(message);
    }
    const auto sender = tx::recover_sender(*tx, tx::signing_hash(*tx));
    if (!sender) fail("tx: " + tx::describe(sender.error()));

    ctx.out << to_json(*tx, tx::hash_of(bytes), *sender).dump(2) << "\n";
    return kExitOk;
}

}  // namespace

Command tx_decode_command() {
    return {
        .name = "tx decode",
        .summary = "Decode, validate and recover the sender of a transaction; print it as JSON",
        .args = {{"HEX|-",
                  "The transaction's encoding as hex (legacy RLP list or typed envelope); '-' "
                  "reads stdin"}},
        .options = {{"--chain-id", "N",
                     "The chain id the transaction must be signed for (default: any, as signed)"}},
        .details =
            "Legacy (with or without EIP-155), EIP-2930 and EIP-1559 transactions. A transaction\n"
            "that decodes but breaks a stateless rule (signature range, EIP-2 low s, chain id,\n"
            "intrinsic gas, fee caps, ...) or whose sender cannot be recovered is an error naming\n"
            "the reason, e.g. 'tx: s: high_s'. Numbers in the JSON are 0x quantities; 'to' is "
            "null\n"
            "for a contract creation, 'chain_id' null for a pre-EIP-155 transaction.\n"
            "Standard input ('-') is read up to 268435456 bytes (docs/formats.md \"Limits\").",
        .handler = tx_decode,
    };
}

}  // namespace barrel::cli
