#pragma once
// One load run against a node: the workload signed before any clock starts, then sent as
// JSON-RPC batches of eth_sendRawTransaction over keep-alive connections while a poller watches
// the blocks for the transactions' hashes, then checked (outside the timing) against the final
// nonces and the receipts. The sends and the watch are the network run's (net_shared.hpp), on
// one endpoint.

#include <barrel/core/bytes.hpp>

#include "common/recover_loop.hpp"
#include "metrics_text.hpp"
#include "responses.hpp"
#include "rpc_client.hpp"
#include "schedule.hpp"
#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace barrel::load {

struct Config {
    size_t txs{100'000};
    size_t senders{500};
    size_t batch{100};
    size_t connections{4};
    double rate{0};    ///< transactions per second offered; 0: as fast as the node answers
    size_t window{0};  ///< most transactions sent and not yet mined; 0: no bound
    std::chrono::milliseconds poll{5};
    /// Woken by the node's pushed heads (heads.hpp), polling every `poll` only where there are
    /// none; false: polling every `poll` throughout.
    bool push_heads{true};
    std::chrono::seconds stall{60};  ///< give up when nothing moves for this long
    size_t ceiling_threads{1};
    /// Gas price of every transfer, in gwei: 1 suits barrel-node (no base fee); a node whose base
    /// fee rises under load (go-ethereum's dev mode) needs more, or its pool stops including them.
    uint64_t gas_price_gwei{1};
    /// After the clock, the receipt of every this-many-th mined transaction is checked (1: all).
    /// go-ethereum answers a receipt by deriving its whole block's, so a sample keeps the check
    /// of 100,000 transactions in large blocks to seconds there.
    size_t receipt_stride{1};
    std::string label;  ///< prefix of the progress line ("run 1/3")
};

/// The signed transactions and everything the run needs of them, made before the clock starts.
struct Workload {
    std::vector<Address> senders;
    std::vector<uint64_t> start_nonces;  ///< per sender: the nonce of its first transaction
    std::vector<Hash> hashes;            ///< per transaction
    std::vector<uint32_t> sizes;         ///< per transaction: its encoding's bytes
    HashIndex index_of;                  ///< into hashes
    std::vector<std::vector<Batch>> schedule;
    /// Per connection, per batch: the request body, a JSON-RPC batch whose ids are the
    /// transactions' indices.
    std::vector<std::vector<std::string>> bodies;
    bench::RecoverLoop recover_loop;
};

/// Signs `config.txs` transfers: transaction i from sender i % S (the key of generated account
/// i % S under `seed`) with nonce start_nonces[sender] + i / S, to one of `recipients`, 1 gwei
/// at a gas price of config.gas_price_gwei, for chain `chain_id`. In parallel (oneTBB).
Workload prepare(const Config& config, uint64_t seed, uint64_t chain_id,
                 const std::vector<Address>& recipients, std::vector<uint64_t> start_nonces);

/// The senders' addresses (generated accounts 0 to senders - 1 of `seed`).
std::vector<Address> sender_addresses(uint64_t seed, size_t senders);

constexpr std::array<const char*, 4> kStages{"decode", "verify", "execute", "commit"};

struct RunResult {
    size_t txs{0}, accepted{0}, rejected{0}, mined{0}, mined_twice{0}, not_mined{0};
    std::map<std::string, size_t> rejections;  ///< by the node's message, up to its first ": "
    size_t blocks{0};                          ///< blocks that held any of the transactions
    double submit_seconds{0}, end_to_end_seconds{0};
    double submit_tps{0}, end_to_end_tps{0};
    double latency_p50_ms{0}, latency_p95_ms{0}, latency_p99_ms{0}, latency_max_ms{0};
    /// Per stage, from /metrics: mean ms per sealed block and µs per transaction sealed.
    std::array<std::optional<double>, 4> stage_ms_per_block, stage_us_per_tx;
    std::optional<double> sender_cache_hit_rate;
    double ceiling_tps{0}, ceiling_ratio{0};
    std::optional<double> node_cpu_us_per_tx;
    double generator_cpu_us_per_tx{0};
    std::optional<double> node_rss_mib_first_minute, node_rss_mib_end;
    bool nonces_ok{false}, receipts_ok{false};
    size_t bad_nonces{0}, bad_receipts{0};
    /// Every 100 ms from the first send: seconds, transactions answered, transactions mined.
    std::vector<std::array<double, 3>> timeline;

    bool passed() const {
        return rejected == 0 && mined == txs && mined_twice == 0 && nonces_ok && receipts_ok;
    }
};

/// Runs the workload against the node at `url` whose head is `start_head`; `node_pid`, if the
/// node is this program's, for its CPU time and memory.
RunResult run_load(const Config& config, const Workload& workload, const HttpUrl& url,
                   uint64_t start_head, std::optional<pid_t> node_pid);

}  // namespace barrel::load
