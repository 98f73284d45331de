#include <barrel/core/keccak.hpp>
#include <barrel/exec/dag_transfer.hpp>

#include <array>

namespace barrel::exec {

namespace {

constexpr std::array<std::string_view, 5> kSignatures = {
    "userAdd(string,uint256)",
    "userSave(string,uint256)",
    "userDraw(string,uint256)",
    "userBalance(string)",
    "userTransfer(string,string,uint256)",
};

const std::array<uint32_t, 5>& selectors() noexcept {
    static const std::array<uint32_t, 5> table = [] {
        std::array<uint32_t, 5> out{};
        for (size_t i = 0; i < kSignatures.size(); ++i) {
            const Hash h = keccak256(as_bytes(kSignatures[i]));
            out[i] = (uint32_t{h[0]} << 24) | (uint32_t{h[1]} << 16) | (uint32_t{h[2]} << 8) | h[3];
        }
        return out;
    }();
    return table;
}

constexpr size_t kWord = 32;

size_t padded(size_t n) noexcept { return (n + kWord - 1) / kWord * kWord; }

/// A word holding a small unsigned integer (offsets, lengths): nullopt if it exceeds 2^32, which
/// no calldata could satisfy anyway.
std::optional<size_t> small_word(BytesView w) noexcept {
    for (size_t i = 0; i < kWord - 4; ++i)
        if (w[i] != 0) return std::nullopt;
    return (size_t{w[28]} << 24) | (size_t{w[29]} << 16) | (size_t{w[30]} << 8) | size_t{w[31]};
}

/// Reads the string tail at `offset` of the argument area; checks length, bounds and zero padding.
std::optional<std::string_view> read_string(BytesView args, size_t offset) noexcept {
    if (offset + kWord > args.size()) return std::nullopt;
    const auto len = small_word(args.subspan(offset, kWord));
    if (!len) return std::nullopt;
    const size_t begin = offset + kWord;
    if (padded(*len) > args.size() - begin) return std::nullopt;
    for (size_t i = *len; i < padded(*len); ++i)
        if (args[begin + i] != 0) return std::nullopt;
    return std::string_view{reinterpret_cast<const char*>(args.data() + begin), *len};
}

void put_word(Bytes& out, const u256& v) {
    const size_t at = out.size();
    out.resize(at + kWord);
    store_be32(v, out.data() + at);
}

void put_string(Bytes& out, std::string_view s) {
    put_word(out, s.size());
    out.insert(out.end(), s.begin(), s.end());
    out.resize(out.size() + padded(s.size()) - s.size(), 0);
}

}  // namespace

uint32_t selector_of(DagFunction f) noexcept { return selectors()[static_cast<size_t>(f)]; }

std::optional<DagCall> decode_call(BytesView calldata) noexcept {
    if (calldata.size() < 4) return std::nullopt;
    const uint32_t selector = (uint32_t{calldata[0]} << 24) | (uint32_t{calldata[1]} << 16) |
                              (uint32_t{calldata[2]} << 8) | calldata[3];
    const auto& table = selectors();
    size_t index = table.size();
    for (size_t i = 0; i < table.size(); ++i)
        if (table[i] == selector) index = i;
    if (index == table.size()) return std::nullopt;

    DagCall call;
    call.function = static_cast<DagFunction>(index);
    const BytesView args = calldata.subspan(4);
    const size_t strings = call.function == DagFunction::user_transfer ? 2 : 1;
    const bool has_amount = call.function != DagFunction::user_balance;
    const size_t head = kWord * (strings + (has_amount ? 1 : 0));
    if (args.size() < head) return std::nullopt;

    // Only the canonical layout is accepted (tails in argument order, right after the head), so
    // each call has exactly one encoding.
    size_t expected_offset = head;
    std::string_view names[2];
    for (size_t s = 0; s < strings; ++s) {
        const auto offset = small_word(args.subspan(kWord * s, kWord));
        if (!offset || *offset != expected_offset) return std::nullopt;
        const auto name = read_string(args, *offset);
        if (!name) return std::nullopt;
        names[s] = *name;
        expected_offset += kWord + padded(name->size());
    }
    if (expected_offset != args.size()) return std::nullopt;  // nothing trailing
    call.user = names[0];
    call.to = names[1];
    if (has_amount) call.amount = load_be(args.subspan(kWord * strings, kWord));
    return call;
}

Bytes encode_call(const DagCall& call) {
    Bytes out;
    const uint32_t sel = selector_of(call.function);
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(sel >> shift));
    const bool transfer = call.function == DagFunction::user_transfer;
    const bool has_amount = call.function != DagFunction::user_balance;
    const size_t head = kWord * ((transfer ? 2 : 1) + (has_amount ? 1 : 0));
    put_word(out, head);
    if (transfer) put_word(out, head + kWord + padded(call.user.size()));
    if (has_amount) put_word(out, call.amount);
    put_string(out, call.user);
    if (transfer) put_string(out, call.to);
    return out;
}

u256 code_word(DagCode code) noexcept {
    const auto v = static_cast<int32_t>(code);
    if (v >= 0) return u256{static_cast<uint32_t>(v)};
    return ~u256{static_cast<uint32_t>(-v)} +
           1;  // two's complement, as Solidity's int256 → uint256
}

Bytes encode_return(DagCode code) {
    Bytes out;
    put_word(out, code_word(code));
    return out;
}

Bytes encode_return(DagCode code, const u256& balance) {
    Bytes out = encode_return(code);
    put_word(out, balance);
    return out;
}

}  // namespace barrel::exec
