#pragma once
/// @file
/// Slots<T>: the pre-sized output of a parallel stage, a contiguous array whose n elements are
/// value-initialised by a parallel loop.
///
/// std::vector<T>(n) initialises its elements on one thread. For a full block's transactions that
/// is a serial pass in front of decode's parallel loop and, whenever the allocator hands out memory
/// the process has not touched yet, a run of page faults in a row: a large share of the whole
/// parallel decode (docs/benchmarks.md, "Decode's serial start"). Here each page is first touched
/// by one of the threads that will fill it, so that cost is shared like the rest of the stage.
///
/// Beyond that constructor it is a small vector (push_back, assign, clear) for code that builds
/// blocks by hand: tests and benchmarks.

#include "core/parallel.hpp"

#include <atomic>
#include <cstddef>
#include <exception>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>

namespace barrel {

template <class T>
class Slots {
    // Elements are created and moved where nothing can throw, so every element of [0, size) is
    // always constructed and the destructor may destroy exactly those.
    static_assert(std::is_nothrow_default_constructible_v<T> &&
                  std::is_nothrow_move_constructible_v<T>);

public:
    using value_type = T;
    using size_type = size_t;
    using iterator = T*;
    using const_iterator = const T*;

    Slots() noexcept = default;

    /// n elements built by one loop over runs of `run` (≥ 1) consecutive indices (the last may be
    /// shorter), in parallel unless `parallel` is false: each run's elements are value-initialised
    /// and then handed to fill(begin, end, data), on the same thread, so a stage's parallel loop
    /// both creates and fills its output. If fill throws, the remaining runs only initialise
    /// their elements, and once the loop ends the array is released and the first exception
    /// rethrown.
    template <class Fill>
    Slots(size_t n, size_t run, bool parallel, Fill&& fill) : m_data{allocate(n)}, m_capacity{n} {
        std::atomic<bool> failed{false};
        std::exception_ptr failure;
        construct_runs(n, run, parallel, [&](size_t begin, size_t end) noexcept {
            if (failed.load(std::memory_order_relaxed)) return;
            try {
                fill(begin, end, m_data);
            } catch (...) {
                if (!failed.exchange(true)) failure = std::current_exception();
            }
        });
        m_size = n;
        if (failure) {
            release();
            std::rethrow_exception(failure);
        }
    }

    /// n value-initialised elements, initialised in parallel unless `parallel` is false.
    Slots(size_t n, bool parallel) : m_data{allocate(n)}, m_capacity{n} {
        // ~4 KB of elements per run, so each page is faulted in by one thread.
        construct_runs(n, sizeof(T) >= 4096 ? 1 : 4096 / sizeof(T), parallel,
                       [](size_t, size_t) noexcept {});
        m_size = n;
    }

    Slots(Slots&& other) noexcept
        : m_data{std::exchange(other.m_data, nullptr)},
          m_size{std::exchange(other.m_size, 0)},
          m_capacity{std::exchange(other.m_capacity, 0)} {}
    Slots& operator=(Slots&& other) noexcept {
        if (this != &other) {
            release();
            m_data = std::exchange(other.m_data, nullptr);
            m_size = std::exchange(other.m_size, 0);
            m_capacity = std::exchange(other.m_capacity, 0);
        }
        return *this;
    }
    Slots(const Slots&) = delete;
    Slots& operator=(const Slots&) = delete;
    ~Slots() { release(); }

    size_t size() const noexcept { return m_size; }
    bool empty() const noexcept { return m_size == 0; }
    T* data() noexcept { return m_data; }
    const T* data() const noexcept { return m_data; }
    T& operator[](size_t i) noexcept { return m_data[i]; }
    const T& operator[](size_t i) const noexcept { return m_data[i]; }
    T& back() noexcept { return m_data[m_size - 1]; }
    const T& back() const noexcept { return m_data[m_size - 1]; }
    T* begin() noexcept { return m_data; }
    T* end() noexcept { return m_data + m_size; }
    const T* begin() const noexcept { return m_data; }
    const T* end() const noexcept { return m_data + m_size; }

    void push_back(const T& value) { emplace_back(value); }
    void push_back(T&& value) { emplace_back(std::move(value)); }
    template <class... Args>
    T& emplace_back(Args&&... args) {
        if (m_size == m_capacity) {
            // Construct the new element before moving the old ones, so a throwing constructor
            // leaves this array as it was (and args may refer into it).
            const size_t capacity = m_capacity == 0 ? 4 : 2 * m_capacity;
            T* grown = allocate(capacity);
            try {
                std::construct_at(grown + m_size, std::forward<Args>(args)...);
            } catch (...) {
                std::allocator<T>{}.deallocate(grown, capacity);
                throw;
            }
            std::uninitialized_move(m_data, m_data + m_size, grown);
            const size_t size = m_size;
            release();
            m_data = grown;
            m_size = size + 1;
            m_capacity = capacity;
            return back();
        }
        std::construct_at(m_data + m_size, std::forward<Args>(args)...);
        return m_data[m_size++];
    }

    /// Replaces the contents with copies of [first, last).
    template <std::forward_iterator It>
    void assign(It first, It last) {
        Slots copy;
        copy.m_data = allocate(static_cast<size_t>(std::distance(first, last)));
        copy.m_capacity = static_cast<size_t>(std::distance(first, last));
        for (; first != last; ++first) copy.emplace_back(*first);
        *this = std::move(copy);
    }

    void clear() noexcept {
        std::destroy(m_data, m_data + m_size);
        m_size = 0;
    }

private:
    static T* allocate(size_t n) { return n == 0 ? nullptr : std::allocator<T>{}.allocate(n); }

    /// noexcept: nothing in the loop throws (value-initialisation is nothrow, `then` is noexcept),
    /// so it ends with every element constructed. If the scheduler itself failed (it allocates
    /// tasks), which elements exist would be unknown: the program stops rather than destroy
    /// memory that holds no object.
    template <class Then>
    void construct_runs(size_t n, size_t run, bool parallel, const Then& then) noexcept {
        static_assert(std::is_nothrow_invocable_v<const Then&, size_t, size_t>);
        for_each_group(n, run, parallel, [this, &then](size_t begin, size_t end) {
            std::uninitialized_value_construct(m_data + begin, m_data + end);
            then(begin, end);
        });
    }

    void release() noexcept {
        std::destroy(m_data, m_data + m_size);
        if (m_data != nullptr) std::allocator<T>{}.deallocate(m_data, m_capacity);
        m_data = nullptr;
        m_size = m_capacity = 0;
    }

    T* m_data{nullptr};
    size_t m_size{0};
    size_t m_capacity{0};
};

}  // namespace barrel
