#include <barrel/core/keyed_hash.hpp>
#include <barrel/exec/dag.hpp>

#include <algorithm>
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
    std::pair<uint32_t, bool> find_or_insert(const ConflictKey& key, const std::vector<ConflictKey>& slots,
                                             uint32_t next) {
        const uint64_t h = keyed_hash(key.bytes) ^ (key.kind == KeyKind::user ? 0x9e3779b97f4a7c15ull : 0);
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
            if (std::find(dag.preds.begin() + static_cast<std::ptrdiff_t>(row), dag.preds.end(), p) == dag.preds.end())
                dag.preds.push_back(p);
        };
        const TxKeys& t = txs[i];
        for (uint8_t k = 0; k < t.count; ++k) {
            const auto [slot, inserted] =
                slot_of.find_or_insert(t.keys[k], dag.slots, static_cast<uint32_t>(dag.slots.size()));
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
            for (uint32_t j = last_barrier == kNone ? 0 : last_barrier + 1; j < i; ++j) dag.preds.push_back(j);
            if (last_barrier != kNone) dag.preds.push_back(last_barrier);
            last_barrier = i;
        } else if (last_barrier != kNone) {
            add_pred(last_barrier);
        }
        uint32_t level = 0;
        for (size_t p = row; p < dag.preds.size(); ++p) level = std::max(level, dag.level[dag.preds[p]] + 1);
        dag.level[i] = level;
    }
    dag.pred_begin.push_back(static_cast<uint32_t>(dag.preds.size()));

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
    return dag;
}

std::vector<uint32_t> slots_in_key_order(const Dag& dag) {
    // Records of the keys' first eight bytes (big-endian, so integer order is byte order; a
    // shorter name is padded with zeros, which sorts it first as bytewise order does): comparing
    // them needs no memcmp, and equal prefixes fall back to the whole key.
    struct Entry {
        uint64_t prefix;
        uint32_t slot;
        KeyKind kind;
    };
    static_assert(KeyKind::account < KeyKind::user, "write-set order: accounts first");
    const size_t n = dag.slots.size();
    std::vector<Entry> entries(n);
    for (size_t s = 0; s < n; ++s) {
        const ConflictKey& key = dag.slots[s];
        uint8_t head[8] = {};
        std::memcpy(head, key.bytes.data(), std::min<size_t>(8, key.bytes.size()));
        uint64_t prefix = 0;
        for (uint8_t b : head) prefix = (prefix << 8) | b;
        entries[s] = Entry{prefix, static_cast<uint32_t>(s), key.kind};
    }
    const auto less = [&dag](const Entry& a, const Entry& b) {
        if (a.kind != b.kind) return a.kind < b.kind;
        if (a.prefix != b.prefix) return a.prefix < b.prefix;
        return dag.slots[a.slot].bytes < dag.slots[b.slot].bytes;
    };

    // Most keys are addresses, spread evenly, so a counting pass on the kind and the top bits of
    // the prefix leaves about two keys per bucket, and only the buckets need a comparison sort.
    // One std::sort of the whole set (its branches mispredicted half the time on random keys) was
    // ~0.3 ms of a 2,500-transfer block, on the serial path of planning (docs/benchmarks.md,
    // "Execute"). Keys sharing their top bits (user names with a common start, recipients chosen
    // to) only make their bucket larger: it is still sorted by comparison, never quadratic.
    unsigned bits = 1;
    while (bits < 16 && (size_t{1} << bits) < n / 2) ++bits;
    const size_t per_kind = size_t{1} << bits;
    const auto bucket_of = [&](const Entry& e) {
        return (e.kind == KeyKind::account ? 0 : per_kind) + static_cast<size_t>(e.prefix >> (64 - bits));
    };
    std::vector<uint32_t> begin(2 * per_kind + 1, 0);
    for (const Entry& e : entries) ++begin[bucket_of(e) + 1];
    for (size_t b = 0; b < 2 * per_kind; ++b) begin[b + 1] += begin[b];
    std::vector<Entry> sorted(n);
    {
        std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
        for (const Entry& e : entries) sorted[fill[bucket_of(e)]++] = e;
    }
    for (size_t b = 0; b < 2 * per_kind; ++b)
        if (begin[b + 1] - begin[b] > 1) std::sort(sorted.begin() + begin[b], sorted.begin() + begin[b + 1], less);

    std::vector<uint32_t> order(n);
    for (size_t k = 0; k < n; ++k) order[k] = sorted[k].slot;
    return order;
}

}  // namespace barrel::exec
