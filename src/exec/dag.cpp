#include <barrel/exec/dag.hpp>

#include <algorithm>
#include <unordered_map>

namespace barrel::exec {

namespace {
struct KeyHasher {
    size_t operator()(const ConflictKey& k) const noexcept {
        // Every byte, for accounts too: recipients are chosen freely, and a hash of a fixed
        // prefix would put all of 0x0000000000000000…01, …02, … into one bucket (quadratic).
        return std::hash<std::string_view>{}(k.bytes) ^ (k.kind == KeyKind::user ? 0x9e3779b97f4a7c15ull : 0);
    }
};

constexpr uint32_t kNone = UINT32_MAX;
}  // namespace

Dag build_dag(std::span<const TxKeys> txs) {
    const auto n = static_cast<uint32_t>(txs.size());
    Dag dag;
    dag.pred_begin.reserve(n + 1);
    dag.preds.reserve(size_t{n} * 2);
    dag.key_slot.assign(size_t{n} * 3, kNone);
    dag.level.assign(n, 0);

    std::unordered_map<ConflictKey, uint32_t, KeyHasher> slot_of;
    slot_of.reserve(size_t{n} * 3);
    std::vector<uint32_t> last_toucher;  // by slot
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
            const auto [it, inserted] = slot_of.try_emplace(t.keys[k], static_cast<uint32_t>(dag.slots.size()));
            if (inserted) {
                dag.slots.push_back(t.keys[k]);
                last_toucher.push_back(kNone);
            }
            const uint32_t slot = it->second;
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

}  // namespace barrel::exec
