// Stage 3 (PTE) on 2,500-transaction blocks built directly (no signing): the DAG build alone, the
// write-set order of the block's keys (BM_key_order), and exec::execute under each schedule, on
// four workloads from no contention to a single chain:
//
//   low_contention  10,000 accounts, every transaction a distinct sender → recipient pair
//   hot_accounts    as above, but 30% of the transactions pay one of 4 hot accounts
//   dag_transfer    DagTransfer userTransfer between random users of 10,000, distinct senders
//   one_account     every transaction from or to one account (a chain of 2,500)
//
// BM_execute/<workload>/<schedule> runs on all threads (the default arena); .../serial_1thread in
// a one-thread arena. Time is wall-clock; CPU is the whole process's (all threads), so the
// scheduling overhead of a parallel schedule shows even where the machine is shared.
// Counters: the DAG's levels and max width, and transactions per second (wall-clock).
//
// BM_execute_speedup/<workload> measures the speedup side by side on a machine whose speed drifts:
// every iteration runs the block serially in a one-thread arena and with the default schedule on
// all threads, in alternating order. Its time is the all-threads run's; counters: the medians of
// both (ms_1thread, ms_all) and the median of the per-iteration ratios (speedup).

#include <barrel/core/keccak.hpp>
#include <barrel/exec/dag_transfer.hpp>
#include <barrel/exec/execute.hpp>

#include "exec/dag.hpp"
#include <benchmark/benchmark.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace barrel;

constexpr size_t kTxs = 2'500;
constexpr size_t kAccounts = 10'000;
constexpr size_t kUsers = 10'000;

enum class Workload : uint8_t { low_contention, hot_accounts, dag_transfer, one_account };
constexpr std::array<Workload, 4> kWorkloads = {Workload::low_contention, Workload::hot_accounts,
                                                Workload::dag_transfer, Workload::one_account};

const char* name_of(Workload w) {
    switch (w) {
        case Workload::low_contention: return "low_contention";
        case Workload::hot_accounts: return "hot_accounts";
        case Workload::dag_transfer: return "dag_transfer";
        case Workload::one_account: return "one_account";
    }
    return "?";
}

Address account(uint64_t i) {
    uint8_t seed[8];
    for (int k = 0; k < 8; ++k) seed[k] = static_cast<uint8_t>(i >> (56 - 8 * k));
    const Hash h = keccak256(BytesView{seed, sizeof seed});
    return Address::from_view(BytesView{h.data() + 12, 20});
}

struct ExecFixture {
    std::deque<Bytes> calldata;  // what the transactions' data views
    std::deque<std::string> names;
    block::Block block;
    state::MemoryState parent;
    std::vector<exec::TxKeys> keys;  // as the executor derives them, for BM_build_dag
};

tx::Transaction transfer(uint64_t nonce, const Address& to, BytesView data = {}) {
    tx::Transaction t;
    t.chain_id = 1;
    t.nonce = nonce;
    t.max_fee_per_gas = t.max_priority_fee_per_gas = 1;
    t.to = to;
    t.value = data.empty() ? 1'000 : 0;
    t.data = data;
    t.gas_limit = tx::intrinsic_gas(t);
    return t;
}

