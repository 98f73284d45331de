// A datadir's life: init creates it, open reads back its head and chain parameters, and closing a
// writer flushes its memtables.

#include <barrel/core/hex.hpp>
#include <barrel/store/documents.hpp>

#include "store_impl.hpp"
#include <rocksdb/write_batch.h>

#include <algorithm>

namespace barrel::store {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::optional<Head> parse_head(std::string_view text) {
    const json doc = json::parse(text, nullptr, false);
    if (!doc.is_object()) return std::nullopt;
    Head h;
    try {
        const auto n = parse_u64(doc.at("number").get<std::string>());
        const auto hash = hash_from_hex(doc.at("hash").get<std::string>());
        const auto root = hash_from_hex(doc.at("state_root").get<std::string>());
        if (!n || !hash || !root) return std::nullopt;
        h.number = *n;
        h.hash = *hash;
        h.state_root = *root;
    } catch (const json::exception&) {
        return std::nullopt;
    }
    return h;
}

/// The genesis without its allocation: what `meta/chain` holds and what an open reads, so that
/// opening never parses the account list (a genesis may hold millions of accounts).
chain::Genesis chain_parameters(const chain::Genesis& genesis) {
    chain::Genesis params = genesis;
    params.alloc = {};
    return params;
}

/// The chain parameters of an opened datadir: `meta/chain`, or for a datadir written before that
/// document existed, the whole `meta/genesis` (which a writer then splits, once).
Expected<chain::Genesis, StoreError> read_chain_parameters(Store::Impl& impl) {
    auto chain_text = impl.get(kMeta, kChainKey);
    if (!chain_text) return unexpected(chain_text.error());
    if (*chain_text) {
        auto params = chain::parse_genesis(**chain_text);
        if (!params)
            return fail(StoreErrorCode::corruption, "stored chain parameters: " + params.error());
        return *params;
    }
    auto genesis_text = impl.get(kMeta, kGenesisKey);
    if (!genesis_text) return unexpected(genesis_text.error());
    if (!*genesis_text) return fail(StoreErrorCode::corruption, "datadir has no genesis");
    auto genesis = chain::parse_genesis(**genesis_text);
    if (!genesis) return fail(StoreErrorCode::corruption, "stored genesis: " + genesis.error());
    const chain::Genesis params = chain_parameters(*genesis);
    if (!impl.options.read_only) {
        rocksdb::WriteOptions wo;
        wo.sync = true;
        const std::string text = chain::to_json_text(params);
        if (auto s = impl.db->Put(wo, impl.cfs[kMeta], slice(kChainKey), slice(text)); !s.ok())
            return from_status(s, "writing the chain parameters");
    }
    return params;
}

}  // namespace

json head_document(const Head& h) {
    return {{"number", to_hex_quantity(h.number)},
            {"hash", to_hex(h.hash)},
            {"state_root", to_hex(h.state_root)}};
}

std::string number_key(uint64_t n) {
    std::string k(8, '\0');
    for (int i = 0; i < 8; ++i) k[static_cast<size_t>(i)] = static_cast<char>(n >> (56 - 8 * i));
    return k;
}

std::string hash_key(const Hash& h) {
    std::string k{kHashPrefix};
    k.append(hash_bytes_key(h));
    return k;
}

Store::Store(std::unique_ptr<Impl> impl) : m_impl{std::move(impl)} {}

Store::~Store() {
    // The next open (a `get`, a restart) would otherwise replay every block still only in the
    // WAL. Nothing to report to: a failed flush leaves the WAL, which still recovers everything.
    if (!m_impl->options.read_only) (void)flush();
}

Expected<void, StoreError> Store::flush() {
    rocksdb::FlushOptions fo;
    fo.wait = true;
    if (auto s = m_impl->db->Flush(fo, m_impl->cfs); !s.ok()) return from_status(s, "flush");
    return {};
}

const Head& Store::head() const noexcept { return m_impl->head; }
const chain::Genesis& Store::genesis() const noexcept { return m_impl->genesis; }

