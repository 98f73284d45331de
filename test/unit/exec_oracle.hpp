#pragma once
/// @file
/// A deliberately simple serial executor, used only by the tests as the reference that
/// exec::execute must agree with. It shares no code with src/exec beyond the DagTransfer ABI
/// (decode_call / encode_return), tx::intrinsic_gas and the hash functions that define the roots:
/// its state is a pair of std::maps copied from the parent, the transactions run in one plain loop
/// in block order, and the write set is what differs between the final and the initial maps.
///
/// The semantics, spelled out (docs/architecture.md, "Stage 3: execute (PTE)", and
/// docs/formats.md):
/// - validity of transaction i, checked in this order against the state its predecessors left:
///   EIP-1559 max fee ≥ base fee (gas price ≥ base fee for the other types); cumulative gas used +
///   gas limit ≤ header gas limit; nonce == account nonce; balance ≥ gas limit × max fee + value; a
///   credit that would exceed 2^256 − 1 is an error too. The first invalid transaction rejects the
///   block.
/// - a value transfer (to anything but the precompile) moves `value` (nothing moves, and nothing
///   is created, when it is zero); gas used = intrinsic gas; status 1; no output.
/// - a well-formed DagTransfer call with value 0: gas used = intrinsic gas, status 1 whatever code
///   it returns, output = the ABI return word(s); malformed or value > 0: status 0, gas used =
///   gas limit, nothing moves.
/// - contract creation: status 0, gas used = gas limit, nothing moves.
/// - every valid transaction bumps the sender's nonce (creating the sender if absent) and pays
///   gas used × effective price (EIP-1559: min(max fee, base fee + priority fee)); the block's
///   fees go to the coinbase once, after the last transaction.

#include <barrel/block/block.hpp>
#include <barrel/block/merkle.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/exec/dag_transfer.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/state/state.hpp>
#include <barrel/tx/transaction.hpp>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace barrel::test {

/// 2^256 - 1: the largest balance, the credit that overflows.
inline const u256 kMax = ~u256{0};

}  // namespace barrel::test

