// The batch runner (go-ethereum's rpc/handler.go): a request's calls answered a step at a time,
// in order, each as if alone, except that the consecutive calls of a method the table says
// joins a batch (Method::batch) run together; a call's exception is its -32603 answer, and a
// batch's response stops growing at Limits::max_response_bytes.

#include "log/logger.hpp"
#include "rpc/context.hpp"
#include "rpc/method_table.hpp"
#include "rpc/methods.hpp"

#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace barrel::rpc {

namespace {

/// The answer to a call that threw, logged once (one line) through the log; as go-ethereum answers
/// a method handler's panic.
Error crashed(std::string_view method) noexcept {
    try {
        try {
            throw;
        } catch (const std::exception& e) {
            log::standard_error().write(log::Level::error, "rpc",
                                        std::string(method) + " failed: " + e.what());
        } catch (...) {
            log::standard_error().write(log::Level::error, "rpc",
                                        std::string(method) + " failed: unknown exception");
        }
        return Error{code::internal_error, "method handler crashed"};
    } catch (...) {
        return Error{code::internal_error, {}};
    }
}

const Error kResponseTooLarge{code::response_too_large, "response too large"};

/// The method of a call that joins a batch (its table entry has a batch handler), or none.
std::optional<size_t> batched_method(const Expected<Call, BadCall>& call) {
    if (!call) return std::nullopt;
    const size_t method = method_index(call->method);
    if (method == method_table().size() || !method_table()[method].batch) return std::nullopt;
    return method;
}

}  // namespace

Methods::Run::Run(Methods& methods, Request request, Subscriber* subscriber)
    : m_methods{methods},
      m_request{std::move(request)},
      m_writer{m_request.batch},
      m_subscriber{subscriber} {}

Methods::Run::Run(Methods& methods, const Error& error)
    : m_methods{methods}, m_writer{/*batch=*/false} {
    // No call could be read: counted as one failed call of no known method.
    metrics::count_call(methods.m_counters[method_table().size()], false);
    m_writer.error(nullptr, error);
}

Methods::Run Methods::begin(std::string_view body, Subscriber* subscriber) {
    auto request = parse_request(body, m_limits);
    if (!request) return Run{*this, request.error()};
    return Run{*this, std::move(*request), subscriber};
}

bool Methods::Run::step() {
    auto& calls = m_request.calls;
    if (m_next >= calls.size()) return false;
    const size_t first = m_next;
    if (m_request.batch && m_writer.size() > m_methods.m_limits.max_response_bytes) {
        // As go-ethereum's handleBatch: the calls past the limit are answered, not run.
        for (; m_next < calls.size(); ++m_next) {
            const auto& call = calls[m_next];
            const size_t method = call ? method_index(call->method) : method_table().size();
            metrics::count_call(m_methods.m_counters[method], false);
            if (!call)
                m_writer.error(call.error().id, kResponseTooLarge, call.error().id_text);
            else if (!call->notification)
                m_writer.error(call->id, kResponseTooLarge, call->id_text);
        }
        return false;
    }
    if (const auto method = batched_method(calls[first])) {
        size_t end = first + 1;
        while (end < calls.size() && batched_method(calls[end]) == method) ++end;
        m_next = end;
        answer_together(*method, first, end);
    } else {
        m_next = first + 1;
        answer(first);
    }
    return m_next < calls.size();
}

void Methods::Run::answer(size_t i) {
    const auto& call = m_request.calls[i];
    if (!call) {
        metrics::count_call(m_methods.m_counters[method_table().size()], false);
        m_writer.error(call.error().id, call.error().error, call.error().id_text);
        return;
    }
    const size_t method = method_index(call->method);
    Node& node = m_methods.m_node;
    Result result = json(nullptr);
    try {
        if (node.before_call) node.before_call(*call);
        if (!m_view) m_view = node.store.snapshot();
        if (!*m_view) {
            result = store_failure(m_view->error());
        } else {
            Context c{node, ***m_view, m_methods.m_fee_cache.get(), m_methods.m_filters.get(),
                      m_subscriber};
            result = call_in(c, method, *call);
        }
    } catch (...) {
        result = unexpected(crashed(call->method));
    }
    metrics::count_call(m_methods.m_counters[method], result.has_value());
    if (call->notification) return;
    try {
        if (result)
            m_writer.result(call->id, *result, call->id_text);
        else
            m_writer.error(call->id, result.error(), call->id_text);
    } catch (...) {
        // The result could not be written (out of memory): the call's error can still be.
        m_writer.error(call->id, crashed(call->method), call->id_text);
    }
}

void Methods::Run::answer_together(size_t method, size_t first, size_t end) {
    /// Each answer written as it comes, counted as the method's.
    struct Writer final : BatchAnswers {
        Run& run;
        size_t method;
        size_t next;  ///< the call the next answer is for

        Writer(Run& r, size_t m, size_t first) : run{r}, method{m}, next{first} {}
        void answer(Result result) override {
            metrics::count_call(run.m_methods.m_counters[method], result.has_value());
            const Call& call = *run.m_request.calls[next++];
            if (call.notification) return;
            if (result)
                run.m_writer.result(call.id, *result, call.id_text);
            else
                run.m_writer.error(call.id, result.error(), call.id_text);
        }
    };
    const Method& entry = method_table()[method];
    Node& node = m_methods.m_node;
    auto& calls = m_request.calls;
    Writer writer{*this, method, first};
    try {
        if (node.before_call)
            for (size_t i = first; i < end; ++i) node.before_call(*calls[i]);
        entry.batch(node, std::span{calls}.subspan(first, end - first), entry.names, writer);
        if (writer.next != end) throw std::logic_error{"a batch handler left calls unanswered"};
    } catch (...) {
        // What the calls did stays done (the pool is consistent by itself); the calls not yet
        // answered get the error.
        const Error error = crashed(entry.name);
        for (size_t i = writer.next; i < end; ++i)
            if (!calls[i]->notification) m_writer.error(calls[i]->id, error, calls[i]->id_text);
    }
}

std::string Methods::Run::finish() && { return std::move(m_writer).finish(); }

std::string Methods::handle(std::string_view body) {
    Run run = begin(body);
    while (run.step()) {
    }
    return std::move(run).finish();
}

}  // namespace barrel::rpc
