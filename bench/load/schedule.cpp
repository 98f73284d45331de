#include "schedule.hpp"

namespace barrel::load {

std::vector<std::vector<Batch>> make_schedule(size_t txs, size_t senders, size_t batch,
                                              size_t connections) {
    std::vector<std::vector<Batch>> out(connections);
    for (size_t i = 0; i < txs; ++i) {
        auto& batches = out[sender_of(i, senders) % connections];
        if (batches.empty() || batches.back().size() == batch) {
            batches.emplace_back();
            batches.back().reserve(batch);
        }
        batches.back().push_back(static_cast<uint32_t>(i));
    }
    return out;
}

}  // namespace barrel::load
