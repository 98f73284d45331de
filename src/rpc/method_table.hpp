#pragma once
// The method table (methods.cpp): each method by name, its parameters' names, how it runs alone
// and, for a method whose calls gain by running together, how a batch's consecutive calls of it
// run at once. Methods and the batch runner (batch.cpp) read it; neither names a method.

#include "rpc/context.hpp"
#include "rpc/jsonrpc.hpp"
#include "rpc/methods.hpp"

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

namespace barrel::rpc {

/// The names of a method's parameters, in order (for its errors).
using Names = std::span<const std::string_view>;

/// A method as the table calls it: its parameters as the call gave them.
using Handler = Result (*)(Context&, const json& params, Names names);

/// Where a batch handler answers its calls, in their order: each answer is the next call's, and
/// is written at once (nothing of a batch's answers is held).
class BatchAnswers {
public:
    virtual void answer(Result result) = 0;

protected:
    ~BatchAnswers() = default;
};

/// A batch's consecutive calls of one method, run together: it answers each of them, in order.
/// `calls` are all valid calls of that method, and the node's before_call has seen each. No
/// snapshot of the store is taken for them: a method that joins a batch writes (admits), it
/// does not read.
using BatchHandler = void (*)(Node& node, std::span<const Expected<Call, BadCall>> calls,
                              Names names, BatchAnswers& answers);

struct Method {
    std::string_view name;
    Handler handler;
    std::array<std::string_view, 4> names{};
    /// How the method joins a batch: none, each call runs alone through `handler`; else a
    /// batch's consecutive calls of it run together through this (Methods::Run::step).
    BatchHandler batch{nullptr};
};

/// Every method. A method's position here is also its slot in Methods' metric counters; the
/// slot past the end, method_table().size(), is the "unknown" method's.
std::span<const Method> method_table();

/// The position of `name` in method_table(), or method_table().size() when there is none.
size_t method_index(std::string_view name);

/// One call (`method` is its method_index) run alone, in a request's context.
Result call_in(Context& c, size_t method, const Call& call);

}  // namespace barrel::rpc
