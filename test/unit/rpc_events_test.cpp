// rpc::Events: what filters and subscriptions are told, in order, and never after they leave.
#include "rpc/events.hpp"
#include <gtest/gtest.h>

#include <future>
#include <thread>
#include <vector>

namespace barrel::rpc {
namespace {

Hash first_byte_hash(uint8_t b) {
    Hash h{};
    h[0] = b;
    return h;
}

TEST(rpc_events, listeners_hear_what_is_published_after_they_listen_in_order) {
    Events events;
    events.publish_block(1, first_byte_hash(1));  // before anyone listens: heard by nobody
    std::vector<uint64_t> blocks;
    std::vector<Hash> pending;
    auto sub = events.listen({.on_block = [&](uint64_t n, const Hash&) { blocks.push_back(n); },
                              .on_pending =
                                  [&](std::span<const Hash> hs) {
                                      pending.insert(pending.end(), hs.begin(), hs.end());
                                  }});
    events.publish_block(2, first_byte_hash(2));
    const std::vector<Hash> admitted{first_byte_hash(7), first_byte_hash(8)};
    events.publish_pending(admitted);
    events.publish_block(3, first_byte_hash(3));
    EXPECT_EQ(blocks, (std::vector<uint64_t>{2, 3}));
    EXPECT_EQ(pending, admitted);
}

TEST(rpc_events, a_listener_without_a_callback_for_a_kind_is_skipped) {
    Events events;
    int heard = 0;
    auto only_blocks = events.listen({.on_block = [&](uint64_t, const Hash&) { ++heard; }});
    auto only_pending = events.listen({.on_pending = [&](std::span<const Hash>) { ++heard; }});
    events.publish_block(1, first_byte_hash(1));
    events.publish_pending(std::vector<Hash>{first_byte_hash(2)});
    events.publish_pending({});  // nothing admitted: nothing announced
    EXPECT_EQ(heard, 2);
}

TEST(rpc_events, a_reset_or_destroyed_subscription_hears_nothing_more) {
    Events events;
    int heard = 0;
    auto a = events.listen({.on_block = [&](uint64_t, const Hash&) { ++heard; }});
    {
        auto b = events.listen({.on_block = [&](uint64_t, const Hash&) { heard += 10; }});
        EXPECT_EQ(events.listeners(), 2u);
    }
    EXPECT_EQ(events.listeners(), 1u);
    Events::Subscription moved = std::move(a);
    EXPECT_FALSE(a);
    EXPECT_TRUE(moved);
    events.publish_block(1, first_byte_hash(1));
    EXPECT_EQ(heard, 1);
    moved.reset();
    EXPECT_EQ(events.listeners(), 0u);
    events.publish_block(2, first_byte_hash(2));
    EXPECT_EQ(heard, 1);
}

// A subscription removed while its listener runs on a publisher's thread: the removal waits
// for that call to end, so whatever the listener uses may be destroyed right after. Forced: the
// listener signals that it is running, then waits until the remover has started.
TEST(rpc_events, removal_waits_for_a_call_in_progress) {
    Events events;
    std::promise<void> running;
    std::promise<void> release;
    auto released = release.get_future().share();
    bool call_ended = false;
    auto sub = std::make_unique<Events::Subscription>(
        events.listen({.on_block = [&](uint64_t, const Hash&) {
            running.set_value();
            released.wait();
            call_ended = true;
        }}));
    std::thread publisher{[&] { events.publish_block(1, first_byte_hash(1)); }};
    running.get_future().wait();
    std::thread remover{[&] {
        sub->reset();
        // Reached only once the call in progress has ended.
        EXPECT_TRUE(call_ended);
    }};
    release.set_value();
    remover.join();
    publisher.join();
    EXPECT_EQ(events.listeners(), 0u);
}

}  // namespace
}  // namespace barrel::rpc
