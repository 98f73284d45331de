#include "rpc/methods.hpp"

#include <barrel/block/block.hpp>
#include <barrel/chain/genesis.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/json/conventions.hpp>
#include <barrel/json/tx_json.hpp>

#include "rpc/context.hpp"
#include "rpc/eth_json.hpp"
#include "rpc/filters.hpp"
#include "rpc/method_table.hpp"
#include "rpc/params.hpp"
#include "rpc/raw_tx_errors.hpp"
#include "rpc/simulate.hpp"
#include "rpc/subscriber.hpp"

#include <algorithm>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

namespace barrel::rpc {

/// Each block's rewards as eth_feeHistory needs them, kept across requests: a stored block never
/// changes, so 300 calls over the same 1,024 blocks decode each block once. Bounded in bytes;
/// the oldest entry goes first.
class FeeHistoryCache {
public:
    using Tips = SortedTips;
    static size_t bytes(const Tips& t) {
        return t.tips.size() * (sizeof(u256) + sizeof(uint64_t)) + 64;
    }

    std::shared_ptr<const Tips> find(const std::string& block_hash) {
        std::lock_guard lock{m_mutex};
        const auto it = m_blocks.find(block_hash);
        return it == m_blocks.end() ? nullptr : it->second;
    }

    void insert(const std::string& block_hash, std::shared_ptr<const Tips> tips) {
        std::lock_guard lock{m_mutex};
        if (!m_blocks.emplace(block_hash, tips).second) return;
        m_bytes += bytes(*tips);
        m_order.push_back(block_hash);
        while (m_bytes > kMaxBytes && !m_order.empty()) {
            const auto it = m_blocks.find(m_order.front());
            m_bytes -= bytes(*it->second);
            m_blocks.erase(it);
            m_order.pop_front();
        }
    }

private:
    /// Room for 1,024 blocks of 2,500 distinct tips each, with change.
    static constexpr size_t kMaxBytes = 128 * 1024 * 1024;
    std::mutex m_mutex;
    std::unordered_map<std::string, std::shared_ptr<const Tips>> m_blocks;
    std::deque<std::string> m_order;
    size_t m_bytes{0};
};

namespace {

// ---- Methods ---------------------------------------------------------------------------------

// Each method is a typed function: its parameters are decoded before it runs (kMethods, at the
// end, names them). An optional block parameter left out is `latest`.

Result client_version(Context& c) { return json(c.node.client_version); }
Result net_version(Context& c) { return json(std::to_string(c.config().chain_id)); }
Result chain_id(Context& c) { return json_quantity(c.config().chain_id); }
/// false, or go-ethereum's progress object while the node catches up with its network.
Result syncing(Context& c) {
    if (!c.node.network) return json(false);
    const NetworkStatus status = c.node.network();
    if (!status.catching_up && !status.restoring) return json(false);
    const uint64_t current = c.view.head().number;
    json progress{{"startingBlock", json_quantity(status.starting_height)},
                  {"currentBlock", json_quantity(current)},
                  {"highestBlock", json_quantity(std::max(status.highest_height, current))}};
    // Restoring a snapshot (state sync): its height and chunks, beside go-ethereum's three
    // members, as go-ethereum adds its snap-sync counters (syncedAccounts, …).
    if (const auto& r = status.restoring) {
        progress["stateSyncHeight"] = json_quantity(r->height);
        progress["stateSyncChunks"] = json_quantity(r->chunks);
        progress["stateSyncChunksApplied"] = json_quantity(r->applied);
    }
    return progress;
}
Result accounts(Context&) { return json::array(); }
Result head_number(Context& c) { return json_quantity(c.view.head().number); }
/// Its RPC port is open. A lone sealer has no peers; a network node has its engine's.
Result net_listening(Context&) { return json(true); }
Result net_peer_count(Context& c) {
    return json_quantity(uint64_t{c.node.network ? c.node.network().peers : 0});
}
Result web3_sha3(Context&, Bytes data) { return json_bytes(keccak256(data)); }

Result get_balance(Context& c, Address address, std::optional<BlockRef> block) {
    if (auto head = require_head_state(c, block.value_or(BlockRef{})); !head)
        return unexpected(head.error());
    auto account = account_of(c, address);
    if (!account) return unexpected(account.error());
    return json_quantity(account->balance);
}

Result get_transaction_count(Context& c, Address address, std::optional<BlockRef> block) {
    const BlockRef ref = block.value_or(BlockRef{});
    const bool pending = ref.kind == BlockRef::Kind::pending;
    if (!pending)
        if (auto head = require_head_state(c, ref); !head) return unexpected(head.error());
    auto account = account_of(c, address);
    if (!account) return unexpected(account.error());
    if (!pending) return json_quantity(account->nonce);
    // The pool as of this request's snapshot: what left with a block the snapshot cannot see
    // still counts, so the answer never goes back within a request (DESIGN, "Node service").
    return json_quantity(c.node.pool.pending_nonce(address, account->nonce, c.view.head().number));
}

/// barrel runs no contract code, so no account has code or storage: at any block that exists,
/// code is empty and every storage word is zero (go-ethereum's answers for such an account).
Result get_code(Context& c, Address, std::optional<BlockRef> block) {
    if (auto known = require_block(c, block.value_or(BlockRef{})); !known)
        return unexpected(known.error());
    return json("0x");
}

/// A storage slot as go-ethereum's decodeStorageKey reads it: hex with or without "0x", an odd
/// digit count padded, at most 32 bytes.
struct StorageKey {
    Hash key;

