#include <barrel/cli/files.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/uint256.hpp>

#include "command.hpp"

namespace barrel::cli {

std::string read_small_file(const std::string& path, std::string_view what, size_t limit) {
    static_assert(kMaxGenesisBytes == size_t{256} << 20, "command.hpp states the default");
    const std::string quoted = squote(path);
    auto bytes = read_file(path, limit);
    if (!bytes) {
        if (bytes.error().directory) fail(std::string{what} + " " + quoted + " is a directory");
        if (bytes.error().too_large)
            fail(std::string{what} + " " + quoted + " is " + bytes.error().reason);
        fail("cannot read " + std::string{what} + " " + quoted + ": " + bytes.error().reason);
    }
    return std::string{as_chars(*bytes)};
}

namespace {
constexpr std::string_view kWhitespace = " \t\r\n\v\f";

std::string_view trim(std::string_view s) noexcept {
    const auto first = s.find_first_not_of(kWhitespace);
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(kWhitespace);
    return s.substr(first, last - first + 1);
}
}  // namespace

static_assert(kMaxTextInputBytes == 268435456, "the --help of rlp and tx decode names the limit");

std::string read_text_argument(Context& ctx, std::string_view arg) {
    if (arg != "-") return std::string{trim(arg)};
    auto bytes = read_stream(ctx.in, kMaxTextInputBytes);
    if (!bytes) {
        if (bytes.error().too_large) fail("standard input is " + bytes.error().reason);
        fail("cannot read standard input: " + bytes.error().reason);
    }
    return std::string{trim(as_chars(*bytes))};
}

std::vector<uint8_t> read_hex_argument(Context& ctx, std::string_view arg) {
    const std::string text = read_text_argument(ctx, arg);
    auto bytes = from_hex(text);
    if (!bytes) fail("invalid hex: " + describe_hex_error(text, bytes.error()));
    if (bytes->empty()) fail("empty input");
    return std::move(bytes).value();
}

uint64_t parse_u64_option(std::string_view name, std::string_view value) {
    const auto v = parse_u64(value);
    if (!v)
        fail(std::string{name} + ": expected an unsigned 64-bit integer, got '" +
             std::string{value} + "'");
    return *v;
}

}  // namespace barrel::cli
