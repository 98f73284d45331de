#pragma once
/// @file
/// Conflict keys and the transaction DAG of PTE.
///
/// Each transaction declares the keys it reads or writes (accounts and DagTransfer users, kinds
/// that never collide). Transaction j depends on i < j when they share a key and i is the last
/// earlier transaction that touched it; a barrier (a transaction that conflicts with everything)
/// depends on every transaction since the previous barrier and every later one depends on it.
/// Built with one hash-table lookup per key: linear in the number of keys (no ordered map, unlike
/// FISCO BCOS's O(n log n) TxDAG, their issue #1305).

#include <barrel/core/bytes.hpp>
#include <barrel/exec/execute.hpp>

#include <array>
#include <span>
#include <string_view>
#include <vector>

namespace barrel::exec {

enum class KeyKind : uint8_t { account = 1, user = 2 };

/// A key viewed in memory the block owns (an address or a user name in calldata).
struct ConflictKey {
    KeyKind kind{KeyKind::account};
    std::string_view bytes;
    friend bool operator==(const ConflictKey&, const ConflictKey&) = default;
};

/// At most three keys (sender, and recipient or up to two users), duplicates removed.
struct TxKeys {
    std::array<ConflictKey, 3> keys{};
    uint8_t count{0};
    bool barrier{false};

    void add(KeyKind kind, std::string_view bytes) noexcept {
        const ConflictKey k{kind, bytes};
        for (uint8_t i = 0; i < count; ++i)
            if (keys[i] == k) return;
        keys[count++] = k;
    }
};

struct Dag {
    /// Predecessors and successors in compressed rows: preds of i are
    /// preds[pred_begin[i] .. pred_begin[i+1]).
    std::vector<uint32_t> pred_begin;
    std::vector<uint32_t> preds;
    std::vector<uint32_t> succ_begin;
    std::vector<uint32_t> succs;
    std::vector<uint32_t> level;  ///< 0 for transactions without predecessors
    /// Slot of each key of each transaction (3 per transaction, in TxKeys order): distinct keys
    /// are numbered so execution can keep their values in a flat array instead of a map.
    std::vector<uint32_t> key_slot;
    std::vector<ConflictKey> slots;  ///< the distinct keys, by slot number
    DagStats stats;

    size_t size() const noexcept { return level.size(); }
    std::span<const uint32_t> preds_of(size_t i) const noexcept {
        return {preds.data() + pred_begin[i], preds.data() + pred_begin[i + 1]};
    }
    std::span<const uint32_t> succs_of(size_t i) const noexcept {
        return {succs.data() + succ_begin[i], succs.data() + succ_begin[i + 1]};
    }
};

Dag build_dag(std::span<const TxKeys> txs);

/// The slot numbers in write-set order (docs/formats.md): account keys by address, then user
/// keys by name, bytewise.
std::vector<uint32_t> slots_in_key_order(const Dag& dag);

}  // namespace barrel::exec