    static Expected<StorageKey, std::string> read(const json& value) {
        if (!value.is_string()) return unexpected(std::string{"want a hex string"});
        const auto& text = value.get_ref<const std::string&>();
        std::string_view digits = text;
        if (digits.starts_with("0x") || digits.starts_with("0X")) digits.remove_prefix(2);
        const std::string padded = (digits.size() % 2 ? "0" : "") + std::string{digits};
        const std::string quoted = ": \"" + text + "\"";
        if (padded.size() > 64)
            return unexpected("storage key too long (want at most 32 bytes)" + quoted);
        Bytes bytes(padded.size() / 2);
        if (!decode_hex_digits(padded, bytes))
            return unexpected("invalid hex in storage key" + quoted);
        StorageKey out;
        std::copy(bytes.begin(), bytes.end(),
                  out.key.bytes.end() - static_cast<ptrdiff_t>(bytes.size()));
        return out;
    }
};

Result get_storage_at(Context& c, Address, StorageKey, std::optional<BlockRef> block) {
    if (auto known = require_block(c, block.value_or(BlockRef{})); !known)
        return unexpected(known.error());
    return json_bytes(Hash{});
}

Result transaction_by_hash(Context& c, const Hash& hash) {
    auto record = stored(c.view.transaction_record(hash));
    if (!record) return unexpected(record.error());
    if (*record) return eth_transaction(**record, c.base_fee());
    // As of the snapshot: a transaction whose block the snapshot cannot see is still pooled.
    if (const auto pooled = c.node.pool.find(hash, c.view.head().number))
        return eth_transaction(pooled->tx, pooled->hash, pooled->sender, nullptr, c.base_fee());
    return json(nullptr);
}

Result get_transaction_by_hash(Context& c, Hash hash) { return transaction_by_hash(c, hash); }

Result get_transaction_receipt(Context& c, Hash hash) {
    auto receipt = stored(c.view.receipt_record(hash));
    if (!receipt) return unexpected(receipt.error());
    if (!*receipt) return json(nullptr);
    auto tx = stored(c.view.transaction_record(hash));
    if (!tx) return unexpected(tx.error());
    if (!*tx)
        return unexpected(Error{code::internal_error, "store: a receipt without its transaction"});
    return eth_receipt(**receipt, **tx, c.base_fee());
}

/// The transaction hashes of stored block `n` and its wire size (block 0 has no transactions;
/// its size is that of its header in a block with an empty list).
struct BlockBody {
    std::vector<Hash> hashes;
    size_t size{0};
};

Expected<BlockBody, Error> block_body(Context& c, uint64_t n) {
    if (n == 0) {
        const auto h0 = chain::genesis_header(c.node.store.genesis());
        return BlockBody{{}, block::encode_block(h0, {}).size()};
    }
    auto raw = stored(c.view.raw_block(n));
    if (!raw) return unexpected(raw.error());
    if (!*raw)
        return unexpected(Error{code::internal_error,
                                "store: block " + std::to_string(n) + " has a header but no body"});
    // Stored blocks were decoded and verified at their commit: hashing each transaction's
    // bytes lists them, with no need to decode them again.
    auto hashes = block::transaction_hashes(**raw);
    if (!hashes)
        return unexpected(Error{code::internal_error, "store: block " + std::to_string(n) + ": " +
                                                          block::describe(hashes.error())});
    return BlockBody{std::move(*hashes), (*raw)->size()};
}

Result block_json(Context& c, std::optional<uint64_t> number, bool full) {
    if (!number) return json(nullptr);
    auto header = stored(c.view.header_record(*number));
    if (!header) return unexpected(header.error());
    if (!*header) return json(nullptr);
    auto body = block_body(c, *number);
    if (!body) return unexpected(body.error());
    json txs = json::array();
    for (const Hash& h : body->hashes) {
        if (!full) {
            txs.push_back(json_bytes(h));
            continue;
        }
        auto record = stored(c.view.transaction_record(h));
        if (!record) return unexpected(record.error());
        if (!*record)
            return unexpected(
                Error{code::internal_error, "store: transaction " + to_hex(h) + " of block " +
                                                std::to_string(*number) + " is missing"});
        txs.push_back(eth_transaction(**record, c.base_fee()));
    }
    return eth_block(**header, c.base_fee(), body->size, std::move(txs));
}

/// eth_getBlockBy*'s `full`: whole transactions, or their hashes (the default).
Result get_block_by_number(Context& c, BlockRef block, std::optional<bool> full) {
    auto n = block_number(c, block);
    if (!n) return unexpected(n.error());
    return block_json(c, *n, full.value_or(false));
}

Result get_block_by_hash(Context& c, Hash hash, std::optional<bool> full) {
    auto n = stored(c.view.block_number(hash));
    if (!n) return unexpected(n.error());
    return block_json(c, *n, full.value_or(false));
}

Result transaction_count_of(Context& c, std::optional<uint64_t> number) {
    if (!number) return json(nullptr);
    auto header = stored(c.view.header_record(*number));
    if (!header) return unexpected(header.error());
    if (!*header) return json(nullptr);
    return json_quantity((*header)->transaction_count);
}

Result get_block_transaction_count_by_number(Context& c, BlockRef block) {
    auto n = block_number(c, block);
    if (!n) return unexpected(n.error());
    return transaction_count_of(c, *n);
}

Result get_block_transaction_count_by_hash(Context& c, Hash hash) {
    auto n = stored(c.view.block_number(hash));
    if (!n) return unexpected(n.error());
    return transaction_count_of(c, *n);
}

Result get_transaction_by_block_number_and_index(Context& c, BlockRef block, uint64_t index) {
    auto n = block_number(c, block);
    if (!n) return unexpected(n.error());
    if (!*n) return json(nullptr);
    auto header = stored(c.view.header_record(**n));
    if (!header) return unexpected(header.error());
    if (!*header) return json(nullptr);
    auto body = block_body(c, **n);
    if (!body) return unexpected(body.error());
    if (index >= body->hashes.size()) return json(nullptr);
    return transaction_by_hash(c, body->hashes[static_cast<size_t>(index)]);
}

Result gas_price(Context& c) { return json_quantity(u256{c.base_fee() + c.node.suggested_tip}); }

Result max_priority_fee(Context& c) { return json_quantity(c.node.suggested_tip); }

/// Block `n`'s effective tips and their gas (none for block 0), from the cache when there.
Expected<std::shared_ptr<const FeeHistoryCache::Tips>, Error> block_tips(Context& c, uint64_t n,
                                                                         const Hash& hash) {
    const std::string key = to_hex(hash);
    if (c.fee_cache)
        if (auto found = c.fee_cache->find(key)) return found;
    std::vector<std::pair<u256, uint64_t>> tips;
    if (n > 0) {
        auto raw = stored(c.view.raw_block(n));
        if (!raw) return unexpected(raw.error());
        if (*raw) {
            auto block = block::decode_block(std::move(**raw));
            if (!block)  // it was decoded at its commit: a block that no longer does is damaged
                return unexpected(Error{
                    code::internal_error,
                    "store: block " + std::to_string(n) + ": " + block::describe(block.error())});
            for (const tx::Transaction& t : block->txs)
                tips.emplace_back(tx::effective_tip(t, c.base_fee()), exec::gas_used(t));
        }
    }
    auto out = std::make_shared<const FeeHistoryCache::Tips>(sorted_tips(std::move(tips)));
    if (c.fee_cache) c.fee_cache->insert(key, out);
    return out;
}

/// go-ethereum's limits on eth_feeHistory (eth/gasprice/feehistory.go): the blocks one call
/// covers (FeeHistoryMaxHeaders and FeeHistoryMaxBlocks, both 1,024 by default) and the
/// reward percentiles it asks for (maxQueryLimit).
constexpr uint64_t kFeeHistoryMaxBlocks = 1024;
constexpr size_t kFeeHistoryMaxPercentiles = 100;

/// eth_feeHistory's reward percentiles: increasing numbers from 0 to 100.
struct Percentiles {
    std::vector<double> values;

