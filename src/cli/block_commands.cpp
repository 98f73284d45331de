// `block inspect`: a wire block, a chain file or a bare transaction list from a file, decoded
// (stage 1) and verified (stage 2: stateless checks and sender recovery), printed as JSON.
//
// What the input is, is told from its bytes (docs/formats.md):
// - It is walked with the chain-file reader (cli/files.hpp). If its first item decodes as a
//   block, it is blocks: one block prints as one object, several (a chain file) as an array;
//   every item must then be a block, and anything after the last one is an error naming the
//   block index it would have.
//   (A transaction list never decodes as a block: a header is a list of ten items, while a
//   legacy transaction is a list of nine and a typed one an RLP string.)
// - Otherwise it is a bare transaction list, decoded with block::decode_tx_list: go-ethereum's
//   plain RLP list of transactions, or an offset-indexed list inside an RLP byte string (the
//   `txs` item of a block). An offset-indexed list without its RLP string header is not
//   accepted: it is not RLP, so nothing would tell it from garbage.
// - If neither decodes, the error says so and gives the block's reason, unless the input is
//   shaped like a transaction list (an RLP string; or a list whose first item is an RLP string or
//   a list of nine items, or whose first bad transaction is not the first one), then the list's.

#include <barrel/block/block.hpp>
#include <barrel/cli/cli.hpp>
#include <barrel/cli/files.hpp>
#include <barrel/json/conventions.hpp>
#include <barrel/json/tx_json.hpp>
#include <barrel/rlp/decode.hpp>
#include <barrel/store/documents.hpp>
#include <barrel/store/store.hpp>