namespace barrel::test::oracle {

struct State {
    std::map<Address, state::Account> accounts;
    std::map<std::string, u256> users;
    friend bool operator==(const State&, const State&) = default;
};

inline State copy_of(const state::MemoryState& s) {
    State out;
    for (const auto& [a, acc] : s.accounts()) out.accounts.emplace(a, acc);
    for (const auto& [name, bal] : s.users()) out.users.emplace(name, bal);
    return out;
}

struct Result {
    std::vector<exec::Receipt> receipts;
    std::vector<Hash> receipt_hashes;
    state::WriteSet writes;
    uint64_t gas_used{0};
    u256 fees;
    Hash txs_root;
    Hash receipts_root;
    Hash state_root;
    state::Lattice lattice;
    State final_state;  ///< the parent with the write set applied
};

/// Every entry of `s`, as a write set lists them (the input of state::lattice_of).
inline state::WriteSet entries_of(const State& s) {
    state::WriteSet all;
    for (const auto& [a, acc] : s.accounts) all.accounts.emplace_back(a, acc);
    for (const auto& [name, bal] : s.users) all.users.emplace_back(name, bal);
    return all;
}

/// The block's outcome, or its first invalid transaction.
inline Expected<Result, exec::ExecError> execute(const block::Block& block, const State& parent,
                                                 const state::Lattice& parent_lattice,
                                                 const exec::ChainConfig& config) {
    using exec::DagCode;
    using exec::DagFunction;
    using exec::ExecError;
    using exec::ExecErrorCode;

    if (!block.header) return unexpected(ExecError{ExecErrorCode::missing_header, 0});
    if (block.senders.size() != block.txs.size() || block.tx_hashes.size() != block.txs.size())
        return unexpected(ExecError{ExecErrorCode::missing_senders, 0});
    const block::Header& header = *block.header;
    const u256 max_u256 = ~u256{0};

    State s = parent;
    Result out;
    uint64_t cumulative = 0;
    u512 fee_total = 0;
    for (size_t i = 0; i < block.txs.size(); ++i) {
        const tx::Transaction& t = block.txs[i];
        const Address& from = block.senders[i];
        auto fail = [i](ExecErrorCode c) { return unexpected(ExecError{c, i}); };

        // --- validity, in the decided order
        if (t.type == tx::TxType::dynamic_fee && t.max_fee_per_gas < config.base_fee)
            return fail(ExecErrorCode::fee_cap_below_base_fee);
        if (t.type != tx::TxType::dynamic_fee && t.gas_price() < config.base_fee)
            return fail(ExecErrorCode::gas_price_below_base_fee);
        if (u512{cumulative} + t.gas_limit > header.gas_limit)
            return fail(ExecErrorCode::block_gas_exceeded);
        const state::Account before =
            s.accounts.count(from) ? s.accounts.at(from) : state::Account{};
        if (t.nonce != before.nonce) return fail(ExecErrorCode::nonce_mismatch);
        if (u512{before.balance} < u512{t.gas_limit} * u512{t.max_fee_per_gas} + u512{t.value})
            return fail(ExecErrorCode::insufficient_balance);

        // --- what kind of transaction, and its gas
        enum { transfer, call, failed } kind = transfer;
        std::optional<exec::DagCall> dag_call;
        if (!t.to) {
            kind = failed;  // contract creation is not supported
        } else if (*t.to == exec::kDagTransferAddress) {
            dag_call = exec::decode_call(t.data);
            kind = dag_call && t.value == 0 ? call : failed;
        }
        const uint64_t gas_used = kind == failed ? t.gas_limit : tx::intrinsic_gas(t);

        u256 price = t.max_fee_per_gas;
        if (t.type == tx::TxType::dynamic_fee) {
            const u512 tip_cap = u512{config.base_fee} + u512{t.max_priority_fee_per_gas};
            if (tip_cap < u512{price}) price = static_cast<u256>(tip_cap);
        }
        const u256 fee = u256{gas_used} * price;

        // A value transfer to another account must not overflow the recipient.
        const bool moves = kind == transfer && t.value != 0;
        if (moves && *t.to != from) {
            const u256 to_balance =
                s.accounts.count(*t.to) ? s.accounts.at(*t.to).balance : u256{0};
            if (u512{to_balance} + u512{t.value} > u512{max_u256})
                return fail(ExecErrorCode::balance_overflow);
        }

        // --- the transaction is valid: apply it
        state::Account& sender = s.accounts[from];
        sender.nonce += 1;
        sender.balance -= fee;
        fee_total += fee;

        exec::Receipt r;
        r.gas_used = gas_used;
        cumulative += gas_used;
        r.cumulative_gas_used = cumulative;
        if (kind == transfer) {
            r.status = true;
            if (moves) {
                s.accounts[from].balance -= t.value;
                s.accounts[*t.to].balance += t.value;
            }
        } else if (kind == call) {
            r.status = true;
            const exec::DagCall& c = *dag_call;
            const std::string user{c.user};
            const std::string to{c.to};
            const bool user_exists = s.users.count(user) != 0;
            DagCode code = DagCode::ok;
            // FISCO BCOS 2.x checks the names first: an empty one is refused by every function.
            const bool bad_name =
                user.empty() || (c.function == DagFunction::user_transfer && to.empty());
            if (bad_name) {
                code = DagCode::invalid_user_name;
            } else {
                switch (c.function) {
                    case DagFunction::user_add:
                        if (user_exists) {
                            code = DagCode::user_exists;
                        } else {
                            s.users[user] = c.amount;
                        }
                        break;
                    case DagFunction::user_save:
                        if (c.amount == 0) {
                            code = DagCode::invalid_amount;
                        } else if (!user_exists) {
                            s.users[user] = c.amount;
                        } else if (u512{s.users[user]} + u512{c.amount} > u512{max_u256}) {
                            code = DagCode::overflow;
                        } else {
                            s.users[user] += c.amount;
                        }
                        break;
                    case DagFunction::user_draw:
                        if (c.amount == 0) {
                            code = DagCode::invalid_amount;
                        } else if (!user_exists) {
                            code = DagCode::user_not_found;
                        } else if (s.users[user] < c.amount) {
                            code = DagCode::insufficient_balance;
                        } else {
                            s.users[user] -= c.amount;
                        }
                        break;
                    case DagFunction::user_balance: break;
                    case DagFunction::user_transfer:
                        if (c.amount == 0) {
                            code = DagCode::invalid_amount;
                        } else if (user == to) {
                            code = DagCode::ok;
                        } else if (!user_exists) {
                            code = DagCode::user_not_found;
                        } else if (s.users[user] < c.amount) {
                            code = DagCode::insufficient_balance;
                        } else {
                            const u256 to_balance = s.users.count(to) ? s.users[to] : u256{0};
                            if (u512{to_balance} + u512{c.amount} > u512{max_u256}) {
                                code = DagCode::overflow;
                            } else {
                                s.users[user] -= c.amount;
                                s.users[to] = to_balance + c.amount;
                            }
                        }
                        break;
                }
            }
            if (c.function == DagFunction::user_balance) {
                r.output = bad_name      ? exec::encode_return(DagCode::invalid_user_name, 0)
                           : user_exists ? exec::encode_return(DagCode::ok, s.users[user])
                                         : exec::encode_return(DagCode::user_not_found, 0);
            } else {
                r.output = exec::encode_return(code);
            }
        } else {
            r.status = false;
        }
        out.receipts.push_back(std::move(r));
    }

    // The fees are credited to the coinbase as one sum: a sum past 2^256 overflows the coinbase
    // whatever its balance.
    if (fee_total > u512{max_u256})
        return unexpected(ExecError{ExecErrorCode::balance_overflow, block.txs.size() - 1});
    out.fees = static_cast<u256>(fee_total);
    if (out.fees != 0) {
        const u256 cb =
            s.accounts.count(header.coinbase) ? s.accounts.at(header.coinbase).balance : u256{0};
        if (u512{cb} + u512{out.fees} > u512{max_u256}) {
            const size_t last = block.txs.empty() ? 0 : block.txs.size() - 1;
            return unexpected(ExecError{ExecErrorCode::balance_overflow, last});
        }
        s.accounts[header.coinbase].balance += out.fees;
    }
    out.gas_used = cumulative;

    // The write set: final vs initial, in key order (std::map order is the byte order).
    for (const auto& [a, acc] : s.accounts) {
        const auto it = parent.accounts.find(a);
        if (it == parent.accounts.end() || it->second != acc) {
            out.writes.accounts.emplace_back(a, acc);
            out.writes.accounts_before.push_back(
                it == parent.accounts.end() ? std::nullopt : std::optional{it->second});
        }
    }
    for (const auto& [name, bal] : s.users) {
        const auto it = parent.users.find(name);
        if (it == parent.users.end() || it->second != bal) {
            out.writes.users.emplace_back(name, bal);
            out.writes.users_before.push_back(it == parent.users.end() ? std::nullopt
                                                                       : std::optional{it->second});
        }
    }

    for (size_t i = 0; i < out.receipts.size(); ++i)
        out.receipt_hashes.push_back(exec::receipt_hash(block.tx_hashes[i], out.receipts[i]));
    out.txs_root = block::merkle_root(block.tx_hashes);
    out.receipts_root = block::merkle_root(out.receipt_hashes);
    // The commitment by full recomputation, not by the block's changes: the parent's lattice
    // with the whole parent state taken out and the whole final state put in.
    out.lattice =
        parent_lattice - state::lattice_of(entries_of(parent)) + state::lattice_of(entries_of(s));
    out.state_root = out.lattice.root();
    out.final_state = std::move(s);
    return out;
}

inline Expected<Result, exec::ExecError> execute(const block::Block& block,
                                                 const state::MemoryState& parent,
                                                 const state::Lattice& parent_lattice,
                                                 const exec::ChainConfig& config) {
    return execute(block, copy_of(parent), parent_lattice, config);
}

}  // namespace barrel::test::oracle