    static Expected<Percentiles, std::string> read(const json& list) {
        if (!list.is_array()) return unexpected(std::string{"want an array"});
        if (list.size() > kFeeHistoryMaxPercentiles)
            return unexpected("at most " + std::to_string(kFeeHistoryMaxPercentiles) +
                              " percentiles");
        Percentiles out;
        for (const json& v : list) {
            if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 100 ||
                (!out.values.empty() && v.get<double>() < out.values.back()))
                return unexpected(std::string{"want increasing numbers from 0 to 100"});
            out.values.push_back(v.get<double>());
        }
        return out;
    }
};

Result fee_history(Context& c, uint64_t count, BlockRef newest_block,
                   std::optional<Percentiles> rewards_at) {
    const std::vector<double> percentiles =
        rewards_at ? std::move(rewards_at->values) : std::vector<double>{};
    auto newest = block_number(c, newest_block);
    if (!newest) return unexpected(newest.error());
    if (!*newest) return server_error("header not found");
    // From the first block held at most (a pruned node's earliest; the genesis otherwise).
    const uint64_t first_held = std::min(c.view.earliest(), **newest);
    const uint64_t blocks =
        std::min<uint64_t>({count, kFeeHistoryMaxBlocks, **newest + 1 - first_held});
    const uint64_t oldest = **newest + 1 - blocks;
    json base_fees = json::array(), ratios = json::array(), rewards = json::array();
    for (uint64_t n = oldest; n <= **newest; ++n) {
        auto header = stored(c.view.header_record(n));
        if (!header) return unexpected(header.error());
        if (!*header) return server_error("header not found");
        const uint64_t used = (*header)->header.gas_used, limit = (*header)->header.gas_limit;
        base_fees.push_back(json_quantity(c.base_fee()));
        ratios.push_back(limit == 0 ? 0.0 : static_cast<double>(used) / static_cast<double>(limit));
        if (percentiles.empty()) continue;
        auto tips = block_tips(c, n, (*header)->hash);
        if (!tips) return unexpected(tips.error());
        json reward = json::array();
        for (const u256& tip : rewards_of(**tips, percentiles))
            reward.push_back(json_quantity(tip));
        rewards.push_back(std::move(reward));
    }
    base_fees.push_back(json_quantity(c.base_fee()));  // the next block's
    json out = {{"oldestBlock", json_quantity(oldest)},
                {"baseFeePerGas", std::move(base_fees)},
                {"gasUsedRatio", std::move(ratios)}};
    if (!percentiles.empty()) out["reward"] = std::move(rewards);
    return out;
}

Result txpool_status(Context& c) {
    const auto s = c.node.pool.status();
    return json{{"pending", json_quantity(uint64_t{s.pending})},
                {"queued", json_quantity(uint64_t{s.queued})}};
}

// ---- Sends -----------------------------------------------------------------------------------

/// A transaction without EIP-155 replay protection is refused over RPC unless the node allows
/// them (go-ethereum's rule and words; RPC only, so the journal still re-admits them). The pool
/// checks it as it decodes the transaction, which it does once.
pool::Unprotected unprotected_rule(const Node& node) {
    return node.allow_unprotected_txs ? pool::Unprotected::accepted : pool::Unprotected::refused;
}

/// A rejection as the call's error: an encoding that does not decode in go-ethereum's words.
Error rejection_error(BytesView raw, const pool::Rejection& rejection) {
    if (rejection.code == pool::RejectCode::malformed)
        return Error{code::server_error, raw_transaction_error(raw, rejection.message)};
    return Error{code::server_error, rejection.message};
}

/// What follows an admission of `raws`: it is counted, announced (filters, subscriptions),
/// and handed to the node (the sealer is woken: it may have a full block; a network node gives
/// them to its engine). Announced first, so that a subscriber hears of a pending transaction
/// before the head of the block that includes it.
void after_admission(Node& node, std::span<const BytesView> raws,
                     std::span<const pool::AdmitResult> admitted) {
    if (node.metrics) node.metrics->on_admitted(admitted);
    std::vector<Hash> hashes;
    std::vector<BytesView> encodings;
    for (size_t i = 0; i < admitted.size(); ++i) {
        if (!admitted[i]) continue;
        hashes.push_back(admitted[i]->hash);
        encodings.push_back(raws[i]);
    }
    if (hashes.empty()) return;
    if (node.events) node.events->publish_pending(hashes);
    if (node.on_admitted) node.on_admitted(encodings);
}

/// One send alone; a batch's consecutive sends are admitted together instead
/// (send_raw_transactions).
Result send_raw_transaction(Context& c, Bytes raw) {
    const pool::AdmitResult admitted =
        c.node.pool.admit_one(raw, pool::Origin::local, unprotected_rule(c.node));
    const BytesView view{raw};
    after_admission(c.node, {&view, 1}, {&admitted, 1});
    if (!admitted) return unexpected(rejection_error(raw, admitted.error()));
    return json_bytes(admitted->hash);
}

// ---- Logs and filters ------------------------------------------------------------------------

/// A block bound of a log range as a number (go-ethereum resolves `latest`, `safe` and
/// `finalized` to the head, `earliest` to the first block held: its history pruning cutoff).
uint64_t resolve_bound(const Context& c, const BlockRef& ref) {
    if (ref.kind == BlockRef::Kind::number) return ref.number;
    if (ref.kind == BlockRef::Kind::earliest) return c.view.earliest();
    return c.view.head().number;
}

/// go-ethereum's answer to a log query that starts below the blocks a pruned node holds
/// (eth/filters/api.go GetLogs, filter_system.go SubscribeLogs): code 4444.
Unexpected<Error> pruned_history() {
    return unexpected(Error{code::pruned_history, "pruned history unavailable"});
}

/// Whether a log range starting at block `first` needs blocks this node does not hold.
bool needs_pruned_blocks(const Context& c, uint64_t first) { return first < c.view.earliest(); }

/// Whether a log query's blocks exist, with go-ethereum's checks in its order and words
/// (eth/filters/api.go GetLogs, filter.go Logs): an unknown block hash; pending logs; a range
/// that ends before it starts or past the head.
Expected<void, Error> check_log_range(const Context& c, const LogFilter& f) {
    if (f.block_hash) {
        auto n = stored(c.view.block_number(*f.block_hash));
        if (!n) return unexpected(n.error());
        if (!*n) return server_error("unknown block");
        return {};
    }
    const BlockRef from = f.from.value_or(BlockRef{}), to = f.to.value_or(BlockRef{});
    const auto is_number = [](const BlockRef& r) { return r.kind == BlockRef::Kind::number; };
    if (is_number(from) && is_number(to) && from.number > 0 && to.number > 0 &&
        from.number > to.number)
        return invalid_params("invalid block range params");
    if (from.kind == BlockRef::Kind::pending || to.kind == BlockRef::Kind::pending)
        return invalid_params("pending logs are not supported");
    const uint64_t first = resolve_bound(c, from), last = resolve_bound(c, to);
    if (needs_pruned_blocks(c, first)) return pruned_history();
    if (first > last) return invalid_params("invalid block range params");
    if (last > c.view.head().number)
        return invalid_params("block range extends beyond current head block");
    return {};
}

/// barrel emits no logs: a valid query finds none.
Result get_logs(Context& c, LogFilter filter) {
    if (auto range = check_log_range(c, filter); !range) return unexpected(range.error());
    return json::array();
}

/// eth_newFilter takes what go-ethereum's SubscribeLogs takes: latest to latest, or from a
/// number to a later one or to latest (`earliest` is the first block held); a range from a
/// pruned block is go-ethereum's pruned-history error.
Result new_filter(Context& c, LogFilter filter) {
    using Kind = BlockRef::Kind;
    const BlockRef from = filter.from.value_or(BlockRef{}), to = filter.to.value_or(BlockRef{});
    if (from.kind == Kind::pending || to.kind == Kind::pending)
        return invalid_params("pending logs are not supported");
    const auto numbered = [](const BlockRef& r) {
        return r.kind == Kind::number || r.kind == Kind::earliest;
    };
    const bool valid = (!numbered(from) && !numbered(to)) ||
                       (numbered(from) && numbered(to) && to.number >= from.number) ||
                       (numbered(from) && !numbered(to));
    if (!valid) return invalid_params("invalid block range params");
    if (from.kind == Kind::number && needs_pruned_blocks(c, from.number)) return pruned_history();
    return json(c.filters->install(Filters::Kind::logs, std::move(filter)));
}

Result new_block_filter(Context& c) { return json(c.filters->install(Filters::Kind::blocks)); }

/// `full`: polls answer whole transactions (go-ethereum's fullTx), not hashes.
Result new_pending_transaction_filter(Context& c, std::optional<bool> full) {
    return json(c.filters->install(Filters::Kind::pending, {}, full.value_or(false)));
}

Unexpected<Error> filter_not_found() { return server_error("filter not found"); }

Result get_filter_changes(Context& c, Id id) {
    auto changes = c.filters->poll(id.text);
    if (!changes) return filter_not_found();
    json out = json::array();
    for (const Hash& h : changes->hashes) {
        if (!changes->full) {
            out.push_back(json_bytes(h));
            continue;
        }
        auto tx = transaction_by_hash(c, h);  // gone from the pool and the store: left out
        if (!tx) return unexpected(tx.error());
        if (!tx->is_null()) out.push_back(std::move(*tx));
    }
    return out;
}

Result get_filter_logs(Context& c, Id id) {
    auto criteria = c.filters->criteria(id.text);
    if (!criteria) return filter_not_found();
    return get_logs(c, std::move(*criteria));
}

Result uninstall_filter(Context& c, Id id) { return json(c.filters->uninstall(id.text)); }

// ---- The method table ------------------------------------------------------------------------

/// How a typed method's parameters are decoded: from its argument types.
template <class F>
struct Signature;
template <class... Args>
struct Signature<Result (*)(Context&, Args...)> {
    static constexpr size_t arity = sizeof...(Args);
    static auto decode(const json& params, Names names) {
        return decode_params<std::decay_t<Args>...>(params, names);
    }
    template <auto F>
    static Result invoke(Context& c, const json& params, Names names) {
        auto args = decode(params, names);
        if (!args) return unexpected(std::move(args.error()));
        return std::apply([&](auto&... a) { return F(c, std::move(a)...); }, *args);
    }
};

/// The table's entry for the typed function F, its parameters named in order.
template <auto F, class... ParamNames>
constexpr Method typed(std::string_view name, ParamNames... names) {
    using S = Signature<decltype(F)>;
    static_assert(sizeof...(ParamNames) == S::arity, "one name per parameter");
    static_assert(sizeof...(ParamNames) <= 4, "Method::names has room for 4");
    return Method{name, &S::template invoke<F>, {std::string_view{names}...}};
}

/// The same entry, whose consecutive calls in a batch run together through `batch`.
template <auto F, class... ParamNames>
constexpr Method typed_batched(BatchHandler batch, std::string_view name, ParamNames... names) {
    Method method = typed<F>(name, names...);
    method.batch = batch;
    return method;
}

/// A batch's consecutive eth_sendRawTransaction calls, admitted with one Pool::admit: their
/// senders are recovered in one parallel loop, and no call between them could have seen one
/// before another. Each call's parameter is decoded as send_raw_transaction's entry decodes it.
void send_raw_transactions(Node& node, std::span<const Expected<Call, BadCall>> calls, Names names,
                           BatchAnswers& answers) {
    std::vector<Bytes> raws;
    std::vector<size_t> raw_of(calls.size(), SIZE_MAX);
    std::vector<std::optional<Error>> refused(calls.size());  // before the pool saw them
    for (size_t i = 0; i < calls.size(); ++i) {
        auto args = Signature<decltype(&send_raw_transaction)>::decode(calls[i]->params, names);
        if (!args) {
            refused[i] = std::move(args.error());
            continue;
        }
        raw_of[i] = raws.size();
        raws.push_back(std::move(std::get<0>(*args)));
    }
    std::vector<pool::AdmitResult> admitted;
    if (!raws.empty()) {
        const std::vector<BytesView> views{raws.begin(), raws.end()};
        admitted = node.pool.admit(views, pool::Origin::local, {}, unprotected_rule(node));
        after_admission(node, views, admitted);
    }
    for (size_t i = 0; i < calls.size(); ++i) {
        if (refused[i]) {
            answers.answer(unexpected(std::move(*refused[i])));
            continue;
        }
        const auto& a = admitted[raw_of[i]];
        if (a)
            answers.answer(json_bytes(a->hash));
        else
            answers.answer(unexpected(rejection_error(raws[raw_of[i]], a.error())));
    }
}

/// eth_subscribe / eth_unsubscribe go to the connection's Subscriber; without one (HTTP),
/// go-ethereum's error.
const Error kNotificationsUnsupported{code::method_not_found, "notifications not supported"};

/// The whole params array goes to the Subscriber: the kind first, then the kind's arguments.
Result subscribe(Context& c, const json& params, Names) {
    if (!c.subscriber) return unexpected(kNotificationsUnsupported);
    if (!params.is_array()) return invalid_params("non-array args");
    auto id = c.subscriber->subscribe(params);
    if (!id) return unexpected(std::move(id.error()));
    return json(std::move(*id));
}

Result unsubscribe(Context& c, const json& params, Names names) {
    if (!c.subscriber) return unexpected(kNotificationsUnsupported);
    auto args = decode_params<Id>(params, names);
    if (!args) return unexpected(std::move(args.error()));
    return json(c.subscriber->unsubscribe(std::get<0>(*args).text));
}

/// Every method (method_table()).
const Method kMethods[] = {
    typed<client_version>("web3_clientVersion"),
    typed<net_version>("net_version"),
    typed<chain_id>("eth_chainId"),
    typed<syncing>("eth_syncing"),
    typed<accounts>("eth_accounts"),
    typed<head_number>("eth_blockNumber"),
    typed<get_balance>("eth_getBalance", "address", "block"),
    typed<get_transaction_count>("eth_getTransactionCount", "address", "block"),
    typed<gas_price>("eth_gasPrice"),
    typed<max_priority_fee>("eth_maxPriorityFeePerGas"),
    typed<fee_history>("eth_feeHistory", "blockCount", "newestBlock", "rewardPercentiles"),
    typed<estimate_gas>("eth_estimateGas", "call", "block"),
    typed<call_method>("eth_call", "call", "block"),
    typed_batched<send_raw_transaction>(send_raw_transactions, "eth_sendRawTransaction", "data"),
    typed<get_transaction_by_hash>("eth_getTransactionByHash", "hash"),
    typed<get_transaction_receipt>("eth_getTransactionReceipt", "hash"),
    typed<get_block_by_number>("eth_getBlockByNumber", "block", "full"),
    typed<get_block_by_hash>("eth_getBlockByHash", "hash", "full"),
    typed<get_block_transaction_count_by_number>("eth_getBlockTransactionCountByNumber", "block"),
    typed<get_block_transaction_count_by_hash>("eth_getBlockTransactionCountByHash", "hash"),
    typed<get_transaction_by_block_number_and_index>("eth_getTransactionByBlockNumberAndIndex",
                                                     "block", "index"),
    typed<txpool_status>("txpool_status"),
    typed<get_code>("eth_getCode", "address", "block"),
    typed<get_storage_at>("eth_getStorageAt", "address", "slot", "block"),
    typed<get_logs>("eth_getLogs", "filter"),
    typed<new_filter>("eth_newFilter", "filter"),
    typed<new_block_filter>("eth_newBlockFilter"),
    typed<new_pending_transaction_filter>("eth_newPendingTransactionFilter", "full"),
    typed<get_filter_changes>("eth_getFilterChanges", "id"),
    typed<get_filter_logs>("eth_getFilterLogs", "id"),
    typed<uninstall_filter>("eth_uninstallFilter", "id"),
    Method{"eth_subscribe", subscribe},
    Method{"eth_unsubscribe", unsubscribe, {"id"}},
    typed<net_listening>("net_listening"),
    typed<net_peer_count>("net_peerCount"),
    typed<web3_sha3>("web3_sha3", "data"),
};
constexpr size_t kUnknownSlot = std::size(kMethods);

Error method_not_found(const std::string& method) {
    return Error{code::method_not_found,
                 "the method " + method + " does not exist/is not available"};
}

}  // namespace

