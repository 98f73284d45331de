// A node's use of libbarrel, built against the installed package only (find_package(barrel)).
//
// A proposer makes block 1 (three signed transfers between two funded accounts) and seals it the
// way any producer does: decode_block → recover_senders → exec::execute against the parent
// state, roots and gas into the header. An importer commits it with Pipeline::import_block into
// a fresh datadir. Then a consensus round on block 2: Pipeline::check_proposal must compute the
// proposer's roots without writing anything, a copy with a wrong state root must be refused, and
// the sealed block must import. Exit status 0 only if every root agrees.
//
// Usage: consumer [datadir]   (must not exist; a fresh temporary directory by default)

#include <barrel/barrel.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using namespace barrel;

constexpr uint64_t kChainId = 1337;
constexpr uint64_t kGwei = 1'000'000'000;

int fail(const std::string& message) {
    std::fprintf(stderr, "consumer: %s\n", message.c_str());
    return 1;
}

/// A fixed secret: keccak256 of a name (both names give valid secp256k1 keys).
Hash secret_of(std::string_view name) { return keccak256(as_bytes(name)); }

struct Transfer {
    const Hash* key;
    uint64_t nonce;
    Address to;
    uint64_t value;
};

/// Signed EIP-155 legacy transfers, encoded for the wire.
std::optional<std::vector<Bytes>> sign_transfers(const std::vector<Transfer>& transfers) {
    std::vector<Bytes> encodings;
    for (const Transfer& t : transfers) {
        tx::Transaction tx;
        tx.type = tx::TxType::legacy;
        tx.chain_id = kChainId;
        tx.nonce = t.nonce;
        tx.max_fee_per_gas = tx.max_priority_fee_per_gas = kGwei;
        tx.gas_limit = 21'000;
        tx.to = t.to;
        tx.value = t.value;
        if (!tx::sign(tx, *t.key)) return std::nullopt;
        encodings.push_back(tx::encode(tx));
    }
    return encodings;
}

struct Sealed {
    Bytes wire;
    block::Header header;
    exec::Outcome outcome;
};

/// What a block producer does: execute the block against its parent state and write the results
/// into the header. Goes through the same stages an importer runs.
Expected<Sealed, std::string> seal(block::Header header, const std::vector<Bytes>& encodings,
                                   const state::StateReader& parent,
                                   const state::Lattice& parent_lattice,
                                   const chain::Genesis& genesis) {
    const std::vector<BytesView> views(encodings.begin(), encodings.end());
    auto decoded = block::decode_block(block::encode_block(header, views));
    if (!decoded) return unexpected("decode: " + block::describe(decoded.error()));
    if (auto verified = block::recover_senders(*decoded, genesis.config.chain_id, nullptr);
        !verified)
        return unexpected("verify: " + block::describe(verified.error()));
    auto outcome = exec::execute(*decoded, parent, parent_lattice, genesis.config);
    if (!outcome) return unexpected("execute: " + exec::describe(outcome.error()));
    header.gas_used = outcome->gas_used;
    header.txs_root = outcome->txs_root;
    header.receipts_root = outcome->receipts_root;
    header.state_root = outcome->state_root;
    Sealed s{block::encode_block(header, views), header, std::move(outcome).value()};
    return s;
}

block::Header child_header(const Hash& parent_hash, uint64_t number,
                           const chain::Genesis& genesis) {
    block::Header h;
    h.parent_hash = parent_hash;
    h.number = number;
    h.timestamp = genesis.timestamp + 2 * number;
    h.coinbase = genesis.coinbase;
    h.gas_limit = genesis.gas_limit;
    h.chain_id = genesis.config.chain_id;
    return h;
}

std::filesystem::path fresh_datadir() {
    std::random_device random;
    return std::filesystem::temp_directory_path() /
           ("barrel-consumer-" + std::to_string(random()) + std::to_string(random()));
}

