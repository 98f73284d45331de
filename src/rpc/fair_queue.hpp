#pragma once
// The work of the RPC server, off its I/O threads: a few workers run the requests of every
// connection a step at a time (a call of a batch, or a run of its sends), always taking the
// step of the connection that has used the least time so far. A client issuing cheap calls is
// then served next even while hundreds of heavy batches wait, and a heavy batch only ever holds
// a worker for one of its calls (start-time fair queuing over wall time, as a network link
// shares its bandwidth among flows).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace barrel::rpc {

/// A unit of work run a step at a time. step() returns false once nothing is left to do; it
/// may throw (the queue then calls fail()).
class SteppedWork {
public:
    virtual ~SteppedWork() = default;
    virtual bool step() = 0;
};

class FairQueue {
public:
    /// The time one connection's work has taken, in nanoseconds: its place in the queue. One
    /// per connection, shared by its requests (at most one at a time).
    struct Flow {
        uint64_t used{0};
        /// The length of its recent steps (ns): the longest, halved at each later step, so a
        /// connection that ran a long step is heavy for its next few.
        uint64_t recent_step{0};
    };
    /// A connection whose recent steps are shorter than this is light: the express worker
    /// takes its steps.
    static constexpr uint64_t kLightStepNs = 2'000'000;
    /// Called on the worker once the work is done (finished true) or has thrown (false, with
    /// the exception current: the callback may rethrow it to tell what it was). Must not throw.
    using Done = std::function<void(bool finished)>;

    /// `workers` take any step; with `express`, one more takes only light connections' steps.
    explicit FairQueue(unsigned workers, bool express = true);
    ~FairQueue();  ///< stop()
    FairQueue(const FairQueue&) = delete;
    FairQueue& operator=(const FairQueue&) = delete;

    /// Queues `work` for `flow`. A flow that has been quiet starts at the queue's current
    /// virtual time, so that its past idleness is no credit and its past work no debt.
    void submit(std::shared_ptr<Flow> flow, std::unique_ptr<SteppedWork> work, Done done);
    /// Stops the workers after their current step and drops what is queued (without calling
    /// its callbacks). Idempotent.
    void stop();

private:
    struct Task {
        std::shared_ptr<Flow> flow;
        std::unique_ptr<SteppedWork> work;
        Done done;
    };
    /// (virtual start time, arrival): the least first; arrival breaks ties in FIFO order.
    using Key = std::pair<uint64_t, uint64_t>;

    void work_loop(bool express);
    /// The next task a worker may take, or m_tasks.end().
    std::multimap<std::pair<uint64_t, uint64_t>, Task>::iterator next_task(bool express);

    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::multimap<Key, Task> m_tasks;
    uint64_t m_arrivals{0};
    /// The virtual start time of the last task taken: where a quiet flow resumes.
    uint64_t m_now{0};
    bool m_stopping{false};
    std::vector<std::thread> m_workers;
};

}  // namespace barrel::rpc