Expected<std::unique_ptr<Store>, StoreError> Store::init(const fs::path& path,
                                                         const chain::Genesis& genesis,
                                                         const Options& options) {
    std::error_code ec;
    if (fs::exists(path, ec)) {
        if (!fs::is_directory(path, ec))
            return fail(StoreErrorCode::already_initialized,
                        path.string() + " exists and is not a directory");
        if (!fs::is_empty(path, ec))
            return fail(StoreErrorCode::already_initialized, path.string() + " is not empty");
    }
    auto opened = Impl::open_db(path, true, options);
    if (!opened) return unexpected(opened.error());
    auto impl = std::move(opened).value();

    const block::Header h0 = chain::genesis_header(genesis);
    const Hash hash0 = block::hash_of(h0);
    const chain::Genesis params = chain_parameters(genesis);
    rocksdb::WriteBatch batch;
    auto put = [&](size_t cf, std::string_view k, std::string_view v) {
        return batch.Put(impl->cfs[cf], slice(k), slice(v));
    };
    std::vector<rocksdb::Status> statuses;
    statuses.push_back(put(kMeta, kFormatKey, kFormat));
    statuses.push_back(put(kMeta, kGenesisKey, chain::to_json_text(genesis)));
    statuses.push_back(put(kMeta, kChainKey, chain::to_json_text(params)));
    statuses.push_back(put(kHeaders, number_key(0), header_document(h0, hash0, 0)));
    statuses.push_back(put(kMeta, hash_key(hash0), number_key(0)));
    for (const auto& [address, account] : genesis.alloc.accounts)
        statuses.push_back(put(kAccounts, address_key(address), store::account_document(account)));
    for (const auto& [name, balance] : genesis.alloc.users)
        statuses.push_back(put(kUsers, name, store::user_document(name, balance)));
    const Head head{0, hash0, h0.state_root};
    statuses.push_back(put(kMeta, kHeadKey, head_document(head).dump()));
    for (const auto& s : statuses)
        if (!s.ok()) return from_status(s, "init");
    rocksdb::WriteOptions wo;
    wo.sync = true;  // a datadir that says it exists must survive a crash
    if (auto s = impl->db->Write(wo, &batch); !s.ok()) return from_status(s, "init");
    impl->head = head;
    impl->genesis = params;
    for (const auto& [address, account] : genesis.alloc.accounts)
        impl->accounts->put(address, account);
    for (const auto& [name, balance] : genesis.alloc.users) impl->users->put(name, balance);
    return std::unique_ptr<Store>{new Store{std::move(impl)}};
}

Expected<std::unique_ptr<Store>, StoreError> Store::open(const fs::path& path,
                                                         const Options& options) {
    std::error_code ec;
    if (!fs::is_directory(path, ec) || !fs::exists(path / "CURRENT", ec))
        return fail(StoreErrorCode::not_a_datadir,
                    path.string() + " is not a barrel datadir (run init first)");
    // Decide whether this is a datadir before RocksDB opens it: DB::Open writes an info LOG into
    // the directory even when it then fails, and reports a directory that merely has a CURRENT
    // file as an I/O error or corruption. Listing the column families only reads.
    std::vector<std::string> families;
    if (const auto listed =
            rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions{}, path.string(), &families);
        !listed.ok())
        return fail(StoreErrorCode::not_a_datadir,
                    path.string() + " is not a barrel datadir (" + listed.ToString() + ")");
    for (const char* name : kCfNames)
        if (std::find(families.begin(), families.end(), name) == families.end())
            return fail(StoreErrorCode::not_a_datadir,
                        path.string() + " is not a barrel datadir (no column family " + name + ")");
    auto opened = Impl::open_db(path, false, options);
    if (!opened) return unexpected(opened.error());
    auto impl = std::move(opened).value();
    auto format = impl->get(kMeta, kFormatKey);
    if (!format) return unexpected(format.error());
    if (!*format || **format != kFormat)
        return fail(StoreErrorCode::not_a_datadir,
                    path.string() + " is not a barrel datadir (unknown format)");
    auto params = read_chain_parameters(*impl);
    if (!params) return unexpected(params.error());
    impl->genesis = std::move(params).value();
    auto head_text = impl->get(kMeta, kHeadKey);
    if (!head_text) return unexpected(head_text.error());
    const auto head = *head_text ? parse_head(**head_text) : std::nullopt;
    if (!head) return fail(StoreErrorCode::corruption, "datadir has no valid head");
    impl->head = *head;
    return std::unique_ptr<Store>{new Store{std::move(impl)}};
}

}  // namespace barrel::store
