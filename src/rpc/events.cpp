#include "rpc/events.hpp"

#include <algorithm>
#include <utility>

namespace barrel::rpc {

Events::Subscription& Events::Subscription::operator=(Subscription&& other) noexcept {
    if (this != &other) {
        reset();
        m_events = std::exchange(other.m_events, nullptr);
        m_id = std::exchange(other.m_id, 0);
    }
    return *this;
}

void Events::Subscription::reset() {
    if (m_events) std::exchange(m_events, nullptr)->remove(m_id);
}

Events::Subscription Events::listen(Listener listener) {
    std::lock_guard lock{m_mutex};
    const uint64_t id = m_next_id++;
    m_entries.push_back({id, std::move(listener)});
    return Subscription{this, id};
}

void Events::remove(uint64_t id) {
    std::lock_guard lock{m_mutex};
    std::erase_if(m_entries, [id](const Entry& e) { return e.id == id; });
}

void Events::publish_block(uint64_t number, const Hash& hash) {
    std::lock_guard lock{m_mutex};
    for (const Entry& e : m_entries)
        if (e.listener.on_block) e.listener.on_block(number, hash);
}

void Events::publish_pending(std::span<const Hash> hashes) {
    if (hashes.empty()) return;
    std::lock_guard lock{m_mutex};
    for (const Entry& e : m_entries)
        if (e.listener.on_pending) e.listener.on_pending(hashes);
}

size_t Events::listeners() const {
    std::lock_guard lock{m_mutex};
    return m_entries.size();
}

}  // namespace barrel::rpc