std::span<const Method> method_table() { return kMethods; }

size_t method_index(std::string_view name) {
    static const std::unordered_map<std::string_view, size_t> index = [] {
        std::unordered_map<std::string_view, size_t> out;
        for (size_t i = 0; i < std::size(kMethods); ++i) out.emplace(kMethods[i].name, i);
        return out;
    }();
    const auto it = index.find(name);
    return it == index.end() ? kUnknownSlot : it->second;
}

Result call_in(Context& c, size_t method, const Call& call) {
    if (method == kUnknownSlot) return unexpected(method_not_found(call.method));
    return kMethods[method].handler(c, call.params, kMethods[method].names);
}

Methods::Methods(Node& node, const Limits& limits, FilterConfig filters)
    : m_node{node},
      m_limits{limits},
      m_fee_cache{std::make_unique<FeeHistoryCache>()},
      m_filters{std::make_unique<Filters>(node.events, std::move(filters))},
      m_counters(kUnknownSlot + 1) {
    if (!node.metrics) return;
    for (size_t i = 0; i < std::size(kMethods); ++i)
        m_counters[i] = node.metrics->method(kMethods[i].name);
    m_counters[kUnknownSlot] = node.metrics->method(metrics::kUnknownMethod);
}

Methods::~Methods() = default;

Expected<json, Error> Methods::call(const Call& call, Subscriber* subscriber) {
    const size_t method = method_index(call.method);
    auto result = call_one(method, call, subscriber);
    metrics::count_call(m_counters[method], result.has_value());
    return result;
}

Expected<json, Error> Methods::call_one(size_t method, const Call& call, Subscriber* subscriber) {
    auto view = m_node.store.snapshot();
    if (!view) return store_failure(view.error());
    Context c{m_node, **view, m_fee_cache.get(), m_filters.get(), subscriber};
    return call_in(c, method, call);
}

}  // namespace barrel::rpc
