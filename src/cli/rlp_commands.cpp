// `rlp decode` and `rlp encode`: foundry's `cast from-rlp` / `cast to-rlp` for barrel's strict
// RLP. The JSON side: a byte string is a "0x"-hex JSON string, a list is an array; encode also
// takes unsigned JSON integers (as minimal big-endian byte strings, the way RLP writes integers).

#include <barrel/cli/cli.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/rlp/decode.hpp>
#include <barrel/rlp/encode.hpp>

#include "command.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>
#include <vector>

namespace barrel::cli {

namespace {

nlohmann::json item_to_json(const rlp::Item& item) {
    if (!item.list) return to_hex(item.bytes);
    auto out = nlohmann::json::array();
    for (const auto& child : item.items) out.push_back(item_to_json(child));
    return out;
}

int rlp_decode(Context& ctx, const ParsedArgs& args) {
    const Bytes bytes = read_hex_argument(ctx, args.positionals[0]);
    const auto item = rlp::decode_item(bytes);
    if (!item) fail("invalid RLP: " + std::string{rlp::to_string(item.error())});
    ctx.out << item_to_json(*item).dump() << "\n";
    return kExitOk;
}

/// A JSON value for an error message: its JSON text, shortened.
std::string shown(const nlohmann::json& j) {
    constexpr size_t kMax = 40;
    std::string s = j.dump();
    if (s.size() > kMax) s = s.substr(0, kMax) + "...";
    return s;
}

/// The text of every number the JSON parser could only hold as a double (a fraction, an
/// exponent, an integer beyond 64 bits), in the order they appear, and the next one to name.
/// encode_json meets them in the same order (arrays depth first; it stops at the first object).
struct FloatTexts {
    std::vector<std::string> texts;
    size_t next{0};
};

/// nlohmann's own DOM builder, noting the text of each such number: the double has lost it
/// (18446744073709551616 would read back as 1.8446744073709552e+19).
class DomWithFloatTexts : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
public:
    DomWithFloatTexts(nlohmann::json& result, FloatTexts& floats)
        : json_sax_dom_parser(result, true), m_floats{floats} {}
    bool number_float(double value, const std::string& text) {
        m_floats.texts.push_back(text);
        return json_sax_dom_parser::number_float(value, text);
    }

private:
    FloatTexts& m_floats;
};

/// Encodes `j` (an item at `path`, "$" for the root, "$[1][0]" for nested ones, inside `depth`
/// arrays) onto `out`.
void encode_json(Bytes& out, const nlohmann::json& j, std::string& path, size_t depth,
                 FloatTexts& floats) {
    const auto bad = [&](const std::string& what) {
        fail("invalid RLP item at " + path + ": " + what);
    };
    switch (j.type()) {
        case nlohmann::json::value_t::array: {
            // The same bound as rlp::decode_item (at most kMaxDepth lists inside one another), so
            // whatever encodes also decodes. The path would be hundreds of "[0]": left out.
            if (depth >= rlp::kMaxDepth)
                fail("invalid RLP item: lists nested deeper than " +
                     std::to_string(rlp::kMaxDepth));
            Bytes payload;
            for (size_t i = 0; i < j.size(); ++i) {
                const size_t mark = path.size();
                path += "[" + std::to_string(i) + "]";
                encode_json(payload, j[i], path, depth + 1, floats);
                path.resize(mark);
            }
            rlp::encode_list(out, payload);
            return;
        }
        case nlohmann::json::value_t::string: {
            const auto& s = j.get_ref<const std::string&>();
            if (!s.starts_with("0x") && !s.starts_with("0X"))
                bad("expected a 0x-hex string, got " + shown(j));
            const auto bytes = from_hex(s);
            if (!bytes) bad("invalid hex: " + describe_hex_error(s, bytes.error()));
            rlp::encode(out, BytesView{*bytes});
            return;
        }
        case nlohmann::json::value_t::number_unsigned: rlp::encode(out, j.get<uint64_t>()); return;
        case nlohmann::json::value_t::number_integer:  // negative, or "-0"
            if (j.get<int64_t>() == 0) {
                rlp::encode(out, uint64_t{0});
                return;
            }
            bad("number " + shown(j) + " is not an unsigned 64-bit integer");
            return;
        case nlohmann::json::value_t::number_float: {  // also integers beyond 64 bits
            // Named as written, never as the double it became.
            const std::string text =
                floats.next < floats.texts.size() ? floats.texts[floats.next] : shown(j);
            ++floats.next;
            const bool integer = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
                return c >= '0' && c <= '9';
            });
            if (integer) bad("number " + text + " is above 2^64-1: give it as a 0x-hex string");
            bad("number " + text + " is not an unsigned 64-bit integer");
            return;
        }
        case nlohmann::json::value_t::object:
            bad("expected a 0x-hex string, unsigned integer or array, got an object");
            return;
        default:  // null, true/false
            bad("expected a 0x-hex string, unsigned integer or array, got " + shown(j));
            return;
    }
}

/// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string parse_error_message(const nlohmann::json::parse_error& e) {
    std::string_view what = e.what();
    if (what.starts_with("[json.exception.")) {
        const auto end = what.find("] ");
        if (end != std::string_view::npos) what.remove_prefix(end + 2);
    }
    return std::string{what};
}

int rlp_encode(Context& ctx, const ParsedArgs& args) {
    const std::string text = read_text_argument(ctx, args.positionals[0]);
    if (text.empty()) fail("empty input");
    nlohmann::json j;
    FloatTexts floats;
    try {
        DomWithFloatTexts dom{j, floats};
        nlohmann::json::sax_parse(text, &dom);
    } catch (const nlohmann::json::parse_error& e) {
        fail("invalid JSON: " + parse_error_message(e));
    }
    Bytes out;
    std::string path = "$";
    encode_json(out, j, path, 0, floats);
    ctx.out << to_hex(out) << "\n";
    return kExitOk;
}

}  // namespace

Command rlp_decode_command() {
    return {
        .name = "rlp decode",
        .summary = "Decode RLP and print it as JSON: byte strings as 0x-hex, lists as arrays",
        .args = {{"HEX|-", "The RLP as hex (0x optional); '-' reads it from standard input"}},
        .options = {},
        .details =
            "Like foundry's 'cast from-rlp'. The input must be exactly one canonical item;\n"
            "anything else is rejected with the reason (e.g. 'invalid RLP: trailing_bytes').\n"
            "Standard input ('-') is read up to 268435456 bytes (docs/formats.md \"Limits\").\n"
            "Example: barrel-node rlp decode 0xc88363617483646f67  ->  [\"0x636174\",\"0x646f67\"]",
        .handler = rlp_decode,
    };
}

Command rlp_encode_command() {
    return {
        .name = "rlp encode",
        .summary = "Encode JSON as RLP: 0x-hex strings, unsigned integers and arrays",
        .args = {{"JSON|-", "The item as JSON; '-' reads it from standard input"}},
        .options = {},
        .details =
            "Like foundry's 'cast to-rlp'. A JSON string must be 0x-hex and encodes as that\n"
            "byte string; an unsigned integer (up to 2^64-1) encodes as its minimal big-endian\n"
            "bytes (write larger ones as 0x-hex); an array encodes as a list. Anything else is\n"
            "an error naming where it is ($ is the root, $[1][0] a nested item).\n"
            "Standard input ('-') is read up to 268435456 bytes (docs/formats.md \"Limits\").\n"
            "Example: barrel-node rlp encode '[\"0x636174\", 1024]'  ->  0xc783636174820400",
        .handler = rlp_encode,
    };
}

}  // namespace barrel::cli
