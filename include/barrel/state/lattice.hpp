#pragma once
/// @file
/// The state commitment: a homomorphic hash of the whole state, built as Solana's accounts
/// lattice hash is (SIMD-0215; docs/formats.md, "State commitment"). Each state entry's canonical
/// encoding is expanded to an element of 1,024 u16 lanes; the state's lattice is the lane-wise sum,
/// mod 2^16, of its entries' elements, and `state_root` is a domain-separated hash of the lattice.
/// Sums commute, so a block updates the lattice in O(write set) (subtract each written key's old
/// element, add its new one), in any order, on any number of threads, with the same result; and a
/// copy of the state (a snapshot, a datadir) is checked against a header by summing its entries.

#include <barrel/core/bytes.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/state/state.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace barrel::state {

/// Appends one entry's canonical encoding (docs/formats.md, "Write set"): RLP([0x01 ‖ address,
/// RLP([nonce, balance])]) for an account, RLP([0x02 ‖ name, RLP(balance)]) for a user. The
/// bytes a lattice element expands, and the entries of a snapshot chunk.
void encode_entry(Bytes& out, const Address& address, const Account& account);
void encode_entry(Bytes& out, std::string_view name, const u256& balance);

/// A lattice: 1,024 lanes of u16, summed mod 2^16. Default-constructed it is the empty state's
/// (all zeros), the identity of + and −.
class Lattice {
public:
    static constexpr size_t kLanes = 1024;
    static constexpr size_t kBytes = 2 * kLanes;

    Lattice() noexcept = default;

    /// The element of one entry, given as its canonical encoding (encode_entry).
    static Lattice element(BytesView encoded_entry) noexcept;
    static Lattice element(const Address& address, const Account& account);
    static Lattice element(std::string_view name, const u256& balance);

    /// Adds (removes) one entry's element: the expansion is written to a buffer on the stack and
    /// summed in, nothing allocated.
    void add(BytesView encoded_entry) noexcept;
    void remove(BytesView encoded_entry) noexcept;

    Lattice& operator+=(const Lattice& other) noexcept;
    Lattice& operator-=(const Lattice& other) noexcept;
    friend Lattice operator+(const Lattice& a, const Lattice& b) noexcept {
        Lattice sum = a;
        return sum += b;
    }
    friend Lattice operator-(const Lattice& a, const Lattice& b) noexcept {
        Lattice difference = a;
        return difference -= b;
    }
    friend bool operator==(const Lattice&, const Lattice&) = default;

    bool is_zero() const noexcept;

    /// `state_root`: the domain-separated 256-bit hash of the lattice's 2,048 bytes.
    Hash root() const noexcept;

    /// The 2,048 bytes: each lane little-endian, lane 0 first (how it is stored and carried).
    void to_bytes(std::span<uint8_t, kBytes> out) const noexcept;
    Bytes bytes() const;
    /// The lattice of `bytes`, or nullopt unless there are exactly 2,048 of them.
    static std::optional<Lattice> from_bytes(BytesView bytes) noexcept;

    std::span<const uint16_t, kLanes> lanes() const noexcept { return m_lanes; }

private:
    alignas(64) std::array<uint16_t, kLanes> m_lanes{};
};

/// The lattice of a whole state given as entries (the genesis allocation, a recomputation):
/// every entry added; `parallel` sums on the task arena, one accumulator per worker.
Lattice lattice_of(const WriteSet& entries, bool parallel = false);

/// The lattice after a block: `parent` minus each written key's old element (WriteSet::before)
/// plus its new one. An empty write set gives `parent` back. The write set must carry its
/// `before` values (execution fills them; see WriteSet::has_before()).
Lattice next_lattice(const Lattice& parent, const WriteSet& writes, bool parallel = false);

}  // namespace barrel::state
