#include "testing.hpp"

#include "store_impl.hpp"

#include <chrono>
#include <thread>

namespace barrel::store::testing {

void clear_cache(Store& store) {
    Store::Impl& impl = StoreTesting::impl(store);
    impl.accounts->clear();
    impl.users->clear();
}

void wait_for_background_work(const Store& store) {
    const Store::Impl& impl = StoreTesting::impl(store);
    // Summed over the column families: pending flushes and compactions are counted per family.
    const auto count = [&impl](const std::string& property) {
        uint64_t n = 0;
        return impl.db->GetAggregatedIntProperty(property, &n) ? n : 0;
    };
    using p = rocksdb::DB::Properties;
    // A failed flush stops background work with its memtable still pending: no waiting on that.
    while (count(p::kBackgroundErrors) == 0 &&
           count(p::kMemTableFlushPending) + count(p::kNumRunningFlushes) +
                   count(p::kCompactionPending) + count(p::kNumRunningCompactions) >
               0)
        std::this_thread::sleep_for(std::chrono::microseconds{200});
}

uint64_t memtable_entries(const Store& store) {
    const Store::Impl& impl = StoreTesting::impl(store);
    uint64_t active = 0, immutable = 0;
    (void)impl.db->GetAggregatedIntProperty(rocksdb::DB::Properties::kNumEntriesActiveMemTable,
                                            &active);
    (void)impl.db->GetAggregatedIntProperty(rocksdb::DB::Properties::kNumEntriesImmMemTables,
                                            &immutable);
    return active + immutable;
}

}  // namespace barrel::store::testing
