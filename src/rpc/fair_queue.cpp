#include "rpc/fair_queue.hpp"

#include <algorithm>
#include <exception>

namespace barrel::rpc {

FairQueue::FairQueue(unsigned workers, bool express) {
    for (unsigned i = 0; i < std::max(1u, workers); ++i)
        m_workers.emplace_back([this] { work_loop(/*express=*/false); });
    if (express) m_workers.emplace_back([this] { work_loop(/*express=*/true); });
}

FairQueue::~FairQueue() { stop(); }

void FairQueue::submit(std::shared_ptr<Flow> flow, std::unique_ptr<SteppedWork> work, Done done) {
    {
        std::lock_guard lock{m_mutex};
        if (m_stopping) return;
        flow->used = std::max(flow->used, m_now);
        const Key key{flow->used, m_arrivals++};
        m_tasks.emplace(key, Task{std::move(flow), std::move(work), std::move(done)});
    }
    // All: the one woken might be the express worker, which may not take this task.
    m_ready.notify_all();
}

void FairQueue::stop() {
    std::multimap<Key, Task> dropped;
    {
        std::lock_guard lock{m_mutex};
        if (m_stopping) return;
        m_stopping = true;
        dropped.swap(m_tasks);
    }
    m_ready.notify_all();
    for (auto& worker : m_workers) worker.join();
    m_workers.clear();
    // Destroyed here, outside the lock: a task may hold the last reference to a connection.
    dropped.clear();
}

std::multimap<FairQueue::Key, FairQueue::Task>::iterator FairQueue::next_task(bool express) {
    if (!express) return m_tasks.begin();
    return std::find_if(m_tasks.begin(), m_tasks.end(),
                        [](const auto& t) { return t.second.flow->recent_step < kLightStepNs; });
}

void FairQueue::work_loop(bool express) {
    std::unique_lock lock{m_mutex};
    for (;;) {
        auto next = m_tasks.end();
        m_ready.wait(lock, [&] {
            if (m_stopping) return true;
            next = next_task(express);
            return next != m_tasks.end();
        });
        if (m_stopping) return;
        auto node = m_tasks.extract(next);
        const uint64_t started_at = node.key().first;
        // The express worker takes tasks out of order: the virtual time follows the others.
        if (!express) m_now = std::max(m_now, started_at);
        Task task = std::move(node.mapped());
        lock.unlock();

        const auto start = std::chrono::steady_clock::now();
        bool more = false;
        try {
            more = task.work->step();
            if (!more) task.done(true);
        } catch (...) {
            more = false;
            task.done(false);
        }
        const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::steady_clock::now() - start);
        // Released outside the lock: its destructor may free a large response, or the last
        // reference to a connection.
        const std::shared_ptr<Flow> flow = task.flow;
        if (!more) task = Task{};

        lock.lock();
        const auto took_ns = static_cast<uint64_t>(took.count());
        flow->recent_step = std::max(took_ns, flow->recent_step / 2);
        // A light task may be waiting that only the express worker may take.
        if (!more || !m_tasks.empty()) m_ready.notify_all();
        if (!more) continue;
        task.flow->used = started_at + took_ns;
        if (m_stopping) {
            lock.unlock();
            task = Task{};
            lock.lock();
            continue;
        }
        const Key key{task.flow->used, m_arrivals++};
        m_tasks.emplace(key, std::move(task));
        // A task the express worker has found heavy is one it will not take again: another
        // worker must, and may be asleep.
        if (express) m_ready.notify_all();
    }
}

}  // namespace barrel::rpc
