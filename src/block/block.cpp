#include <barrel/block/block.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/rlp/encode.hpp>

#include "block/transactions.hpp"
#include "core/parallel.hpp"

#include <array>

namespace barrel::block {

std::string_view to_string(BlockErrorCode code) noexcept {
    switch (code) {
        case BlockErrorCode::malformed_block: return "malformed_block";
        case BlockErrorCode::malformed_header: return "malformed_header";
        case BlockErrorCode::truncated_index: return "truncated_index";
        case BlockErrorCode::count_too_large: return "count_too_large";
        case BlockErrorCode::first_offset_not_zero: return "first_offset_not_zero";
        case BlockErrorCode::offsets_not_increasing: return "offsets_not_increasing";
        case BlockErrorCode::offset_out_of_range: return "offset_out_of_range";
        case BlockErrorCode::last_offset_mismatch: return "last_offset_mismatch";
        case BlockErrorCode::malformed_tx_list: return "malformed_tx_list";
        case BlockErrorCode::slot_trailing_bytes: return "slot_trailing_bytes";
        case BlockErrorCode::malformed_tx: return "malformed_tx";
        case BlockErrorCode::invalid_tx: return "invalid_tx";
        case BlockErrorCode::wrong_chain_id: return "wrong_chain_id";
    }
    return "unknown";
}

std::string describe(const BlockError& e) {
    std::string out;
    if (e.tx_index) out += "transaction " + std::to_string(*e.tx_index) + ": ";
    out += to_string(e.code);
    switch (e.code) {
        case BlockErrorCode::malformed_block:
        case BlockErrorCode::malformed_tx_list:
            out += ": ";
            out += rlp::to_string(e.rlp);
            break;
        case BlockErrorCode::malformed_header:
            out += ": ";
            out += to_string(e.header_field);
            out += ": ";
            out += rlp::to_string(e.rlp);
            break;
        case BlockErrorCode::malformed_tx:
        case BlockErrorCode::invalid_tx:
            out += ": ";
            out += tx::describe(e.tx);
            break;
        default: break;
    }
    return out;
}

namespace {

Unexpected<BlockError> error(BlockErrorCode code, std::optional<size_t> index = std::nullopt) {
    BlockError e;
    e.code = code;
    e.tx_index = index;
    return unexpected(e);
}

Unexpected<BlockError> rlp_error(BlockErrorCode code, rlp::DecodingError r) {
    BlockError e;
    e.code = code;
    e.rlp = r;
    return unexpected(e);
}

/// Splits an offset-indexed list into its slots after checking the whole index.
Expected<void, BlockError> split_indexed(BytesView payload, std::vector<BytesView>& slots) {
    if (payload.size() < 4) return error(BlockErrorCode::truncated_index);
    const uint64_t count = load_be_u32(payload.data());
    // Check that the index fits before allocating anything in proportion to `count`.
    const uint64_t index_size = 4 + 4 * (count + 1);
    if (index_size > payload.size()) return error(BlockErrorCode::count_too_large);
    const uint8_t* offsets = payload.data() + 4;
    const BytesView area = payload.subspan(index_size);
    if (load_be_u32(offsets) != 0) return error(BlockErrorCode::first_offset_not_zero);
    slots.resize(count);
    uint32_t begin = 0;
    for (size_t i = 0; i < count; ++i) {
        const uint32_t end = load_be_u32(offsets + 4 * (i + 1));
        if (end <= begin) return error(BlockErrorCode::offsets_not_increasing, i);
        if (end > area.size()) return error(BlockErrorCode::offset_out_of_range, i);
        slots[i] = area.subspan(begin, end - begin);
        begin = end;
    }
    if (begin != area.size()) return error(BlockErrorCode::last_offset_mismatch);
    return {};
}

/// Splits a plain RLP list of transactions: legacy ones are list items (the item is the
/// encoding), typed ones are string items whose payload is the envelope.
Expected<void, BlockError> split_plain(BytesView payload, std::vector<BytesView>& slots) {
    while (!payload.empty()) {
        const BytesView item_start = payload;
        BytesView rest = payload;
        auto h = rlp::decode_header(rest);
        if (!h) return rlp_error(BlockErrorCode::malformed_tx_list, h.error());
        const size_t header_size = item_start.size() - rest.size();
        if (h->list) {
            slots.push_back(item_start.first(header_size + h->payload_length));
        } else if (h->payload_length > 0 && rest[0] >= 0xc0) {
            // A legacy transaction wrapped in a string is not go-ethereum's encoding (it rejects
            // it too). The slot keeps the string header, so the decoder rejects it at this index
            // (envelope: unexpected_string) and errors stay in index order.
            slots.push_back(item_start.first(header_size + h->payload_length));
        } else {
            slots.push_back(rest.first(h->payload_length));
        }
        payload = rest.subspan(h->payload_length);
    }
    return {};
}

/// Splits the transactions of a block or a bare list: an RLP string holds an offset-indexed list,
/// an RLP list is a plain list.
Expected<void, BlockError> split_txs(BytesView& from, std::vector<BytesView>& slots) {
    BytesView rest = from;
    auto h = rlp::decode_header(rest);
    if (!h) return rlp_error(BlockErrorCode::malformed_block, h.error());
    const BytesView payload = rest.first(h->payload_length);
    from = rest.subspan(h->payload_length);
    if (h->list) return split_plain(payload, slots);
    if (h->payload_length == 1 && payload[0] < 0x80) return error(BlockErrorCode::truncated_index);
    return split_indexed(payload, slots);
}

/// Stage 1 proper: decode every slot and hash it, in parallel, each index writing its own slot.
/// The transactions are created by the same loop that decodes them (core/slots.hpp, behind
/// block::Transactions).
Expected<void, BlockError> decode_slots(Block& b, bool parallel) {
    const size_t n = b.tx_encodings.size();
    b.tx_hashes.resize(n);
    std::vector<tx::TxError> errors(n);
    LowestIndex bad{n};
    // Four per run: tx::hash_of of each, four per keccak permutation.
    Slots<tx::Transaction> txs(n, 4, parallel, [&](size_t begin, size_t end, tx::Transaction* out) {
        if (bad.beyond(begin)) return;
        for (size_t i = begin; i < end; ++i) {
            auto decoded = tx::decode(b.tx_encodings[i]);
            if (!decoded) {
                errors[i] = decoded.error();
                bad.record(i);
                return;
            }
            out[i] = std::move(decoded).value();
        }
        keccak256_many(std::span{b.tx_encodings}.subspan(begin, end - begin),
                       std::span{b.tx_hashes}.subspan(begin, end - begin));
    });
    // Braces: Storage is an aggregate (clang 14 has no aggregate init from parentheses).
    b.txs = Transactions{
        std::make_unique<Transactions::Storage>(Transactions::Storage{std::move(txs)})};
    if (!bad.any()) return {};
    const size_t i = bad.lowest();
    const tx::TxError& te = errors[i];
    if (te.code == tx::TxErrorCode::malformed_rlp && te.field == tx::Field::envelope &&
        te.rlp == rlp::DecodingError::trailing_bytes)
        return error(BlockErrorCode::slot_trailing_bytes, i);
    BlockError e;
    e.code = BlockErrorCode::malformed_tx;
    e.tx_index = i;
    e.tx = te;
    return unexpected(e);
}

}  // namespace

void encode_indexed_txs(Bytes& out, std::span<const BytesView> txs) {
    size_t area = 0;
    for (const auto& t : txs) area += t.size();
    out.reserve(out.size() + 8 + 4 * txs.size() + area);
    append_be_u32(out, static_cast<uint32_t>(txs.size()));
    uint32_t offset = 0;
    append_be_u32(out, 0);
    for (const auto& t : txs) {
        offset += static_cast<uint32_t>(t.size());
        append_be_u32(out, offset);
    }
    for (const auto& t : txs) out.insert(out.end(), t.begin(), t.end());
}

void encode_block(Bytes& out, const Header& header, std::span<const BytesView> txs) {
    Bytes payload;
    encode(payload, header);
    Bytes index;
    encode_indexed_txs(index, txs);
    rlp::encode(payload, BytesView{index});
    rlp::encode_list(out, payload);
}

Bytes encode_block(const Header& header, std::span<const BytesView> txs) {
    Bytes out;
    encode_block(out, header, txs);
    return out;
}

Block with_header(Block b, const Header& header) {
    Bytes wire = encode_block(header, b.tx_encodings);
    // The object area is the end of the new wire, the transactions in order. A view that lay in
    // transaction i's old bytes lies at the same distance from its start in the new ones (the
    // old wire may have been a plain list, whose transactions are not contiguous).
    size_t area = 0;
    for (const BytesView t : b.tx_encodings) area += t.size();
    const uint8_t* moved_to = wire.data() + (wire.size() - area);
    for (size_t i = 0; i < b.tx_encodings.size(); ++i) {
        const BytesView old = b.tx_encodings[i];
        const auto moved = [&](BytesView v) {
            if (v.data() < old.data() || v.data() + v.size() > old.data() + old.size()) return v;
            return BytesView{moved_to + (v.data() - old.data()), v.size()};
        };
        if (i < b.txs.size()) b.txs[i].data = moved(b.txs[i].data);
        b.tx_encodings[i] = BytesView{moved_to, old.size()};
        moved_to += old.size();
    }
    b.wire = std::move(wire);
    b.header = header;
    b.hash = hash_of(header);
    return b;
}

Bytes encode_plain_tx_list(std::span<const BytesView> txs) {
    Bytes payload;
    for (const auto& t : txs) {
        if (!t.empty() && t[0] >= 0xc0)
            payload.insert(payload.end(), t.begin(), t.end());
        else
            rlp::encode(payload, t);  // a typed envelope travels as a byte string
    }
    Bytes out;
    rlp::encode_list(out, payload);
    return out;
}

Expected<BytesView, BlockError> split_block(BytesView& from) noexcept {
    const BytesView start = from;
    auto h = rlp::decode_header(from);
    if (!h) return rlp_error(BlockErrorCode::malformed_block, h.error());
    if (!h->list)
        return rlp_error(BlockErrorCode::malformed_block, rlp::DecodingError::unexpected_string);
    from = from.subspan(h->payload_length);
    return start.first(start.size() - from.size());
}

Expected<Block, BlockError> decode_block(Bytes wire, bool parallel) {
    Block b;
    b.wire = std::move(wire);
    BytesView in{b.wire};
    auto body = rlp::decode_list(in);
    if (!body) return rlp_error(BlockErrorCode::malformed_block, body.error());
    if (!in.empty())
        return rlp_error(BlockErrorCode::malformed_block, rlp::DecodingError::trailing_bytes);

    BytesView rest = *body;
    const BytesView header_start = rest;
    auto header = decode_header(rest);
    if (!header) {
        BlockError e;
        e.code = BlockErrorCode::malformed_header;
        e.header_field = header.error().field;
        e.rlp = header.error().rlp;
        return unexpected(e);
    }
    b.header = *header;
    // Decoding is canonical, so the header's bytes are exactly RLP(header): hash them in place.
    b.hash = keccak256(header_start.first(header_start.size() - rest.size()));

    if (rest.empty())
        return rlp_error(BlockErrorCode::malformed_block, rlp::DecodingError::input_too_short);
    BARREL_TRY(split_txs(rest, b.tx_encodings));
    if (!rest.empty())
        return rlp_error(BlockErrorCode::malformed_block, rlp::DecodingError::trailing_bytes);
    BARREL_TRY(decode_slots(b, parallel));
    return b;
}

Expected<std::vector<Hash>, BlockError> transaction_hashes(BytesView wire) {
    auto body = rlp::decode_list(wire);
    if (!body) return rlp_error(BlockErrorCode::malformed_block, body.error());
    if (!wire.empty())
        return rlp_error(BlockErrorCode::malformed_block, rlp::DecodingError::trailing_bytes);
    BytesView rest = *body;
    if (auto header = rlp::decode_list(rest); !header) {  // skipped, not decoded
        BlockError e;
        e.code = BlockErrorCode::malformed_header;
        e.rlp = header.error();
        return unexpected(e);
    }
    if (rest.empty())
        return rlp_error(BlockErrorCode::malformed_block, rlp::DecodingError::input_too_short);
    std::vector<BytesView> encodings;
    BARREL_TRY(split_txs(rest, encodings));
    if (!rest.empty())
        return rlp_error(BlockErrorCode::malformed_block, rlp::DecodingError::trailing_bytes);
    std::vector<Hash> hashes(encodings.size());
    keccak256_many(encodings, hashes);
    return hashes;
}

Expected<Block, BlockError> decode_tx_list(Bytes wire, bool parallel) {
    Block b;
    b.wire = std::move(wire);
    BytesView in{b.wire};
    BARREL_TRY(split_txs(in, b.tx_encodings));
    if (!in.empty())
        return rlp_error(BlockErrorCode::malformed_block, rlp::DecodingError::trailing_bytes);
    BARREL_TRY(decode_slots(b, parallel));
    return b;
}

namespace {
/// How many transactions ahead recover_senders prefetches the sender cache's slots: 4 to 16
/// gave the same times, 32 was slower (docs/benchmarks.md, "Warm verify: prefetch and huge pages").
constexpr size_t kPrefetchAhead = 8;
/// Transactions one task of recover_senders takes: keccak256_many's width.
constexpr size_t kRecoverGroup = 4;
}  // namespace

Expected<void, BlockError> recover_senders(Block& b, uint64_t chain_id, SenderCache* cache,
                                           bool parallel) {
    if (b.header && b.header->chain_id != chain_id) return error(BlockErrorCode::wrong_chain_id);
    const size_t n = b.txs.size();
    b.senders.resize(n);
    std::vector<tx::TxError> errors(n);
    LowestIndex bad{n};
    // In groups of four, so that the senders the cache does not know are recovered together
    // (tx::recover_senders hashes four at a time).
    for_each_group(n, kRecoverGroup, parallel, [&](size_t begin, size_t end) {
        std::array<const tx::Transaction*, kRecoverGroup> misses;
        std::array<size_t, kRecoverGroup> at;
        size_t count = 0;
        for (size_t i = begin; i < end; ++i) {
            // Another task's failure lies outside this group: below it if it makes this index
            // irrelevant, and then so are the misses gathered before it.
            if (bad.beyond(i)) return;
            const tx::Transaction& t = b.txs[i];
            // The stateless rules apply even to a cached sender: the cache answers "who
            // signed", not "is it valid here".
            if (auto valid = tx::validate(t, chain_id); !valid) {
                errors[i] = valid.error();
                bad.record(i);
                break;  // the later ones of the group cannot be the lowest failure
            }
            if (cache != nullptr) {
                if (i + kPrefetchAhead < n) cache->prefetch(b.tx_hashes[i + kPrefetchAhead]);
                if (auto hit = cache->find(b.tx_hashes[i])) {
                    b.senders[i] = *hit;
                    continue;
                }
            }
            misses[count] = &t;
            at[count++] = i;
        }
        std::array<Expected<Address, tx::TxError>, kRecoverGroup> senders;
        tx::recover_senders(std::span{misses}.first(count), senders);
        for (size_t k = 0; k < count; ++k) {
            const size_t i = at[k];
            if (!senders[k]) {
                errors[i] = senders[k].error();
                bad.record(i);
                return;
            }
            b.senders[i] = *senders[k];
            if (cache != nullptr) cache->insert(b.tx_hashes[i], *senders[k]);
        }
    });
    if (!bad.any()) return {};
    b.senders.clear();  // a half-verified block must not look verified
    BlockError e;
    e.code = BlockErrorCode::invalid_tx;
    e.tx_index = bad.lowest();
    e.tx = errors[bad.lowest()];
    return unexpected(e);
}

}  // namespace barrel::block
