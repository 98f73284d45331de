#pragma once
// Shared by rpc_fuzz and the unit tests of the request parser (test/unit/rpc_jsonrpc_test.cpp):
// equality of parsed documents and requests that is stricter than ==. nlohmann's == calls 1
// (unsigned) and 1 (signed) equal, and 0.0 and -0.0; a parser that must give nlohmann's values
// must give their types and signs too.

#include "rpc/jsonrpc.hpp"
#include <nlohmann/json.hpp>

#include <cmath>

namespace barrel::testing {

inline bool identical(const nlohmann::json& a, const nlohmann::json& b) {
    if (a.type() != b.type()) return false;
    switch (a.type()) {
        case nlohmann::json::value_t::array:
            if (a.size() != b.size()) return false;
            for (size_t i = 0; i < a.size(); ++i)
                if (!identical(a[i], b[i])) return false;
            return true;
        case nlohmann::json::value_t::object:
            if (a.size() != b.size()) return false;
            for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
                if (i.key() != j.key() || !identical(i.value(), j.value())) return false;
            return true;
        case nlohmann::json::value_t::number_float:
            return a == b && std::signbit(a.get<double>()) == std::signbit(b.get<double>());
        default: return a == b;
    }
}

/// The same request: the same calls, each with identical members or the same error.
inline bool identical(const Expected<rpc::Request, rpc::Error>& a,
                      const Expected<rpc::Request, rpc::Error>& b) {
    if (a.has_value() != b.has_value()) return false;
    if (!a) return a.error().code == b.error().code && a.error().message == b.error().message;
    if (a->batch != b->batch || a->calls.size() != b->calls.size()) return false;
    for (size_t i = 0; i < a->calls.size(); ++i) {
        const auto &x = a->calls[i], &y = b->calls[i];
        if (x.has_value() != y.has_value()) return false;
        if (!x) {
            if (!identical(x.error().id, y.error().id) ||
                x.error().error.code != y.error().error.code ||
                x.error().error.message != y.error().error.message)
                return false;
            continue;
        }
        if (!identical(x->id, y->id) || x->notification != y->notification ||
            x->method != y->method || !identical(x->params, y->params))
            return false;
    }
    return true;
}

/// A UTF-8 byte-order mark: nlohmann skips it, simdjson rejects it, so a body after one is
/// parsed by nlohmann alone (the reference for the same body without it).
inline constexpr std::string_view kByteOrderMark = "\xef\xbb\xbf";

}  // namespace barrel::testing
