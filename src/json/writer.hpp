#pragma once
/// @file
/// A forward-only JSON writer for the commit stage's hot path.
///
/// The store's documents are defined as nlohmann::json objects (conventions.hpp) and must stay
/// byte for byte what `nlohmann::json::dump()` makes of them: readers parse them with nlohmann
/// and the tests compare the two. Building a DOM per document costs a std::map node and a string
/// per key and value, and dominated the commit stage (docs/benchmarks.md); this writer appends the
/// same bytes straight into one string instead.
///
/// What it writes is what dump() writes for barrel's documents: no whitespace, "key":value pairs
/// separated by ',', and keys in ascending byte order (nlohmann's objects are std::maps). The
/// caller gives keys in that order (checked by an assertion in debug builds); keys are plain
/// ASCII identifiers and values are hex strings or null, so nothing needs escaping.

#include <barrel/core/bytes.hpp>
#include <barrel/core/uint256.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace barrel {

class JsonWriter {
public:
    /// Appends to `out`, which must outlive the writer.
    explicit JsonWriter(std::string& out) noexcept : m_out{out} {}

    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();

    /// The next key of the current object: an identifier greater than the previous key.
    JsonWriter& key(std::string_view name);

    /// Values, as conventions.hpp defines them.
    JsonWriter& bytes(BytesView value);    ///< "0x" + two lower-case hex digits per byte
    JsonWriter& quantity(uint64_t value);  ///< "0x" + minimal lower-case hex ("0x0")
    JsonWriter& quantity(const u256& value);
    JsonWriter& null();

private:
    void separate();
    void value_written() noexcept { m_need_comma = true; }

    std::string& m_out;
    bool m_need_comma{false};
#ifndef NDEBUG
    // The last key written at each nesting depth (keys are string literals at every call site).
    std::array<std::string_view, 8> m_last_key{};
    size_t m_depth{0};
#endif
};

}  // namespace barrel
