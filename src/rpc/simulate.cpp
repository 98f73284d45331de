#include "rpc/simulate.hpp"

#include <barrel/block/block.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/json/conventions.hpp>

#include <algorithm>
#include <string>
#include <string_view>

namespace barrel::rpc {

namespace {

/// go-ethereum's words for an address in an error (common.Address.Hex: EIP-55 mixed case).
std::string checksummed(const Address& a) {
    std::string hex = to_hex(a);  // "0x" + lower case
    const Hash h = keccak256(as_bytes(std::string_view{hex}.substr(2)));
    for (size_t i = 0; i < 40; ++i) {
        const uint8_t nibble = (h[i / 2] >> (i % 2 == 0 ? 4 : 0)) & 0xf;
        char& c = hex[2 + i];
        if (c >= 'a' && c <= 'f' && nibble >= 8) c = static_cast<char>(c - 'a' + 'A');
    }
    return hex;
}

/// Which method simulates a call: they word gas below the intrinsic gas differently.
enum class Simulation : uint8_t { call, estimate };

/// Runs a call as the only transaction of a block on the head, at `gas`, with the sender's nonce,
/// by the same executor as every block; nothing is committed. First the checks go-ethereum's
/// state transition makes of a message, in its order and words: fee caps, funds for gas × fee
/// cap + value, intrinsic gas (for an estimate: "gas required exceeds allowance"), init code.
/// Fees all zero mean no base fee (go-ethereum's NoBaseFee for calls).
Expected<exec::Receipt, Error> simulate(Context& c, const CallTx& call, uint64_t gas,
                                        Simulation kind) {
    auto account = account_of(c, call.from);
    if (!account) return unexpected(account.error());
    tx::Transaction t = call.tx;
    t.data = call.data;
    t.gas_limit = gas;
    t.chain_id = c.config().chain_id;
    t.nonce = account->nonce;
    t.r = t.s = 1;  // never checked: the sender is given
    exec::ChainConfig config = c.config();
    const bool priced = t.max_fee_per_gas != 0 || t.max_priority_fee_per_gas != 0;
    if (!priced) config.base_fee = 0;
    const std::string from = checksummed(call.from);
    if (t.max_priority_fee_per_gas > t.max_fee_per_gas)
        return server_error("max priority fee per gas higher than max fee per gas: address " +
                            from +
                            ", maxPriorityFeePerGas: " + to_decimal(t.max_priority_fee_per_gas) +
                            ", maxFeePerGas: " + to_decimal(t.max_fee_per_gas));
    if (t.max_fee_per_gas < config.base_fee)
        return server_error("max fee per gas less than block base fee: address " + from +
                            ", maxFeePerGas: " + to_decimal(t.max_fee_per_gas) +
                            ", baseFee: " + to_decimal(config.base_fee));
    // In 512 bits: gas × fee cap may not fit 256, and then no balance covers it.
    const u512 want = u512{gas} * u512{t.max_fee_per_gas} + u512{t.value};
    if (u512{account->balance} < want)
        return server_error("insufficient funds for gas * price + value: address " + from +
                            " have " + to_decimal(account->balance) + " want " + want.str());
    const uint64_t intrinsic = tx::intrinsic_gas(t);
    if (gas < intrinsic) {
        if (kind == Simulation::estimate)
            return server_error("gas required exceeds allowance (" + std::to_string(gas) + ")");
        return server_error("intrinsic gas too low: have " + std::to_string(gas) + ", want " +
                            std::to_string(intrinsic));
    }
    if (t.is_creation() && t.data.size() > tx::kMaxInitCodeSize)
        return server_error("max initcode size exceeded: code size " +
                            std::to_string(t.data.size()) + " limit " +
                            std::to_string(tx::kMaxInitCodeSize));
    const Bytes encoding = tx::encode(t);
    block::Header h;
    h.parent_hash = c.view.head().hash;
    h.number = c.view.head().number + 1;
    h.gas_limit = std::max(c.node.store.genesis().gas_limit, gas);
    h.chain_id = c.config().chain_id;
    const BytesView views[] = {encoding};
    auto block = block::decode_block(block::encode_block(h, views), false);
    if (!block) return server_error("invalid call: " + block::describe(block.error()));
    block->senders = {call.from};
    // A call's state root is never read: no commitment is computed.
    auto outcome = exec::execute(*block, c.view, state::Lattice{}, config,
                                 exec::ExecOptions{.commitment = false});
    if (!outcome) return server_error(exec::describe(outcome.error()));
    return std::move(outcome->receipts.front());
}

}  // namespace

Result estimate_gas(Context& c, CallObject object, std::optional<BlockRef> block) {
    auto call = call_tx(std::move(object), c.config());
    if (!call) return unexpected(call.error());
    if (auto head = require_head_state(c, block.value_or(BlockRef{})); !head)
        return unexpected(head.error());
    // The most gas the estimate may use (go-ethereum's gasestimator): the call's gas if at least
    // a transfer's, else the block gas limit; never more than a block can include (go-ethereum
    // takes more, but a transaction above the block gas limit could never be mined here); and
    // no more than the sender's funds pay for at its fee cap.
    const uint64_t block_gas = c.node.store.genesis().gas_limit;
    uint64_t allowance = block_gas;
    if (call->gas_given && call->tx.gas_limit >= 21'000)
        allowance = std::min(call->tx.gas_limit, block_gas);
    const u256& fee_cap = call->tx.max_fee_per_gas;
    if (fee_cap != 0) {
        auto account = account_of(c, call->from);
        if (!account) return unexpected(account.error());
        if (call->tx.value >= account->balance)
            return server_error("insufficient funds for transfer");
        const u256 affordable = (account->balance - call->tx.value) / fee_cap;
        if (affordable < allowance) allowance = static_cast<uint64_t>(affordable);
    }
    // barrel's gas use depends on the transaction alone (docs/rpc.md): a call that succeeds at
    // the allowance uses its intrinsic gas at any limit from there down, so one run finds what
    // go-ethereum's binary search would.
    auto receipt = simulate(c, *call, allowance, Simulation::estimate);
    if (!receipt) return unexpected(receipt.error());
    if (!receipt->status) return server_error("execution reverted");
    return json_quantity(receipt->gas_used);
}

Result call_method(Context& c, CallObject object, std::optional<BlockRef> block) {
    auto call = call_tx(std::move(object), c.config());
    if (!call) return unexpected(call.error());
    if (auto head = require_head_state(c, block.value_or(BlockRef{})); !head)
        return unexpected(head.error());
    // No gas given: the block gas limit (go-ethereum: its RPC gas cap). Gas 0 given is 0, and
    // too low, as in go-ethereum.
    const uint64_t gas = call->gas_given ? call->tx.gas_limit : c.node.store.genesis().gas_limit;
    auto receipt = simulate(c, *call, gas, Simulation::call);
    if (!receipt) return unexpected(receipt.error());
    if (!receipt->status) return server_error("execution reverted");
    return json_bytes(receipt->output);
}

}  // namespace barrel::rpc