#include "command.hpp"
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <istream>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace barrel::cli {

namespace {

using nlohmann::json;

constexpr uint64_t kDefaultChainId = 1;
/// Items in a legacy transaction's list.
constexpr size_t kLegacyTxFields = 9;

// ---- Input -----------------------------------------------------------------------------------

/// The largest input, in all: a block's limit (docs/formats.md, "Limits"). Every block's JSON is
/// held until the array is printed, so a chain file has the same bound.
constexpr size_t kMaxInputBytes = store::Options::kMaxBlockBytes;
static_assert(kMaxInputBytes == 1073741824, "block inspect --help names the limit");

/// FILE, or standard input for "-", split by the chain-file reader (files.hpp): blocks, the last
/// item perhaps the undecodable rest.
ChainReader open_input(Context& ctx, std::string_view path) {
    if (path == "-") return ChainReader{ctx.in, kMaxInputBytes};
    const std::string name{path};
    auto opened = ChainReader::open(name, kMaxInputBytes);
    if (!opened) fail("cannot read " + name + ": " + opened.error().reason);
    return std::move(opened).value();
}

/// The next item of the input, or nothing at its end. A block over the limit is named by its
/// index from 0, as every error in a chain file.
std::optional<Bytes> next_item(ChainReader& reader, size_t& total) {
    auto item = reader.next();
    if (!item) {
        const ChainReadError& e = item.error();
        if (e.block) fail("block " + std::to_string(*e.block) + ": " + e.reason);
        fail(e.reason);
    }
    if (*item) {
        total += (*item)->size();
        if (total > kMaxInputBytes) fail("input is " + over_limit(kMaxInputBytes));
    }
    return std::move(*item);
}

/// The number of items in an RLP list payload, or nothing if it does not split into items.
std::optional<size_t> count_items(BytesView payload) {
    size_t n = 0;
    while (!payload.empty()) {
        auto h = rlp::decode_header(payload);
        if (!h) return std::nullopt;
        payload = payload.subspan(h->payload_length);
        ++n;
    }
    return n;
}

/// Whether input that decodes neither as blocks nor as a transaction list looks more like the
/// latter, so that its error is the one worth reporting (see the top of the file).
bool shaped_like_tx_list(BytesView input, const block::BlockError& list_error) {
    if (list_error.tx_index && *list_error.tx_index > 0 &&
        (list_error.code == block::BlockErrorCode::malformed_tx ||
         list_error.code == block::BlockErrorCode::slot_trailing_bytes))
        return true;  // transaction 0 decoded as a transaction, which no header does
    const uint8_t first = input[0];
    if (first < 0x80) return false;  // a single byte: neither
    if (first < 0xc0) return true;   // an RLP string: only an offset-indexed list can be one
    BytesView rest = input;
    const auto outer = rlp::decode_header(rest);
    if (!outer) return false;
    BytesView payload = rest.first(outer->payload_length);
    if (payload.empty()) return true;
    const auto inner = rlp::decode_header(payload);
    if (!inner) return false;
    if (!inner->list) return true;  // a typed transaction; a header is a list
    return count_items(payload.first(inner->payload_length)) == kLegacyTxFields;
}

// ---- Verification ----------------------------------------------------------------------------

/// Where the chain id a transaction list is verified against came from.
struct ChainIdSource {
    uint64_t chain_id{kDefaultChainId};
    bool from_option{false};
    std::optional<size_t> from_tx;  ///< the index of the transaction it was taken from
};

/// describe(error), and for a transaction signed for another chain, which chains disagree.
std::string verify_error(const block::Block& b, const block::BlockError& e,
                         const ChainIdSource& expected) {
    std::string message = block::describe(e);
    if (e.code == block::BlockErrorCode::wrong_chain_id && b.header) {
        message += " (block chain id " + std::to_string(b.header->chain_id) + ", --chain-id is " +
                   std::to_string(expected.chain_id) + ")";
    } else if (e.code == block::BlockErrorCode::invalid_tx &&
               e.tx.code == tx::TxErrorCode::wrong_chain_id && e.tx_index &&
               b.txs[*e.tx_index].chain_id) {
        message += " (signed for chain " + std::to_string(*b.txs[*e.tx_index].chain_id);
        if (b.header)
            message += ", block chain id " + std::to_string(b.header->chain_id) + ")";
        else if (expected.from_option)
            message += ", --chain-id is " + std::to_string(expected.chain_id) + ")";
        else
            message += ", transaction " + std::to_string(expected.from_tx.value_or(0)) +
                       " for chain " + std::to_string(expected.chain_id) + "; see --chain-id)";
    }
    return message;
}

// ---- JSON ------------------------------------------------------------------------------------

/// The header as the datadir stores it (store::header_document, the one header serializer),
/// with its hash and transaction count lifted out beside it: block inspect's object is {header,
/// hash, transaction_count, transactions}.
void put_header(json& doc, const block::Block& b) {
    json header = json::parse(store::header_document(*b.header, b.hash, b.size()));
    doc["hash"] = std::move(header["hash"]);
    header.erase("hash");
    header.erase("transaction_count");
    doc["header"] = std::move(header);
}

json block_json(const block::Block& b) {
    json txs = json::array();
    for (size_t i = 0; i < b.size(); ++i)
        txs.push_back(to_json(b.txs[i], b.tx_hashes[i], b.senders[i]));
    json doc;
    if (b.header) {
        put_header(doc, b);
    } else {
        doc["header"] = nullptr;
        doc["hash"] = nullptr;
    }
    doc["transaction_count"] = json_quantity(uint64_t{b.size()});
    doc["transactions"] = std::move(txs);
    return doc;
}

// ---- The command -----------------------------------------------------------------------------

/// A wire block or a chain file, `first` decoded from its first item: each block decoded and
/// verified as it is read, so that the first bad one stops the reading.
void inspect_blocks(Context& ctx, ChainReader& reader, size_t& total, block::Block first,
                    std::optional<uint64_t> option_chain_id) {
    json out = json::array();
    Expected<block::Block, block::BlockError> decoded{std::move(first)};
    for (size_t k = 0;; ++k) {
        block::Block& b = *decoded;
        const ChainIdSource expected{option_chain_id.value_or(b.header->chain_id),
                                     option_chain_id.has_value(), std::nullopt};
        auto item = next_item(reader, total);
        // "block K: " prefixes every error once there is more than one block.
        const auto at_block = [&] {
            return k > 0 || item ? "block " + std::to_string(k) + ": " : std::string{};
        };
        if (auto ok = block::recover_senders(b, expected.chain_id, nullptr); !ok)
            fail(at_block() + verify_error(b, ok.error(), expected));
        out.push_back(block_json(b));
        if (!item) break;
        decoded = block::decode_block(std::move(*item));
        if (!decoded)
            fail("block " + std::to_string(k + 1) + ": " + block::describe(decoded.error()));
    }
    ctx.out << (out.size() > 1 ? out : out[0]).dump(2) << "\n";
}

/// The chain id a transaction list's signatures are checked against: the option's, else the
/// first transaction's that has one.
ChainIdSource list_chain_id(const block::Block& b, std::optional<uint64_t> option_chain_id) {
    ChainIdSource expected;
    if (option_chain_id) {
        expected.chain_id = *option_chain_id;
        expected.from_option = true;
        return expected;
    }
    for (size_t i = 0; i < b.size(); ++i) {
        if (b.txs[i].chain_id) {
            expected.chain_id = *b.txs[i].chain_id;
            expected.from_tx = i;
            break;
        }
    }
    return expected;
}

/// An input whose first item is no block: a bare transaction list, or the reason it is neither.
void inspect_tx_list(Context& ctx, ChainReader& reader, size_t& total, Bytes first_item,
                     const block::BlockError& first_block_error,
                     std::optional<uint64_t> option_chain_id) {
    // What follows a list that is no block is trailing bytes; one more item shows them to the
    // decoder (the reader keeps no more than a look past what is not a list).
    Bytes input = std::move(first_item);
    const auto second = next_item(reader, total);
    const bool several = second.has_value();
    if (second) input.insert(input.end(), second->begin(), second->end());
    auto list = block::decode_tx_list(input);
    if (!list) {
        // A block or a list with a bad transaction is that, and the error names the transaction.
        // Otherwise say what the input is not, then why in the reading it is closest to: a bare
        // "truncated_index" told nobody that the file was taken for a transaction list.
        const bool as_list = shaped_like_tx_list(input, list.error());
        const block::BlockError& e = as_list ? list.error() : first_block_error;
        if (e.tx_index)
            fail((as_list || !several ? std::string{} : "block 0: ") + block::describe(e));
        fail("not a block, chain file or transaction list; as " +
             std::string{as_list   ? "a transaction list"
                         : several ? "block 0"
                                   : "a block"} +
             ": " + block::describe(e));
    }
    block::Block& b = *list;
    const ChainIdSource expected = list_chain_id(b, option_chain_id);
    if (auto ok = block::recover_senders(b, expected.chain_id, nullptr); !ok)
        fail(verify_error(b, ok.error(), expected));
    ctx.out << block_json(b).dump(2) << "\n";
}

int block_inspect(Context& ctx, const ParsedArgs& args) {
    std::optional<uint64_t> option_chain_id;
    if (const auto v = args.value("--chain-id"))
        option_chain_id = parse_u64_option("--chain-id", *v);

    ChainReader reader = open_input(ctx, args.positionals[0]);
    size_t total = 0;
    auto first_item = next_item(reader, total);
    if (!first_item) fail("empty input");
    auto first = block::decode_block(*first_item);
    if (first)
        inspect_blocks(ctx, reader, total, std::move(first).value(), option_chain_id);
    else
        inspect_tx_list(ctx, reader, total, std::move(*first_item), first.error(), option_chain_id);
    return kExitOk;
}

}  // namespace

Command block_inspect_command() {
    return {
        .name = "block inspect",
        .summary = "Decode and verify a block, chain file or transaction list; print it as JSON",
        .args = {{"FILE", "The binary input; '-' reads stdin"}},
        .options =
            {{"--chain-id", "N",
              "Verify against chain N (default: a block's own; a list's first chain id, else 1)"}},
        .details =
            "FILE holds one of (docs/formats.md):\n"
            "  - a wire block, printed as one object;\n"
            "  - a chain file, wire blocks concatenated, printed as an array of objects;\n"
            "  - a bare transaction list: a plain RLP list of transactions as go-ethereum encodes\n"
            "    []*types.Transaction, or an offset-indexed list in an RLP byte string (a block's\n"
            "    txs item). An offset-indexed list without that RLP header is not accepted.\n"
            "The input is blocks if its first RLP item decodes as a block, else a transaction "
            "list.\n"
            "Every transaction is decoded, checked statelessly (signature, EIP-2 low s, chain id,\n"
            "intrinsic gas, fee caps) and has its sender recovered. Blocks are checked against\n"
            "their own chain id (with --chain-id, a block of another chain is an error), a list\n"
            "against --chain-id, by default the chain id of its first transaction that has one,\n"
            "else 1. Each object is {header, hash, transaction_count, transactions}; header and\n"
            "hash (the block hash) are null for a transaction list, and each transaction is the\n"
            "JSON of 'tx decode' (hash and sender included).\n"
            "Errors name the reason and where it lies, e.g. 'transaction 17: malformed_tx: nonce:\n"
            "leading_zero', in a chain file prefixed by the block's index from 0 ('block 3: "
            "...').\n"
            "If the input is neither blocks nor a list, the error says so: 'not a block, chain\n"
            "file or transaction list; as a block: REASON', or '; as a transaction list: REASON'\n"
            "if the input looks like a list (an RLP string, or a list whose first item is an RLP\n"
            "string or a nine-item list).\n"
            "The input, a file or standard input, is at most 1073741824 bytes in all (the\n"
            "store's block limit, docs/formats.md \"Limits\"): a block whose prefix declares more\n"
            "is refused before it is read, 'block K: larger than the limit of 1073741824 bytes'.",
        .handler = block_inspect,
    };
}

}  // namespace barrel::cli
