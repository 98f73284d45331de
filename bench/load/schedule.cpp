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

std::vector<std::vector<std::string>> batch_bodies(
    const std::vector<std::vector<Batch>>& schedule,
    const std::function<std::string(uint32_t)>& call) {
    std::vector<std::vector<std::string>> out(schedule.size());
    for (size_t c = 0; c < schedule.size(); ++c)
        for (const Batch& b : schedule[c]) {
            std::string body = "[";
            for (const uint32_t i : b) {
                if (body.size() > 1) body += ',';
                body += R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + "," + call(i) + "}";
            }
            out[c].push_back(body + "]");
        }
    return out;
}

}  // namespace barrel::load
