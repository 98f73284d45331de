// Slots: the parallel constructor creates every element exactly once and hands each run to its
// fill on the thread that created it, in parallel or not; a throwing fill loses nothing (every
// element created is destroyed, the first exception comes out); push_back / assign / clear /
// move behave like a vector's. Element lifetimes are counted, so a double construction or a
// missing destruction fails here, and ASan/UBSan in CI see the memory.

#include "core/slots.hpp"
#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace barrel;

namespace {

std::atomic<long> g_alive{0};

/// Counts live objects; holds a heap string so a missed destructor leaks (LeakSanitizer) and a
/// use of raw memory as an object reads garbage pointers (ASan).
struct Counted {
    std::string text;
    int value{0};
    Counted() noexcept { ++g_alive; }
    explicit Counted(int v) : text(std::to_string(v) + std::string(40, '.')), value{v} {
        ++g_alive;
    }
    Counted(const Counted& o) : text{o.text}, value{o.value} { ++g_alive; }
    Counted(Counted&& o) noexcept : text{std::move(o.text)}, value{o.value} { ++g_alive; }
    Counted& operator=(const Counted&) = default;
    Counted& operator=(Counted&&) noexcept = default;
    ~Counted() { --g_alive; }
};

class SlotsTest : public ::testing::TestWithParam<bool> {
protected:
    void SetUp() override { g_alive = 0; }
    void TearDown() override {
        EXPECT_EQ(g_alive.load(), 0) << "an element was not destroyed, or destroyed twice";
    }
};

}  // namespace

TEST_P(SlotsTest, value_initialised_elements) {
    const bool parallel = GetParam();
    {
        Slots<Counted> s(10'000, parallel);
        ASSERT_EQ(s.size(), 10'000u);
        EXPECT_EQ(g_alive.load(), 10'000);
        for (const Counted& c : s) {
            EXPECT_EQ(c.value, 0);
            EXPECT_TRUE(c.text.empty());
        }
        Slots<uint64_t> words(3'000, parallel);  // value-initialised means zero, not garbage
        for (uint64_t w : words) EXPECT_EQ(w, 0u);
    }
}

TEST_P(SlotsTest, every_run_is_filled_once_after_its_elements_exist) {
    const bool parallel = GetParam();
    constexpr size_t n = 2'501;  // not a multiple of the run
    std::vector<std::atomic<int>> fills(n);
    std::atomic<bool> saw_uninitialised{false};
    std::atomic<size_t> runs{0};
    Slots<Counted> s(n, 4, parallel, [&](size_t begin, size_t end, Counted* data) {
        ++runs;
        if (end - begin > 4 || (end != n && end - begin != 4)) saw_uninitialised = true;
        for (size_t i = begin; i < end; ++i) {
            if (data[i].value != 0 || !data[i].text.empty()) saw_uninitialised = true;
            ++fills[i];
            data[i] = Counted{static_cast<int>(i)};
        }
    });
    EXPECT_FALSE(saw_uninitialised);
    EXPECT_EQ(runs.load(), (n + 3) / 4);
    ASSERT_EQ(s.size(), n);
    for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(fills[i].load(), 1) << i;
        EXPECT_EQ(s[i].value, static_cast<int>(i));
    }
    EXPECT_EQ(g_alive.load(), static_cast<long>(n));
}

TEST_P(SlotsTest, a_throwing_fill_destroys_what_was_built_and_rethrows_the_first_exception) {
    const bool parallel = GetParam();
    std::atomic<int> thrown{0};
    try {
        Slots<Counted> s(4'000, 8, parallel, [&](size_t begin, size_t end, Counted* data) {
            for (size_t i = begin; i < end; ++i) data[i] = Counted{static_cast<int>(i)};
            if (begin % 800 == 0) {
                ++thrown;
                throw std::runtime_error("fill failed at " + std::to_string(begin));
            }
        });
        FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string{e.what()}.rfind("fill failed at ", 0), 0u);
    }
    EXPECT_GE(thrown.load(), 1);
    // TearDown: every element the loop created, filled or not, is gone.
}

INSTANTIATE_TEST_SUITE_P(core_slots, SlotsTest, ::testing::Values(false, true),
                         [](const auto& param_info) {
                             return param_info.param ? "parallel" : "serial";
                         });

TEST(core_slots, push_back_grows_and_keeps_order) {
    g_alive = 0;
    {
        Slots<Counted> s;
        EXPECT_TRUE(s.empty());
        for (int i = 0; i < 1'000; ++i) {
            const Counted c{i};
            s.push_back(c);
        }
        s.push_back(Counted{1'000});
        ASSERT_EQ(s.size(), 1'001u);
        for (int i = 0; i <= 1'000; ++i) EXPECT_EQ(s[static_cast<size_t>(i)].value, i);
        EXPECT_EQ(s.back().value, 1'000);
        EXPECT_EQ(g_alive.load(), 1'001);
        // An argument that lives in the array itself survives the growth that moves the array.
        for (int round = 0; round < 20; ++round) s.push_back(s[0]);
        EXPECT_EQ(s.back().value, 0);
        EXPECT_EQ(s.back().text, s[0].text);
    }
    EXPECT_EQ(g_alive.load(), 0);
}

TEST(core_slots, assign_clear_and_move) {
    g_alive = 0;
    {
        Slots<Counted> a(100, 4, true, [](size_t begin, size_t end, Counted* data) {
            for (size_t i = begin; i < end; ++i) data[i] = Counted{static_cast<int>(i)};
        });
        Slots<Counted> prefix;
        prefix.push_back(Counted{-1});
        prefix.assign(a.begin(), a.begin() + 10);
        ASSERT_EQ(prefix.size(), 10u);
        for (size_t i = 0; i < 10; ++i) EXPECT_EQ(prefix[i].value, static_cast<int>(i));

        Slots<Counted> moved = std::move(a);
        EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
        ASSERT_EQ(moved.size(), 100u);
        moved = std::move(prefix);
        EXPECT_EQ(moved.size(), 10u);
        EXPECT_EQ(g_alive.load(), 10);

        const std::span<const Counted> view{moved};
        EXPECT_EQ(view.size(), 10u);
        EXPECT_EQ(view[9].value, 9);

        moved.clear();
        EXPECT_TRUE(moved.empty());
        EXPECT_EQ(g_alive.load(), 0);
        moved.push_back(Counted{7});  // usable after clear
        EXPECT_EQ(moved.back().value, 7);
    }
    EXPECT_EQ(g_alive.load(), 0);
}
