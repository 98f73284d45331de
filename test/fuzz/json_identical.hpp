#pragma once
// Shared by rpc_fuzz and the unit tests of the request parser (test/unit/rpc_jsonrpc_test.cpp):
// nlohmann's == calls 1 (unsigned) and 1 (signed) equal, and 0.0 and -0.0; a parser that must
// give nlohmann's values must give their types and signs too.

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

}  // namespace barrel::testing
