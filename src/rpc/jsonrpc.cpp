#include "rpc/jsonrpc.hpp"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>

namespace barrel::rpc {

namespace {

/// Where the string that opens before `from` ends: the offset of its closing quote, the first
/// one not escaped by an odd run of backslashes, or text.size() if it never closes. memchr
/// skips the long hex strings of a request at memory speed.
size_t string_end(std::string_view text, size_t from) {
    while (from < text.size()) {
        const void* quote = std::memchr(text.data() + from, '"', text.size() - from);
        if (quote == nullptr) return text.size();
        const size_t at = static_cast<size_t>(static_cast<const char*>(quote) - text.data());
        size_t backslashes = 0;
        while (at - backslashes > from && text[at - backslashes - 1] == '\\') ++backslashes;
        if (backslashes % 2 == 0) return at;
        from = at + 1;
    }
    return text.size();
}

/// The deepest nesting of arrays and objects in `text`, counted outside strings, stopping as
/// soon as it passes `limit`. A linear scan that allocates nothing.
size_t nesting_depth(std::string_view text, size_t limit) {
    size_t depth = 0, deepest = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        switch (text[i]) {
            case '"': i = string_end(text, i + 1); break;
            case '[':
            case '{':
                deepest = std::max(deepest, ++depth);
                if (deepest > limit) return deepest;
                break;
            case ']':
            case '}':
                if (depth > 0) --depth;
                break;
            default: break;
        }
    }
    return deepest;
}

// ---- Parsing: simdjson, with nlohmann's semantics ---------------------------------------------

/// simdjson's DOM as nlohmann's, with nlohmann's types: a number without fraction or exponent is
/// unsigned when it has no minus sign, signed otherwise ("-0" never reaches here, see
/// with_simdjson), anything else a double; of duplicate keys the last one wins, as in
/// nlohmann's parser.
json to_json(simdjson::dom::element element) {
    using Type = simdjson::dom::element_type;
    switch (element.type()) {
        case Type::ARRAY: {
            const simdjson::dom::array array = element.get_array().value_unsafe();
            json out = json::array();
            auto& items = out.get_ref<json::array_t&>();
            items.reserve(array.size());
            for (const simdjson::dom::element item : array) items.push_back(to_json(item));
            return out;
        }
        case Type::OBJECT: {
            const simdjson::dom::object object = element.get_object().value_unsafe();
            json out = json::object();
            auto& members = out.get_ref<json::object_t&>();
            for (const simdjson::dom::key_value_pair member : object)
                members.insert_or_assign(std::string(member.key), to_json(member.value));
            return out;
        }
        case Type::INT64: {
            const int64_t value = element.get_int64().value_unsafe();
            if (value < 0) return json(value);
            return json(static_cast<uint64_t>(value));
        }
        case Type::UINT64: return json(element.get_uint64().value_unsafe());
        case Type::DOUBLE: return json(element.get_double().value_unsafe());
        case Type::STRING: return json(std::string(element.get_string().value_unsafe()));
        case Type::BOOL: return json(element.get_bool().value_unsafe());
        case Type::NULL_VALUE: return json(nullptr);
    }
    return json(json::value_t::discarded);
}

/// A thread's simdjson parser and the padded copy of the text it reads (simdjson reads up to
/// SIMDJSON_PADDING bytes past the end), both kept between requests so that a request
/// allocates neither; released after a body larger than kKeptBytes, so that one large request
/// does not hold its buffers (several times its size) for the life of the thread.
struct Scratch {
    static constexpr size_t kKeptBytes = 1 << 20;
    simdjson::dom::parser parser;
    std::string padded;
};

/// Parses `text` with the thread's simdjson parser and hands the document to `use`; false,
/// without calling it, when simdjson rejects the text or when it holds "-0" (an integer 0 to
/// both parsers, signed only to nlohmann): nlohmann must parse those, its acceptance and its
/// values are the reference.
template <class Use>
bool with_simdjson(std::string_view text, Use&& use) {
    if (text.find("-0") != std::string_view::npos) return false;
    thread_local Scratch scratch;
    scratch.padded.reserve(text.size() + simdjson::SIMDJSON_PADDING);
    scratch.padded.assign(text);
    const simdjson::padded_string_view padded{scratch.padded.data(), scratch.padded.size(),
                                              scratch.padded.capacity()};
    auto element = scratch.parser.parse(padded);
    const bool parsed = element.error() == simdjson::SUCCESS;
    if (parsed) use(element.value_unsafe());
    if (text.size() > Scratch::kKeptBytes) {
        scratch.parser = simdjson::dom::parser{};
        scratch.padded = std::string{};
    }
    return parsed;
}

// ---- Call objects, from either DOM ------------------------------------------------------------

/// What parse_call reads of a call object. Read straight from simdjson's DOM, it spares a batch
/// the nlohmann object of each call (a map node per member), of which only id and params
/// survive.
struct CallMembers {
    std::optional<json> id;             ///< absent: a notification
    bool version_2_0{false};            ///< "jsonrpc" is the string "2.0"
    std::optional<std::string> method;  ///< present and a string
    std::optional<json> params;         ///< present and not null
};

std::optional<CallMembers> members_of(json& element) {
    if (!element.is_object()) return std::nullopt;
    CallMembers members;
    if (const auto id = element.find("id"); id != element.end()) members.id = std::move(*id);
    const auto version = element.find("jsonrpc");
    members.version_2_0 = version != element.end() && *version == "2.0";
    if (const auto method = element.find("method"); method != element.end() && method->is_string())
        members.method = std::move(method->get_ref<std::string&>());
    if (const auto params = element.find("params"); params != element.end() && !params->is_null())
        members.params = std::move(*params);
    return members;
}

std::optional<CallMembers> members_of(simdjson::dom::element element) {
    simdjson::dom::object object;
    if (element.get(object) != simdjson::SUCCESS) return std::nullopt;
    // Of duplicate keys the last one counts, as in nlohmann's object.
    std::optional<simdjson::dom::element> id, version, method, params;
    for (const simdjson::dom::key_value_pair member : object) {
        if (member.key == "id")
            id = member.value;
        else if (member.key == "jsonrpc")
            version = member.value;
        else if (member.key == "method")
            method = member.value;
        else if (member.key == "params")
            params = member.value;
    }
    CallMembers members;
    if (id) members.id = to_json(*id);
    std::string_view text;
    members.version_2_0 = version && version->get(text) == simdjson::SUCCESS && text == "2.0";
    if (method && method->get(text) == simdjson::SUCCESS) members.method = std::string(text);
    if (params && !params->is_null()) members.params = to_json(*params);
    return members;
}

bool valid_id(const json& id) { return id.is_null() || id.is_string() || id.is_number(); }

Expected<Call, BadCall> parse_call(std::optional<CallMembers> members) {
    auto bad = [](json id, std::string message) {
        return unexpected(
            BadCall{std::move(id), Error{code::invalid_request, std::move(message)}, {}});
    };
    if (!members) return bad(nullptr, "invalid request: not an object");
    Call call;
    call.notification = !members->id;
    if (!call.notification) {
        if (!valid_id(*members->id))
            return bad(nullptr, "invalid request: id must be a string, a number or null");
        call.id = std::move(*members->id);
    }
    if (!members->version_2_0) return bad(call.id, "invalid request: jsonrpc must be \"2.0\"");
    if (!members->method) return bad(call.id, "invalid request: method must be a string");
    call.method = std::move(*members->method);
    if (members->params) {
        if (!members->params->is_array() && !members->params->is_object())
            return bad(call.id, "invalid request: params must be an array or an object");
        call.params = std::move(*members->params);
    }
    return call;
}

// The document's shape, from either DOM.
bool is_array(const json& doc) { return doc.is_array(); }
bool is_array(simdjson::dom::element doc) { return doc.is_array(); }
bool is_object(const json& doc) { return doc.is_object(); }
bool is_object(simdjson::dom::element doc) { return doc.is_object(); }
json& elements(json& doc) { return doc; }
simdjson::dom::array elements(simdjson::dom::element doc) { return doc.get_array().value_unsafe(); }

template <class Document>
Expected<Request, Error> request_of(Document&& doc, const Limits& limits) {
    Request request;
    if (is_array(doc)) {
        request.batch = true;
        auto&& calls = elements(doc);
        const size_t count = calls.size();
        if (count == 0) return unexpected(Error{code::invalid_request, "empty batch"});
        if (count > limits.max_batch)
            return unexpected(Error{code::invalid_request, "batch too large"});
        request.calls.reserve(count);
        for (auto&& element : calls) request.calls.push_back(parse_call(members_of(element)));
        return request;
    }
    if (!is_object(doc))
        return unexpected(
            Error{code::invalid_request, "invalid request: not an object or an array"});
    request.calls.push_back(parse_call(members_of(doc)));
    return request;
}

/// Whether an id would not print as it was sent: a parsed double (a fraction, an exponent, or
/// an integer past 64 bits, which both parsers read as a double).
bool inexact_id(const json& id) { return id.is_number_float(); }

/// The text of each call's id as sent, where it is a number read as a double; by call index
/// ("" for the others). Read with nlohmann's SAX parser, which hands over a number's text: only
/// for the rare request that has such an id, so the usual one pays a scan of its calls' ids.
class IdTexts final : public nlohmann::json_sax<json> {
public:
    IdTexts(bool batch, size_t calls) : m_batch{batch}, m_texts(calls) {}
    std::vector<std::string> take() && { return std::move(m_texts); }

