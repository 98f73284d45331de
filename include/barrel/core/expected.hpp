#pragma once
/// @file
/// A minimal expected-type: the stages report errors as values, never as exceptions
/// (C++20 has no std::expected). The error type is usually a [[nodiscard]] enum.

#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

namespace barrel {

template <class E>
struct Unexpected {
    E error;
};

template <class E>
[[nodiscard]] constexpr Unexpected<std::decay_t<E>> unexpected(E&& e) {
    return {std::forward<E>(e)};
}

/// Either a value of T or an error of E.
template <class T, class E>
class [[nodiscard]] Expected {
public:
    using value_type = T;
    using error_type = E;

    constexpr Expected() requires std::is_default_constructible_v<T>
        : m_storage{std::in_place_index<0>} {}
    constexpr Expected(const T& v) : m_storage{std::in_place_index<0>, v} {}
    constexpr Expected(T&& v) : m_storage{std::in_place_index<0>, std::move(v)} {}
    template <class G>
    constexpr Expected(Unexpected<G> u)
        : m_storage{std::in_place_index<1>, E(std::move(u.error))} {}

    [[nodiscard]] constexpr bool has_value() const noexcept { return m_storage.index() == 0; }
    constexpr explicit operator bool() const noexcept { return has_value(); }

    constexpr T& value() & noexcept {
        assert(has_value());
        return *std::get_if<0>(&m_storage);
    }
    constexpr const T& value() const& noexcept {
        assert(has_value());
        return *std::get_if<0>(&m_storage);
    }
    constexpr T&& value() && noexcept {
        assert(has_value());
        return std::move(*std::get_if<0>(&m_storage));
    }
    constexpr const E& error() const noexcept {
        assert(!has_value());
        return *std::get_if<1>(&m_storage);
    }

    constexpr T& operator*() & noexcept { return value(); }
    constexpr const T& operator*() const& noexcept { return value(); }
    constexpr T&& operator*() && noexcept { return std::move(value()); }
    constexpr T* operator->() noexcept { return &value(); }
    constexpr const T* operator->() const noexcept { return &value(); }

private:
    std::variant<T, E> m_storage;
};

/// Success or an error of E.
template <class E>
class [[nodiscard]] Expected<void, E> {
public:
    using value_type = void;
    using error_type = E;

    constexpr Expected() noexcept = default;
    template <class G>
    constexpr Expected(Unexpected<G> u) : m_error{E(std::move(u.error))}, m_ok{false} {}

    [[nodiscard]] constexpr bool has_value() const noexcept { return m_ok; }
    constexpr explicit operator bool() const noexcept { return m_ok; }
    constexpr const E& error() const noexcept {
        assert(!m_ok);
        return m_error;
    }
    constexpr void value() const noexcept { assert(m_ok); }

private:
    E m_error{};
    bool m_ok{true};
};

}  // namespace barrel

/// Propagates the error of an Expected-returning expression, or yields its value.
/// Uses a GNU statement expression (GCC and Clang), as silkworm's SILK_TRY does.
#define BARREL_TRY(expr)                                             \
    __extension__({                                                  \
        auto&& barrel_try_result_ = (expr);                          \
        if (!barrel_try_result_) [[unlikely]]                        \
            return ::barrel::unexpected(barrel_try_result_.error()); \
        std::move(barrel_try_result_).value();                       \
    })
