#pragma once
// Test-only workload presets: the generator's workload or an exception carrying its message, so
// that a test states its options in one designated-initializer expression,
//     generate_or_throw({.seed = 19, .blocks = 3, .txs = 30, .accounts = 20, .mix =
//     gen::Mix::mixed})
// instead of filling a gen::Options field by field and handling the error itself. Tests that
// check the generator's own errors call gen::generate directly.

#include <barrel/gen/workload.hpp>

#include <stdexcept>
#include <utility>

namespace barrel::test {

inline gen::Workload generate_or_throw(const gen::Options& options) {
    auto w = gen::generate(options);
    if (!w) throw std::runtime_error(w.error());
    return std::move(w).value();
}

}  // namespace barrel::test