    bool null() override { return value(nullptr); }
    bool boolean(bool) override { return value(nullptr); }
    bool number_integer(number_integer_t) override { return value(nullptr); }
    bool number_unsigned(number_unsigned_t) override { return value(nullptr); }
    bool number_float(number_float_t, const string_t& text) override { return value(&text); }
    bool string(string_t&) override { return value(nullptr); }
    bool binary(binary_t&) override { return value(nullptr); }
    bool start_object(std::size_t) override { return open(); }
    bool start_array(std::size_t) override { return open(); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& name) override {
        m_at_id = m_depth == call_depth() && name == "id";
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }

private:
    size_t call_depth() const { return m_batch ? 2 : 1; }
    /// A value begins: a new call when it is an element of the batch.
    void begin_value() {
        if (m_batch && m_depth == 1) ++m_elements;
    }
    bool value(const string_t* float_text) {
        begin_value();
        if (m_at_id) record(float_text ? *float_text : std::string{});
        return true;
    }
    bool open() {
        begin_value();
        if (m_at_id) record({});
        ++m_depth;
        return true;
    }
    bool close() {
        --m_depth;
        m_at_id = false;
        return true;
    }
    void record(std::string text) {
        m_at_id = false;
        const size_t call = m_batch ? m_elements - 1 : 0;
        if (call < m_texts.size()) m_texts[call] = std::move(text);
    }

