// The workers' queue of the RPC server: a connection issuing cheap calls is served next even
// while another's long batch is in progress, the steps of one work run in order, and an
// exception from a step is its work's failure, never the worker's end.

#include "rpc/fair_queue.hpp"
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <string>
#include <thread>

namespace barrel::rpc {
namespace {

/// Work of `steps` steps, each appending `name` to a shared log; the first step of a gated
/// work waits until the gate opens.
class Logged final : public SteppedWork {
public:
    Logged(std::string name, int steps, std::string& log, std::mutex& mutex,
           std::shared_future<void> gate = {})
        : m_name{std::move(name)}, m_left{steps}, m_log{log}, m_mutex{mutex}, m_gate{gate} {}
    bool step() override {
        if (m_gate.valid()) {
            m_gate.wait();
            m_gate = {};
        }
        {
            std::lock_guard lock{m_mutex};
            m_log += m_name;
        }
        if (m_name == "!") throw std::bad_alloc{};
        return --m_left > 0;
    }

private:
    std::string m_name;
    int m_left;
    std::string& m_log;
    std::mutex& m_mutex;
    std::shared_future<void> m_gate;
};

TEST(rpc_fair_queue, a_cheap_call_is_served_next_while_a_long_batch_runs) {
    std::string log;
    std::mutex mutex;
    std::promise<void> open;
    std::promise<void> heavy_done, light_done;
    auto heavy = std::make_shared<FairQueue::Flow>();
    auto light = std::make_shared<FairQueue::Flow>();
    // The heavy batch's first step holds the only worker until the light call is queued.
    FairQueue queue{1, /*express=*/false};
    queue.submit(heavy, std::make_unique<Logged>("h", 50, log, mutex, open.get_future().share()),
                 [&](bool) { heavy_done.set_value(); });
    queue.submit(light, std::make_unique<Logged>("l", 1, log, mutex),
                 [&](bool) { light_done.set_value(); });
    open.set_value();
    heavy_done.get_future().wait();
    light_done.get_future().wait();
    // First come first served would give 50 h, then l.
    EXPECT_EQ(log, "hl" + std::string(49, 'h'));
}

TEST(rpc_fair_queue, the_express_worker_serves_a_light_call_while_every_worker_runs_a_heavy_step) {
    std::string log;
    std::mutex mutex;
    std::promise<void> open, light_done;
    auto heavy = std::make_shared<FairQueue::Flow>();
    heavy->recent_step = 10 * FairQueue::kLightStepNs;  // it ran a long step before
    FairQueue queue{1};
    queue.submit(heavy, std::make_unique<Logged>("h", 2, log, mutex, open.get_future().share()),
                 [](bool) {});
    queue.submit(std::make_shared<FairQueue::Flow>(), std::make_unique<Logged>("l", 1, log, mutex),
                 [&](bool) { light_done.set_value(); });
    // The only ordinary worker is held by the heavy step: the light call is served anyway.
    light_done.get_future().wait();
    EXPECT_EQ(log, "l");
    open.set_value();
}

/// Work whose first step says it began, then takes `first_step` (it turns its flow heavy).
class SlowFirst final : public SteppedWork {
public:
    SlowFirst(std::promise<void>& began, std::chrono::milliseconds first_step)
        : m_began{began}, m_first_step{first_step} {}
    bool step() override {
        if (m_steps++ > 0) return false;
        m_began.set_value();
        std::this_thread::sleep_for(m_first_step);
        return true;
    }

private:
    std::promise<void>& m_began;
    std::chrono::milliseconds m_first_step;
    int m_steps{0};
};

TEST(rpc_fair_queue, work_the_express_worker_finds_heavy_is_finished_by_another_worker) {
    std::string log;
    std::mutex mutex;
    std::promise<void> gate, gated_done, began, slow_done;
    auto heavy = std::make_shared<FairQueue::Flow>();
    heavy->recent_step = 10 * FairQueue::kLightStepNs;
    FairQueue queue{1};
    queue.submit(heavy, std::make_unique<Logged>("h", 1, log, mutex, gate.get_future().share()),
                 [&](bool) { gated_done.set_value(); });
    // The ordinary worker is held: the express worker takes the light work's first step...
    queue.submit(std::make_shared<FairQueue::Flow>(),
                 std::make_unique<SlowFirst>(began, std::chrono::milliseconds{50}),
                 [&](bool) { slow_done.set_value(); });
    began.get_future().wait();
    // ...and while it runs, the ordinary worker finishes and goes to sleep.
    gate.set_value();
    gated_done.get_future().wait();
    // The step took 50 ms: the work is heavy now, so its second step is the ordinary worker's.
    EXPECT_EQ(slow_done.get_future().wait_for(std::chrono::seconds{10}), std::future_status::ready);
}

TEST(rpc_fair_queue, a_step_that_throws_fails_its_work_and_the_worker_goes_on) {
    std::string log;
    std::mutex mutex;
    std::promise<bool> failed, after;
    FairQueue queue{1, /*express=*/false};
    queue.submit(std::make_shared<FairQueue::Flow>(), std::make_unique<Logged>("!", 3, log, mutex),
                 [&](bool finished) {
                     try {
                         throw;
                     } catch (const std::bad_alloc&) {
                         failed.set_value(finished);
                     }
                 });
    EXPECT_FALSE(failed.get_future().get());
    queue.submit(std::make_shared<FairQueue::Flow>(), std::make_unique<Logged>("x", 2, log, mutex),
                 [&](bool finished) { after.set_value(finished); });
    EXPECT_TRUE(after.get_future().get());
    EXPECT_EQ(log, "!xx");
}

TEST(rpc_fair_queue, stop_drops_what_is_queued) {
    std::string log;
    std::mutex mutex;
    std::promise<void> gate;
    std::atomic<int> done{0};
    FairQueue queue{1, /*express=*/false};
    queue.submit(std::make_shared<FairQueue::Flow>(),
                 std::make_unique<Logged>("a", 1, log, mutex, gate.get_future().share()),
                 [&](bool) { ++done; });
    queue.submit(std::make_shared<FairQueue::Flow>(), std::make_unique<Logged>("b", 1, log, mutex),
                 [&](bool) { ++done; });
    std::thread opener{[&] {
        std::this_thread::sleep_for(std::chrono::milliseconds{50});
        gate.set_value();
    }};
    queue.stop();
    opener.join();
    EXPECT_LE(done.load(), 1);
    EXPECT_EQ(log.find('b'), std::string::npos);
}

}  // namespace
}  // namespace barrel::rpc