namespace barrel::test {

/// An unsigned block built directly for execution (no wire bytes, no signatures): header set,
/// senders chosen, tx_hashes = keccak256(salt ‖ index). Calldata lives in `storage`, which the
/// transactions view; a deque never moves its elements, and moving the builder keeps them too.
struct BlockBuilder {
    std::unique_ptr<std::deque<Bytes>> storage = std::make_unique<std::deque<Bytes>>();
    block::Block block;
    uint64_t salt{0};

    explicit BlockBuilder(const block::Header& header, uint64_t hash_salt = 0) : salt{hash_salt} {
        block.header = header;
    }

    /// Keeps `bytes` alive as long as the builder and returns a view of them.
    BytesView keep(Bytes bytes) {
        storage->push_back(std::move(bytes));
        return storage->back();
    }

    tx::Transaction& add(tx::Transaction t, const Address& sender) {
        const uint64_t i = block.txs.size();
        uint8_t seed[16];
        for (int k = 0; k < 8; ++k) {
            seed[k] = static_cast<uint8_t>(salt >> (56 - 8 * k));
            seed[8 + k] = static_cast<uint8_t>(i >> (56 - 8 * k));
        }
        block.tx_hashes.push_back(keccak256(BytesView{seed, sizeof seed}));
        block.senders.push_back(sender);
        block.txs.push_back(std::move(t));
        return block.txs.back();
    }
};

/// A plain transaction from the arguments that matter to execution (legacy, gas price `price`).
inline tx::Transaction make_tx(uint64_t nonce, std::optional<Address> to, const u256& value,
                               BytesView data = {}, uint64_t gas_limit = 0, const u256& price = 1) {
    tx::Transaction t;
    t.type = tx::TxType::legacy;
    t.chain_id = 1;
    t.nonce = nonce;
    t.max_fee_per_gas = t.max_priority_fee_per_gas = price;
    t.to = to;
    t.value = value;
    t.data = data;
    t.gas_limit = gas_limit != 0 ? gas_limit : tx::intrinsic_gas(t);
    return t;
}

/// An address derived from (domain, index) the way real ones are: keccak-spread bytes.
inline Address derived_address(uint64_t index, uint64_t domain = 0) {
    uint8_t seed[16];
    for (int k = 0; k < 8; ++k) {
        seed[k] = static_cast<uint8_t>(domain >> (56 - 8 * k));
        seed[8 + k] = static_cast<uint8_t>(index >> (56 - 8 * k));
    }
    const Hash h = keccak256(BytesView{seed, sizeof seed});
    return Address::from_view(BytesView{h.data() + 12, 20});
}

}  // namespace barrel::test