std::unique_ptr<ExecFixture> build(Workload w) {
    auto f = std::make_unique<ExecFixture>();
    std::vector<Address> accounts(kAccounts);
    for (size_t i = 0; i < kAccounts; ++i) {
        accounts[i] = account(i);
        f->parent.set_account(accounts[i], {0, u256{1} << 90});
    }
    for (size_t i = 0; i < kUsers; ++i) {
        f->names.push_back("user" + std::to_string(i));
        f->parent.set_user(f->names.back(), 1'000'000'000);
    }
    std::mt19937_64 rng{static_cast<uint64_t>(w) + 1};
    std::vector<uint64_t> nonce(kAccounts, 0);
    auto add = [&](size_t from, tx::Transaction t) {
        t.nonce = nonce[from]++;
        const uint64_t i = f->block.txs.size();
        f->block.tx_hashes.push_back(
            keccak256(BytesView{reinterpret_cast<const uint8_t*>(&i), sizeof i}));
        f->block.senders.push_back(accounts[from]);
        f->block.txs.push_back(std::move(t));
    };
    for (size_t i = 0; i < kTxs; ++i) {
        switch (w) {
            case Workload::low_contention: add(i, transfer(0, accounts[kTxs + i])); break;
            case Workload::hot_accounts:
                add(i, transfer(0, rng() % 10 < 3 ? accounts[kAccounts - 1 - rng() % 4]
                                                  : accounts[kTxs + i]));
                break;
            case Workload::dag_transfer: {
                const exec::DagCall call{exec::DagFunction::user_transfer, f->names[rng() % kUsers],
                                         f->names[rng() % kUsers], 1 + rng() % 100};
                f->calldata.push_back(exec::encode_call(call));
                add(i, transfer(0, exec::kDagTransferAddress, f->calldata.back()));
                break;
            }
            case Workload::one_account:
                if (i % 2 == 0)
                    add(0, transfer(0, accounts[1 + i]));
                else
                    add(1 + i, transfer(0, accounts[0]));
                break;
        }
    }
    block::Header h;
    h.coinbase = account(1'000'000);
    h.gas_limit = 1'000'000'000;
    h.chain_id = 1;
    f->block.header = h;

    // The executor's conflict keys: sender, then the recipient or the users a call names.
    auto view = [](const Address& a) {
        return std::string_view{reinterpret_cast<const char*>(a.data()), 20};
    };
    f->keys.resize(kTxs);
    for (size_t i = 0; i < kTxs; ++i) {
        const tx::Transaction& t = f->block.txs[i];
        f->keys[i].add(exec::KeyKind::account, view(f->block.senders[i]));
        if (*t.to == exec::kDagTransferAddress) {
            const auto call = exec::decode_call(t.data);
            f->keys[i].add(exec::KeyKind::user, call->user);
            f->keys[i].add(exec::KeyKind::user, call->to);
        } else {
            f->keys[i].add(exec::KeyKind::account, view(*t.to));
        }
    }
    return f;
}

const ExecFixture& exec_fixture(Workload w) {
    static std::array<std::unique_ptr<ExecFixture>, 4> cache;
    auto& slot = cache[static_cast<size_t>(w)];
    if (!slot) slot = build(w);
    return *slot;
}

void dag_counters(benchmark::State& state, const exec::DagStats& s) {
    state.counters["levels"] = static_cast<double>(s.levels);
    state.counters["max_width"] = static_cast<double>(s.max_width);
    state.counters["TPS"] = benchmark::Counter(static_cast<double>(kTxs),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void bm_build_dag(benchmark::State& state, Workload w) {
    const ExecFixture& f = exec_fixture(w);
    exec::DagStats stats;
    for (auto _ : state) {
        exec::Dag d = exec::build_dag(f.keys);
        stats = d.stats;
        benchmark::DoNotOptimize(d);
    }
    dag_counters(state, stats);
}

/// The write-set order of the block's distinct keys (execute computes it beside the parent-state
/// loads).
void bm_key_order(benchmark::State& state, Workload w) {
    const ExecFixture& f = exec_fixture(w);
    const exec::Dag d = exec::build_dag(f.keys);
    for (auto _ : state) {
        std::vector<uint32_t> order = exec::slots_in_key_order(d);
        benchmark::DoNotOptimize(order);
    }
    state.counters["keys"] = static_cast<double>(d.slots.size());
}

void bm_execute(benchmark::State& state, Workload w, exec::Schedule schedule, bool one_thread) {
    const ExecFixture& f = exec_fixture(w);
    const state::Lattice parent_lattice{};
    exec::DagStats stats;
    bool failed = false;
    auto body = [&] {
        for (auto _ : state) {
            auto r =
                exec::execute(f.block, f.parent, parent_lattice, exec::ChainConfig{}, {schedule});
            if (!r) {
                failed = true;
                break;
            }
            stats = r->dag;
            benchmark::DoNotOptimize(r);
        }
    };
    if (one_thread) {
        tbb::task_arena arena{1};
        arena.execute(body);
    } else {
        body();
    }
    if (failed) {
        state.SkipWithError("execute rejected the block");
        return;
    }
    dag_counters(state, stats);
    state.SetLabel(std::string{"used "} + std::string{exec::to_string(stats.used)});
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void bm_execute_speedup(benchmark::State& state, Workload w) {
    const ExecFixture& f = exec_fixture(w);
    const state::Lattice parent_lattice{};
    tbb::task_arena one_thread{1};
    std::vector<double> serial_ms, all_ms, ratios;
    bool failed = false;
    auto timed = [&](exec::Schedule schedule) {
        const auto t0 = std::chrono::steady_clock::now();
        auto r = exec::execute(f.block, f.parent, parent_lattice, exec::ChainConfig{}, {schedule});
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        failed = failed || !r;
        benchmark::DoNotOptimize(r);
        return ms;
    };
    bool serial_first = true;
    for (auto _ : state) {
        double serial = 0, all = 0;
        auto run_serial = [&] {
            one_thread.execute([&] { serial = timed(exec::Schedule::serial); });
        };
        auto run_all = [&] { all = timed(exec::Schedule::automatic); };
        if (serial_first) {
            run_serial();
            run_all();
        } else {
            run_all();
            run_serial();
        }
        serial_first = !serial_first;
        state.SetIterationTime(all / 1000);
        serial_ms.push_back(serial);
        all_ms.push_back(all);
        ratios.push_back(serial / all);
    }
    if (failed) {
        state.SkipWithError("execute rejected the block");
        return;
    }
    state.counters["ms_1thread"] = median(serial_ms);
    state.counters["ms_all"] = median(all_ms);
    state.counters["speedup"] = median(ratios);
}

[[maybe_unused]] const bool kRegistered = [] {
    for (const Workload w : kWorkloads) {
        benchmark::RegisterBenchmark((std::string{"BM_build_dag/"} + name_of(w)).c_str(),
                                     bm_build_dag, w)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
    }
    for (const Workload w : kWorkloads) {
        benchmark::RegisterBenchmark((std::string{"BM_key_order/"} + name_of(w)).c_str(),
                                     bm_key_order, w)
            ->Unit(benchmark::kMicrosecond);
    }
    for (const Workload w : kWorkloads) {
        for (const exec::Schedule s : {exec::Schedule::serial, exec::Schedule::levels,
                                       exec::Schedule::dynamic, exec::Schedule::automatic}) {
            const std::string name =
                std::string{"BM_execute/"} + name_of(w) + "/" + std::string{exec::to_string(s)};
            benchmark::RegisterBenchmark(name.c_str(), bm_execute, w, s, false)
                ->Unit(benchmark::kMillisecond)
                ->MeasureProcessCPUTime()
                ->UseRealTime();
        }
        benchmark::RegisterBenchmark(
            (std::string{"BM_execute/"} + name_of(w) + "/serial_1thread").c_str(), bm_execute, w,
            exec::Schedule::serial, true)
            ->Unit(benchmark::kMillisecond)
            ->MeasureProcessCPUTime()
            ->UseRealTime();
        benchmark::RegisterBenchmark((std::string{"BM_execute_speedup/"} + name_of(w)).c_str(),
                                     bm_execute_speedup, w)
            ->Unit(benchmark::kMillisecond)
            ->UseManualTime();
    }
    return true;
}();

}  // namespace