    bool m_batch;
    size_t m_depth{0};
    size_t m_elements{0};
    bool m_at_id{false};
    std::vector<std::string> m_texts;
};

/// Fills Call::id_text and BadCall::id_text where the parsed id would not print as sent.
void keep_id_texts(std::string_view body, Request& request) {
    const bool any = std::any_of(request.calls.begin(), request.calls.end(), [](const auto& c) {
        return inexact_id(c ? c->id : c.error().id);
    });
    if (!any) return;
    IdTexts sax{request.batch, request.calls.size()};
    json::sax_parse(body, &sax);
    auto texts = std::move(sax).take();
    for (size_t i = 0; i < request.calls.size(); ++i) {
        auto& c = request.calls[i];
        if (!inexact_id(c ? c->id : c.error().id)) continue;
        if (c) {
            c->id_text = std::move(texts[i]);
            continue;
        }
        BadCall bad = c.error();
        bad.id_text = std::move(texts[i]);
        c = unexpected(std::move(bad));
    }
}

}  // namespace

json parse_json(std::string_view text) {
    json doc;
    if (!with_simdjson(text, [&doc](simdjson::dom::element element) { doc = to_json(element); }))
        doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    return doc;
}

Expected<Request, Error> parse_request(std::string_view body, const Limits& limits) {
    if (nesting_depth(body, limits.max_depth) > limits.max_depth)
        return unexpected(Error{code::invalid_request, "invalid request: nested deeper than " +
                                                           std::to_string(limits.max_depth)});
    // Calls straight from simdjson's DOM; nlohmann's for what parse_json would leave to it.
    std::optional<Expected<Request, Error>> request;
    if (!with_simdjson(body,
                       [&](simdjson::dom::element doc) { request = request_of(doc, limits); })) {
        json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
        if (doc.is_discarded()) return unexpected(Error{code::parse_error, "parse error"});
        request = request_of(doc, limits);
    }
    if (*request) keep_id_texts(body, **request);
    return std::move(*request);
}

json result_response(const json& id, json result) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json error_response(const json& id, const Error& error) {
    return json{{"jsonrpc", "2.0"},
                {"id", id},
                {"error", json{{"code", error.code}, {"message", error.message}}}};
}

