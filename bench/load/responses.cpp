#include "responses.hpp"

#include <barrel/core/hex.hpp>

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

namespace barrel::load {

namespace dom = simdjson::dom;

namespace {

std::string not_json(std::string_view body) {
    return "the response is not JSON: " + std::string{body.substr(0, 200)};
}

std::string batch_mismatch(std::string_view body, size_t calls, std::string_view unit) {
    return "a batch of " + std::to_string(calls) + std::string{unit} + " was answered by " +
           std::string{body.substr(0, 200)};
}

/// An error object's message, or "(no message)" when it has none that is a string (or the
/// error is no object).
std::string error_message(dom::element error) {
    std::string_view text;
    if (error["message"].get_string().get(text)) return "(no message)";
    return std::string{text};
}

}  // namespace

std::optional<Hash> hash_of_hex(std::string_view text) noexcept {
    // core's reader takes the prefix as optional; an answer's hash always has it.
    if (text.size() != 66 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X'))
        return std::nullopt;
    const auto hash = hash_from_hex(text);
    return hash ? std::optional{*hash} : std::nullopt;
}

struct ResponseReader::Impl {
    dom::parser parser;
    /// The body and simdjson's padding after it, zeroed (the parser reads past the end).
    std::string padded;

    /// The whole document, validated (structure, strings, numbers, UTF-8).
    simdjson::simdjson_result<dom::element> parse(std::string_view body) {
        padded.resize(body.size() + simdjson::SIMDJSON_PADDING);
        std::memcpy(padded.data(), body.data(), body.size());
        std::memset(padded.data() + body.size(), 0, simdjson::SIMDJSON_PADDING);
        return parser.parse(padded.data(), body.size(), false);
    }

    /// The body as a batch of `calls` answers; `unit` names them in the error ("", " calls").
    Expected<dom::array, std::string> batch(std::string_view body, size_t calls,
                                            std::string_view unit) {
        dom::element doc;
        if (parse(body).get(doc)) return unexpected(not_json(body));
        dom::array array;
        if (doc.get_array().get(array) || array.size() != calls)
            return unexpected(batch_mismatch(body, calls, unit));
        return array;
    }
};

namespace {
/// An answer's id, once it is seen to be an object that has one.
Expected<uint64_t, std::string> answer_id(dom::element answer) {
    if (!answer.is_object()) return unexpected(std::string{"an answer is not an object"});
    const auto field = answer["id"];
    if (field.error()) return unexpected(std::string{"an answer has no id"});
    uint64_t id = 0;
    if (field.get_uint64().get(id))
        return unexpected(std::string{"an answer's id is not a number"});
    return id;
}
}  // namespace

ResponseReader::ResponseReader() : m_impl{std::make_unique<Impl>()} {}
ResponseReader::~ResponseReader() = default;

Expected<std::vector<SendAnswer>, std::string> ResponseReader::send_answers(std::string_view body,
                                                                            size_t calls) {
    const auto array = m_impl->batch(body, calls, "");
    if (!array) return unexpected(array.error());
    std::vector<SendAnswer> out;
    out.reserve(calls);
    for (const dom::element element : *array) {
        const auto id = answer_id(element);
        if (!id) return unexpected(id.error());
        SendAnswer answer;
        answer.id = *id;
        dom::element error;
        std::string_view text;
        if (!element["error"].get(error))
            answer.error = error_message(error);
        else if (!element["result"].get_string().get(text))
            answer.hash = hash_of_hex(text);  // anything else: counted as another hash
        out.push_back(std::move(answer));
    }
    return out;
}

namespace {
/// The `result` of a single JSON-RPC answer, or its error's message (and data, if any).
Expected<dom::element, std::string> single_result(dom::element doc, std::string* data) {
    if (!doc.is_object()) return unexpected(std::string{"the answer is not an object"});
    dom::element error;
    if (!doc["error"].get(error)) {
        std::string_view text;
        if (data != nullptr && !error["data"].get_string().get(text)) *data = std::string{text};
        return unexpected(error_message(error));
    }
    dom::element result;
    if (doc["result"].get(result))
        return unexpected(std::string{"the answer has neither result nor error"});
    return result;
}

constexpr std::string_view kPastHeight = "must be less than or equal to the current blockchain";
}  // namespace

Expected<std::optional<EthBlock>, std::string> ResponseReader::eth_block(std::string_view body) {
    dom::element doc;
    if (m_impl->parse(body).get(doc)) return unexpected(not_json(body));
    const auto result = single_result(doc, nullptr);
    if (!result) return unexpected(result.error());
    if (result->is_null()) return std::optional<EthBlock>{};
    std::string_view hash_text;
    dom::array list;
    if ((*result)["hash"].get_string().get(hash_text))
        return unexpected(std::string{"a block has no hash"});
    if ((*result)["transactions"].get_array().get(list))
        return unexpected(std::string{"a block has no transactions list"});
    EthBlock block;
    const auto hash = hash_of_hex(hash_text);
    if (!hash)
        return unexpected("a block hash is not 0x and 64 hex digits: " +
                          std::string{hash_text.substr(0, 80)});
    block.hash = *hash;
    block.transactions.reserve(list.size());
    for (const dom::element h : list) {
        std::string_view text;
        const auto tx = h.get_string().get(text) ? std::nullopt : hash_of_hex(text);
        if (!tx) return unexpected(std::string{"a block's transaction is not a hash"});
        block.transactions.push_back(*tx);
    }
    return std::optional<EthBlock>{std::move(block)};
}

Expected<std::optional<CometBlock>, std::string> ResponseReader::comet_block(
    std::string_view body) {
    dom::element doc;
    if (m_impl->parse(body).get(doc)) return unexpected(not_json(body));
    std::string data;
    const auto result = single_result(doc, &data);
    if (!result) {
        if (data.find(kPastHeight) != std::string::npos) return std::optional<CometBlock>{};
        return unexpected(result.error() + (data.empty() ? "" : ": " + data));
    }
    std::string_view hash;
    if ((*result)["block_id"]["hash"].get_string().get(hash))
        return unexpected(std::string{"a block has no block_id.hash"});
    CometBlock block;
    block.hash = std::string{hash};
    dom::element txs;
    if ((*result)["block"]["data"]["txs"].get(txs))
        return unexpected(std::string{"a block has no data.txs"});
    if (txs.is_null()) return std::optional<CometBlock>{std::move(block)};
    dom::array list;
    if (txs.get_array().get(list)) return unexpected(std::string{"data.txs is not a list"});
    block.transactions.reserve(list.size());
    for (const dom::element t : list) {
        std::string_view text;
        if (t.get_string().get(text)) return unexpected(std::string{"a tx is not a string"});
        block.transactions.emplace_back(text);
    }
    return std::optional<CometBlock>{std::move(block)};
}

namespace {
/// A broadcast_tx_async answer (one element of the batch).
Expected<SendAnswer, std::string> broadcast_answer(dom::element element) {
    const auto id = answer_id(element);
    if (!id) return unexpected(id.error());
    SendAnswer answer;
    answer.id = *id;
    dom::element error;
    if (!element["error"].get(error)) {
        std::string_view data;
        answer.error =
            error["data"].get_string().get(data) ? error_message(error) : std::string{data};
    } else if (element["result"].error()) {
        return unexpected(std::string{"an answer has neither result nor error"});
    }
    return answer;
}
}  // namespace

Expected<std::vector<SendAnswer>, std::string> ResponseReader::broadcast_answers(
    std::string_view body, size_t calls) {
    std::vector<SendAnswer> out;
    dom::element doc;
    if (m_impl->parse(body).get(doc)) return unexpected(not_json(body));
    // CometBFT answers a batch of one call as that call's answer, not as a list.
    if (doc.is_object() && calls == 1) {
        auto answer = broadcast_answer(doc);
        if (!answer) return unexpected(answer.error());
        out.push_back(std::move(*answer));
        return out;
    }
    dom::array array;
    if (doc.get_array().get(array) || array.size() != calls)
        return unexpected(batch_mismatch(body, calls, ""));
    out.reserve(calls);
    for (const dom::element element : array) {
        auto answer = broadcast_answer(element);
        if (!answer) return unexpected(answer.error());
        out.push_back(std::move(*answer));
    }
    return out;
}

HashIndex::HashIndex(std::span<const Hash> hashes) {
    // At most half full: a miss ends at an empty slot within a probe or two.
    const size_t capacity = std::bit_ceil(std::max<size_t>(2 * hashes.size(), 16));
    m_slots.resize(capacity);
    m_mask = capacity - 1;
    for (size_t i = 0; i < hashes.size(); ++i) {
        uint64_t prefix = 0;
        std::memcpy(&prefix, hashes[i].data(), sizeof prefix);
        size_t slot = prefix & m_mask;
        while (m_slots[slot].index_plus_one != 0) slot = (slot + 1) & m_mask;
        m_slots[slot] = {prefix, static_cast<uint32_t>(i + 1)};
    }
}

std::optional<uint32_t> HashIndex::find(const Hash& hash,
                                        std::span<const Hash> hashes) const noexcept {
    if (m_slots.empty()) return std::nullopt;
    uint64_t prefix = 0;
    std::memcpy(&prefix, hash.data(), sizeof prefix);
    for (size_t slot = prefix & m_mask; m_slots[slot].index_plus_one != 0;
         slot = (slot + 1) & m_mask) {
        const Slot& s = m_slots[slot];
        if (s.prefix == prefix && hashes[s.index_plus_one - 1] == hash) return s.index_plus_one - 1;
    }
    return std::nullopt;
}

std::optional<std::string> check_answer_ids(std::span<const SendAnswer> answers,
                                            std::span<const uint32_t> batch,
                                            std::vector<uint8_t>& seen) {
    seen.assign(batch.size(), 0);
    for (const SendAnswer& a : answers) {
        const auto at = std::lower_bound(batch.begin(), batch.end(), a.id);
        if (at == batch.end() || *at != a.id)
            return "an answer of id " + std::to_string(a.id) + ", which the batch did not send";
        if (seen[static_cast<size_t>(at - batch.begin())]++ != 0)
            return "two answers of id " + std::to_string(a.id);
    }
    return std::nullopt;
}

}  // namespace barrel::load
