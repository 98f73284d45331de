#include "exec/dag.hpp"

#include "core/keyed_hash.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

namespace barrel::exec {

namespace {
constexpr uint32_t kNone = UINT32_MAX;

/// Numbers the distinct keys of a block: an open-addressing table (linear probing, at most half
/// full) of slot numbers with a hash tag beside each, so a lookup usually costs one memory access
/// and no key comparison, where std::unordered_map allocates a node per key and chases pointers
/// (it was a third of the DAG build). The hash covers every byte under a per-process secret:
/// recipients and user names are chosen freely, and a hash of a fixed prefix, or one without a
/// secret, would let a block put all its keys on one probe run (quadratic).
class SlotTable {
public:
    explicit SlotTable(size_t max_keys) {
        size_t capacity = 16;
        while (capacity < max_keys * 2) capacity <<= 1;
        m_cells.assign(capacity, Cell{kNone, 0});
        m_mask = capacity - 1;
    }

    /// The slot of `key` among `slots`; a new key gets slot `next` (and `inserted`).
    std::pair<uint32_t, bool> find_or_insert(const ConflictKey& key,
                                             const std::vector<ConflictKey>& slots, uint32_t next) {
        const uint64_t h =
            keyed_hash(key.bytes) ^ (key.kind == KeyKind::user ? 0x9e3779b97f4a7c15ull : 0);
        const auto tag = static_cast<uint32_t>(h >> 32);
        for (size_t i = h & m_mask;; i = (i + 1) & m_mask) {
            Cell& c = m_cells[i];
            if (c.slot == kNone) {
                c = Cell{next, tag};
                return {next, true};
            }
            if (c.tag == tag && slots[c.slot] == key) return {c.slot, false};
        }
    }

private:
    struct Cell {
        uint32_t slot;
        uint32_t tag;
    };
    std::vector<Cell> m_cells;
    size_t m_mask{0};
};
/// The successor rows (a counting sort of the predecessor rows' edges) and the statistics of a
/// DAG whose predecessor rows and levels are built.
void add_successors_and_stats(Dag& dag) {
    const auto n = static_cast<uint32_t>(dag.level.size());
    // Successor rows by counting sort of the edges.
    dag.succ_begin.assign(size_t{n} + 1, 0);
    for (uint32_t p : dag.preds) ++dag.succ_begin[p + 1];
    for (uint32_t i = 0; i < n; ++i) dag.succ_begin[i + 1] += dag.succ_begin[i];
    dag.succs.resize(dag.preds.size());
    std::vector<uint32_t> fill(dag.succ_begin.begin(), dag.succ_begin.end() - 1);
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t p : dag.preds_of(i)) dag.succs[fill[p]++] = i;

    dag.stats.transactions = n;
    dag.stats.edges = dag.preds.size();
    if (n > 0) {
        const uint32_t levels = *std::max_element(dag.level.begin(), dag.level.end()) + 1;
        std::vector<size_t> width(levels, 0);
        for (uint32_t l : dag.level) ++width[l];
        dag.stats.levels = levels;
        dag.stats.max_width = *std::max_element(width.begin(), width.end());
    }
}

/// A key's first sixteen bytes as two big-endian words (integer order is byte order; a shorter
/// key is padded with zeros, which sorts it first as bytewise order does), its slot and kind.
struct KeyEntry {
    uint64_t hi;
    uint64_t lo;
    uint32_t slot;
    KeyKind kind;
};
static_assert(KeyKind::account < KeyKind::user, "write-set order: accounts first");

/// The big-endian word of `bytes` at `from`, zero-padded past the key's end.
uint64_t word_at(std::string_view bytes, size_t from) noexcept {
    const auto* at = reinterpret_cast<const uint8_t*>(bytes.data()) + from;
    if (bytes.size() >= from + 8) return load_be_u64(at);
    uint8_t word[8] = {};
    if (bytes.size() > from) std::memcpy(word, at, bytes.size() - from);
    return load_be_u64(word);
}

/// The records of the DAG's distinct keys, by slot.
std::vector<KeyEntry> key_entries(const Dag& dag) {
    std::vector<KeyEntry> entries(dag.slots.size());
    for (size_t s = 0; s < entries.size(); ++s) {
        const ConflictKey& key = dag.slots[s];
        entries[s] = KeyEntry{word_at(key.bytes, 0), word_at(key.bytes, 8),
                              static_cast<uint32_t>(s), key.kind};
    }
    return entries;
}

/// Where one kind's keys start to differ.
struct Spread {
    bool low_word{false};  ///< every key of the kind has the same first word
    unsigned shared{0};    ///< leading bits that every key of the kind has in common
};

/// The spread of the accounts' keys and of the users'.
std::array<Spread, 2> spreads(const std::vector<KeyEntry>& entries) {
    std::array<Spread, 2> spread{};
    bool seen[2] = {false, false};
    uint64_t first_hi[2] = {}, first_lo[2] = {}, diff_hi[2] = {}, diff_lo[2] = {};
    for (const KeyEntry& e : entries) {
        const size_t k = e.kind == KeyKind::account ? 0 : 1;
        if (!seen[k]) {
            seen[k] = true;
            first_hi[k] = e.hi;
            first_lo[k] = e.lo;
        }
        diff_hi[k] |= e.hi ^ first_hi[k];
        diff_lo[k] |= e.lo ^ first_lo[k];
    }
    for (size_t k = 0; k < 2; ++k) {
        spread[k].low_word = diff_hi[k] == 0;
        const uint64_t diff = spread[k].low_word ? diff_lo[k] : diff_hi[k];
        spread[k].shared = diff == 0 ? 0 : static_cast<unsigned>(std::countl_zero(diff));
    }
    return spread;
}

}  // namespace