namespace {

/// Whether nlohmann writes `text` as it is between quotes: printable ASCII without quote or
/// backslash (hashes, quantities, addresses, method names).
bool plain_string(std::string_view text) noexcept {
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
}

void append_string(std::string& out, std::string_view text) {
    if (!plain_string(text)) {
        out += json(text).dump(-1, ' ', false, json::error_handler_t::replace);
        return;
    }
    out += '"';
    out += text;
    out += '"';
}

/// Appends `value` as json.dump(-1, ' ', false, replace) writes it: objects (in their map's
/// order, as dump), arrays, plain strings, integers, booleans and null directly, which is what
/// results are (a block's 2,500 hashes through the serialiser cost more than the call did);
/// floats and strings that need escapes through the serialiser, value by value, which writes
/// them the same inside a document as alone.
void append_json(std::string& out, const json& value, size_t depth = 0) {
    constexpr size_t kMaxDepth = 64;  // results are shallow; anything deeper goes the slow way
    if (depth > kMaxDepth) {
        out += value.dump(-1, ' ', false, json::error_handler_t::replace);
        return;
    }
    switch (value.type()) {
        case json::value_t::object: {
            out += '{';
            bool first = true;
            for (const auto& [key, member] : value.items()) {
                if (!first) out += ',';
                first = false;
                append_string(out, key);
                out += ':';
                append_json(out, member, depth + 1);
            }
            out += '}';
            return;
        }
        case json::value_t::array: {
            out += '[';
            bool first = true;
            for (const json& element : value) {
                if (!first) out += ',';
                first = false;
                append_json(out, element, depth + 1);
            }
            out += ']';
            return;
        }
        case json::value_t::string: append_string(out, value.get_ref<const std::string&>()); return;
        case json::value_t::number_unsigned:
        case json::value_t::number_integer: {
            char digits[24];
            const auto end =
                value.is_number_unsigned()
                    ? std::to_chars(digits, digits + sizeof digits, value.get<uint64_t>())
                    : std::to_chars(digits, digits + sizeof digits, value.get<int64_t>());
            out.append(digits, end.ptr);
            return;
        }
        case json::value_t::boolean: out += value.get<bool>() ? "true" : "false"; return;
        case json::value_t::null: out += "null"; return;
        default: break;
    }
    out += value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

template <class Write>
void ResponseWriter::whole(Write&& write) {
    const size_t size = m_body.size(), count = m_count;
    try {
        write();
    } catch (...) {
        m_body.resize(size);  // shrinking never allocates
        m_count = count;
        throw;
    }
}

void ResponseWriter::append_id(const json& id, std::string_view id_text) {
    if (!id_text.empty())
        m_body += id_text;
    else
        append_json(m_body, id);
}

void ResponseWriter::open_response() {
    if (m_batch) m_body += m_count == 0 ? '[' : ',';
    ++m_count;
}

// Keys in nlohmann's order (std::map: sorted), as result_response and error_response dump.
void ResponseWriter::result(const json& id, const json& result, std::string_view id_text) {
    whole([&] {
        open_response();
        m_body += R"({"id":)";
        append_id(id, id_text);
        m_body += R"(,"jsonrpc":"2.0","result":)";
        append_json(m_body, result);
        m_body += '}';
    });
}

void ResponseWriter::error(const json& id, const Error& error, std::string_view id_text) {
    whole([&] {
        open_response();
        m_body += R"({"error":{"code":)";
        m_body += std::to_string(error.code);
        m_body += R"(,"message":)";
        append_json(m_body, json(error.message));
        m_body += R"(},"id":)";
        append_id(id, id_text);
        m_body += R"(,"jsonrpc":"2.0"})";
    });
}

std::string ResponseWriter::finish() && {
    if (m_batch && m_count > 0) m_body += ']';
    return std::move(m_body);
}

std::string response_body(const Request& request, const std::vector<json>& responses) {
    if (responses.empty()) return {};
    // Replace, never throw: a string we echo (an id) is valid UTF-8 since the parser checked it,
    // but a response must not be lost to a serialiser exception either way.
    constexpr auto replace = json::error_handler_t::replace;
    if (!request.batch) return responses.front().dump(-1, ' ', false, replace);
    return json(responses).dump(-1, ' ', false, replace);
}

}  // namespace barrel::rpc
