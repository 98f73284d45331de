#pragma once
/// @file
/// The block header and its RLP form (see docs/formats.md).

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>
#include <barrel/rlp/decode.hpp>

namespace barrel::block {

struct Header {
    Hash parent_hash;
    uint64_t number{0};
    uint64_t timestamp{0};
    Address coinbase;
    uint64_t gas_limit{0};
    uint64_t gas_used{0};
    Hash txs_root;
    Hash receipts_root;
    Hash state_root;
    uint64_t chain_id{0};

    friend bool operator==(const Header&, const Header&) = default;
};

/// Which header field a decoding error concerns (in wire order).
enum class HeaderField : uint8_t {
    list,
    parent_hash,
    number,
    timestamp,
    coinbase,
    gas_limit,
    gas_used,
    txs_root,
    receipts_root,
    state_root,
    chain_id,
};

std::string_view to_string(HeaderField f) noexcept;

struct HeaderError {
    HeaderField field{HeaderField::list};
    /// too_few/too_many items are reported as input_too_short / trailing_bytes on `list`.
    rlp::DecodingError rlp{};
    friend bool operator==(const HeaderError&, const HeaderError&) = default;
};

void encode(Bytes& out, const Header& header);
Bytes encode(const Header& header);

/// Decodes one header list from the front of `from`.
Expected<Header, HeaderError> decode_header(BytesView& from) noexcept;

/// keccak256(RLP(header)): the block hash.
Hash hash_of(const Header& header);

}  // namespace barrel::block