Dag build_dag(std::span<const TxKeys> txs) {
    const auto n = static_cast<uint32_t>(txs.size());
    Dag dag;
    dag.pred_begin.reserve(n + 1);
    dag.preds.reserve(size_t{n} * 2);
    dag.key_slot.assign(size_t{n} * 3, kNone);
    dag.level.assign(n, 0);

    size_t key_count = 0;
    for (const TxKeys& t : txs) key_count += t.count;
    SlotTable slot_of{key_count};
    dag.slots.reserve(key_count);
    std::vector<uint32_t> last_toucher;  // by slot
    last_toucher.reserve(key_count);
    uint32_t last_barrier = kNone;

    for (uint32_t i = 0; i < n; ++i) {
        dag.pred_begin.push_back(static_cast<uint32_t>(dag.preds.size()));
        const size_t row = dag.preds.size();
        auto add_pred = [&](uint32_t p) {
            if (std::find(dag.preds.begin() + static_cast<std::ptrdiff_t>(row), dag.preds.end(),
                          p) == dag.preds.end())
                dag.preds.push_back(p);
        };
        const TxKeys& t = txs[i];
        for (uint8_t k = 0; k < t.count; ++k) {
            const auto [slot, inserted] = slot_of.find_or_insert(
                t.keys[k], dag.slots, static_cast<uint32_t>(dag.slots.size()));
            if (inserted) {
                dag.slots.push_back(t.keys[k]);
                last_toucher.push_back(kNone);
            }
            dag.key_slot[size_t{i} * 3 + k] = slot;
            // Touches before the last barrier are covered by the edge to the barrier.
            const uint32_t prev = last_toucher[slot];
            if (prev != kNone && (last_barrier == kNone || prev > last_barrier)) add_pred(prev);
            last_toucher[slot] = i;
        }
        if (t.barrier) {
            ++dag.stats.barriers;
            // Every key edge above lies in the range below: drop them and add the range without
            // the duplicate search, which would make a barrier quadratic in what precedes it.
            dag.preds.resize(row);
            for (uint32_t j = last_barrier == kNone ? 0 : last_barrier + 1; j < i; ++j)
                dag.preds.push_back(j);
            if (last_barrier != kNone) dag.preds.push_back(last_barrier);
            last_barrier = i;
        } else if (last_barrier != kNone) {
            add_pred(last_barrier);
        }
        uint32_t level = 0;
        for (size_t p = row; p < dag.preds.size(); ++p)
            level = std::max(level, dag.level[dag.preds[p]] + 1);
        dag.level[i] = level;
    }
    dag.pred_begin.push_back(static_cast<uint32_t>(dag.preds.size()));

    add_successors_and_stats(dag);
    return dag;
}

std::vector<uint32_t> slots_in_key_order(const Dag& dag) {
    // Records of the keys' first sixteen bytes (key_entries): comparing them reads no key bytes,
    // which after a commit are out of the CPU caches, and resolves every address and every name
    // of up to 16 bytes; only a tie reads the whole keys.
    const size_t n = dag.slots.size();
    const std::vector<KeyEntry> entries = key_entries(dag);
    const auto less = [&dag](const KeyEntry& a, const KeyEntry& b) {
        if (a.kind != b.kind) return a.kind < b.kind;
        if (a.hi != b.hi) return a.hi < b.hi;
        if (a.lo != b.lo) return a.lo < b.lo;
        return dag.slots[a.slot].bytes < dag.slots[b.slot].bytes;
    };

    // A counting pass spreads the keys over buckets in key order (per kind, the smallest power of
    // two >= n/2, at least 2 and at most 65,536), and only the buckets need a comparison sort: one
    // std::sort of the whole set (its branches mispredicted half the time on random keys) was a
    // measurable part of a block's execution (docs/benchmarks.md, "Execute: key order"). A
    // bucket is the kind and the top bits of the first word in which that kind's keys differ,
    // after the bits they all share: addresses spread from the first bit, names like "user000123"
    // by the digits inside their first eight bytes (two here: about a hundred buckets). Keys that
    // still share a bucket (names alike in their first bytes, recipients chosen to) only make it
    // larger: it is sorted by comparison, never quadratic.
    unsigned bits = 1;
    while (bits < 16 && (size_t{1} << bits) < n / 2) ++bits;
    const std::array<Spread, 2> spread = spreads(entries);
    const size_t per_kind = size_t{1} << bits;
    const auto bucket_of = [&](const KeyEntry& e) {
        const size_t k = e.kind == KeyKind::account ? 0 : 1;
        const uint64_t word = spread[k].low_word ? e.lo : e.hi;
        return k * per_kind + static_cast<size_t>((word << spread[k].shared) >> (64 - bits));
    };
    std::vector<uint32_t> begin(2 * per_kind + 1, 0);
    for (const KeyEntry& e : entries) ++begin[bucket_of(e) + 1];
    for (size_t b = 0; b < 2 * per_kind; ++b) begin[b + 1] += begin[b];
    std::vector<KeyEntry> sorted(n);
    {
        std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
        for (const KeyEntry& e : entries) sorted[fill[bucket_of(e)]++] = e;
    }
    for (size_t b = 0; b < 2 * per_kind; ++b)
        if (begin[b + 1] - begin[b] > 1)
            std::sort(sorted.begin() + begin[b], sorted.begin() + begin[b + 1], less);

    std::vector<uint32_t> order(n);
    for (size_t k = 0; k < n; ++k) order[k] = sorted[k].slot;
    return order;
}

}  // namespace barrel::exec