int run(const std::filesystem::path& datadir) {
    // ---- genesis: two funded accounts ---------------------------------------------------------
    const Hash alice_key = secret_of("barrel consumer: alice");
    const Hash bob_key = secret_of("barrel consumer: bob");
    const auto alice = tx::address_of(alice_key);
    const auto bob = tx::address_of(bob_key);
    if (!alice || !bob) return fail("a fixed secret is not a valid secp256k1 key");

    chain::Genesis genesis;
    genesis.config.chain_id = kChainId;
    genesis.timestamp = 1'700'000'000;
    genesis.coinbase =
        Address::from_view(keccak256(as_bytes("barrel consumer: coinbase")).view().first(20));
    const u256 funds = u256{1'000'000} * kGwei * kGwei;  // 10^6 ether
    genesis.alloc.accounts = {{*alice, {0, funds}}, {*bob, {0, funds}}};
    std::sort(genesis.alloc.accounts.begin(), genesis.alloc.accounts.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });

    // ---- the importer: a datadir and a pipeline ---------------------------------------------
    auto store = store::Store::init(datadir, genesis);
    if (!store) return fail("init " + datadir.string() + ": " + store.error().message);
    block::SenderCache senders{1024};
    pipeline::Pipeline pipeline{**store, pipeline::Config{.sender_cache = &senders}};
    const store::Head genesis_head = (*store)->head();
    if (genesis_head.hash != block::hash_of(chain::genesis_header(genesis)))
        return fail("the store's block 0 is not genesis_header(genesis)");

    // ---- block 1: sealed by the proposer, imported by the pipeline --------------------------
    auto txs1 = sign_transfers(
        {{&alice_key, 0, *bob, 1'000}, {&bob_key, 0, *alice, 500}, {&alice_key, 1, *bob, 7}});
    if (!txs1) return fail("signing failed");
    state::MemoryState proposer_state = chain::genesis_state(genesis);
    auto block1 = seal(child_header(genesis_head.hash, 1, genesis), *txs1, proposer_state,
                       chain::genesis_lattice(genesis), genesis);
    if (!block1) return fail("seal block 1: " + block1.error());

    auto imported1 = pipeline.import_block(block1->wire);
    if (!imported1) return fail(pipeline::describe(imported1.error()));
    if ((*store)->head().number != 1 || (*store)->head().state_root != block1->header.state_root)
        return fail("head after block 1 is not block 1's state");
    proposer_state.apply(block1->outcome.writes);
    std::printf(
        "block 1: %zu transactions, %s, decode %.2f verify %.2f execute %.2f commit %.2f ms\n",
        imported1->transactions, to_hex(imported1->hash).c_str(), imported1->times.decode_ms,
        imported1->times.verify_ms, imported1->times.execute_ms, imported1->times.commit_ms);

    // ---- block 2: a consensus round --------------------------------------------------------
    auto txs2 = sign_transfers({{&bob_key, 1, *alice, 42}, {&alice_key, 2, *alice, 0}});
    if (!txs2) return fail("signing failed");
    auto block2 = seal(child_header(imported1->hash, 2, genesis), *txs2, proposer_state,
                       block1->outcome.lattice, genesis);
    if (!block2) return fail("seal block 2: " + block2.error());

    // The validator executes the proposal against its own head and compares with the header.
    auto check = pipeline.check_proposal(block2->wire);
    if (!check) return fail(pipeline::describe(check.error()));
    const exec::Outcome& mine = check->outcome;
    const block::Header& proposed = block2->header;
    const bool vote =
        mine.state_root == proposed.state_root && mine.txs_root == proposed.txs_root &&
        mine.receipts_root == proposed.receipts_root && mine.gas_used == proposed.gas_used;
    std::printf("proposal 2: %s, state root %s: vote %s\n", to_hex(check->block_hash).c_str(),
                to_hex(mine.state_root).c_str(), vote ? "yes" : "no");
    if (!vote) return fail("check_proposal disagrees with the proposer's roots");
    if ((*store)->head().number != 1) return fail("check_proposal wrote to the store");

    // A proposal sealed with a wrong state root is refused whole, and nothing of it is written.
    block::Header forged = proposed;
    forged.state_root[0] ^= 0x01;
    const std::vector<BytesView> views2(txs2->begin(), txs2->end());
    auto refused = pipeline.import_block(block::encode_block(forged, views2));
    if (refused || refused.error().stage != pipeline::Stage::seal)
        return fail("a block with a wrong state root was not refused at the seal stage");
    std::printf("forged block 2 refused: %s\n", pipeline::describe(refused.error()).c_str());
    if ((*store)->head().number != 1) return fail("a refused block changed the head");

    // Committed by consensus: import it.
    auto imported2 = pipeline.import_block(block2->wire);
    if (!imported2) return fail(pipeline::describe(imported2.error()));

    const store::Head& head = (*store)->head();
    std::printf("head: block %llu %s state root %s\n", static_cast<unsigned long long>(head.number),
                to_hex(head.hash).c_str(), to_hex(head.state_root).c_str());
    if (head.number != 2 || head.hash != imported2->hash || head.state_root != proposed.state_root)
        return fail("head after block 2 is not block 2's state");

    // The committed state reads back through the store's StateReader.
    const auto bob_account = (*store)->account(*bob);
    if (!bob_account) return fail(bob_account.error().message);
    if (!*bob_account || (*bob_account)->nonce != 2)
        return fail("bob's nonce is not 2 after his two transfers");

    const auto stats = senders.stats();
    std::printf("sender cache: %llu hits, %llu misses\n",
                static_cast<unsigned long long>(stats.hits),
                static_cast<unsigned long long>(stats.misses));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::filesystem::path datadir =
        argc > 1 ? std::filesystem::path{argv[1]} : fresh_datadir();
    const int status = run(datadir);
    if (status == 0) {
        std::error_code ignored;
        std::filesystem::remove_all(datadir, ignored);
        std::printf("ok\n");
    } else {
        std::fprintf(stderr, "consumer: datadir kept: %s\n", datadir.string().c_str());
    }
    return status;
}
