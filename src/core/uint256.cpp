#include <barrel/core/uint256.hpp>

#include <charconv>

namespace barrel {

namespace {
using Limb = boost::multiprecision::limb_type;
static_assert(sizeof(Limb) == 8, "barrel assumes 64-bit limbs");
constexpr size_t kLimbs = 4;
}  // namespace

u256 load_be(BytesView be) noexcept {
    // Fill the backend's little-endian 64-bit limbs directly: import_bits is several times slower
    // and this runs for every integer field of every transaction.
    std::array<uint64_t, kLimbs> limbs{};
    const size_t n = be.size() < 32 ? be.size() : 32;
    for (size_t i = 0; i < n; ++i) {
        const size_t bit = i * 8;  // position counted from the least significant byte
        limbs[bit / 64] |= static_cast<Limb>(be[be.size() - 1 - i]) << (bit % 64);
    }
    return from_limbs(limbs);
}

std::array<uint64_t, 4> to_limbs(const u256& v) noexcept {
    std::array<uint64_t, 4> out{};
    const auto& backend = v.backend();
    for (size_t i = 0; i < backend.size() && i < kLimbs; ++i) out[i] = backend.limbs()[i];
    return out;
}

u256 from_limbs(const std::array<uint64_t, 4>& limbs) noexcept {
    u256 v;
    auto& backend = v.backend();
    backend.resize(kLimbs, kLimbs);
    for (size_t i = 0; i < kLimbs; ++i) backend.limbs()[i] = limbs[i];
    backend.normalize();
    return v;
}

size_t byte_length(const u256& v) noexcept {
    if (v == 0) return 0;
    return boost::multiprecision::msb(v) / 8 + 1;
}

void store_be32(const u256& v, uint8_t* out) noexcept {
    const auto& backend = v.backend();
    const size_t used = backend.size();
    for (size_t limb = 0; limb < kLimbs; ++limb) {
        const Limb w = limb < used ? backend.limbs()[limb] : 0;
        for (size_t b = 0; b < 8; ++b)
            out[31 - (limb * 8 + b)] = static_cast<uint8_t>(w >> (8 * b));
    }
}

size_t store_be_minimal(const u256& v, uint8_t* out) noexcept {
    uint8_t full[32];
    store_be32(v, full);
    const size_t n = byte_length(v);
    for (size_t i = 0; i < n; ++i) out[i] = full[32 - n + i];
    return n;
}

std::string to_hex_quantity(const u256& v) {
    if (v == 0) return "0x0";
    static constexpr char kDigits[] = "0123456789abcdef";
    uint8_t full[32];
    store_be32(v, full);
    std::string out = "0x";
    bool leading = true;
    for (uint8_t byte : full) {
        for (int shift : {4, 0}) {
            const int d = (byte >> shift) & 0xf;
            if (leading && d == 0) continue;
            leading = false;
            out.push_back(kDigits[d]);
        }
    }
    return out;
}

std::string to_hex_quantity(uint64_t v) { return to_hex_quantity(u256{v}); }

std::string to_decimal(const u256& v) { return v.str(); }

std::optional<u256> parse_u256(std::string_view s) noexcept {
    if (s.empty()) return std::nullopt;
    u512 acc = 0;
    unsigned base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s.remove_prefix(2);
    }
    static const u512 kMax = u512{1} << 256;
    for (char c : s) {
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (base == 16 && c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return std::nullopt;
        acc = acc * base + static_cast<unsigned>(d);
        if (acc >= kMax) return std::nullopt;
    }
    return static_cast<u256>(acc);
}

std::optional<uint64_t> parse_u64(std::string_view s) noexcept {
    const auto v = parse_u256(s);
    if (!v || *v > std::numeric_limits<uint64_t>::max()) return std::nullopt;
    return static_cast<uint64_t>(*v);
}

std::optional<u256> checked_add(const u256& a, const u256& b) noexcept {
    u256 sum = a + b;  // wraps: unchecked backend
    if (sum < a) return std::nullopt;
    return sum;
}

std::optional<u256> checked_mul(const u256& a, const u256& b) noexcept {
    if (a == 0 || b == 0) return u256{0};
    if (byte_length(a) + byte_length(b) <= 32) return a * b;  // cannot overflow
    const u512 wide = u512{a} * u512{b};
    if ((wide >> 256) != 0) return std::nullopt;
    return static_cast<u256>(wide);
}

}  // namespace barrel
