#pragma once
/// @file
/// A fixed-size block of zeroed memory for a hash table that is probed at random: pages are
/// mapped only when first written, never read before that, and backed by 2 MiB huge pages once
/// the table is in use.
///
/// Why huge pages: a lookup in a table of a few MiB lands on a random page, and after a block's
/// commit has swept the CPU caches each of those pages is also out of the TLB. On a virtual
/// machine a TLB miss is a two-dimensional page walk that costs as much as the line itself, and
/// a software prefetch cannot hide it (the prefetch waits for its translation). With huge pages a
/// table of 8 MiB needs four TLB entries. Both caches are measured with and without them in
/// docs/benchmarks.md, "Warm verify: prefetch and huge pages" and "Account cache".
///
/// Why not from the start: the first write to a huge page zeroes all 2 MiB of it, and entries
/// land at random, so a table with a few hundred entries had every huge page of it zeroed: a
/// fresh validator's 32 MiB account cache holding 400 accounts cost it 2.5 % of its CPU under a
/// 20,000-transfer load (docs/benchmarks.md, "A validator's CPU per transaction"). So the table
/// starts on 4 KiB pages, and its owner counts the entries it writes into fresh slots
/// (count_fill); once they are an eighth of the 4 KiB pages, the table is in use and is moved
/// to huge pages (MADV_COLLAPSE: the kernel zeroes the rest and copies what was written).
///
/// The move runs on a thread of its own at the lowest CPU priority, not on the writer's: it is
/// synchronous, and for a 32 MiB table it took 78 ms of CPU (clear_page_erms, collapse_huge_page)
/// inside the execute stage of a fresh node's first full block, which took 98 ms where the next
/// took 4.4 ms; in a 4-validator network on 2 cores, where every node moved its tables in the same
/// second, the first block's execute took 750-920 ms (docs/benchmarks.md, "A validator's CPU per
/// transaction", the slow start).
///
/// Why a page is never read before it is written (written, mark_written): a load from a page
/// never written maps the kernel's shared zero page, and the first store to it afterwards is a
/// copy-on-write fault (do_wp_page) that must also flush the zero page's translation from the
/// TLB of every core running a thread of the process (an inter-processor interrupt each). A
/// fresh node looks up every account and transaction before it inserts it, so nearly every
/// first write was such a fault, and the profile of a fresh validator showed them
/// (docs/benchmarks.md, "Never-written pages (issue 39)"). So the table keeps one bit per 4 KiB
/// page, set once a writer has stored into the page; owners read a page only when its bit is set,
/// and treat a page without it as empty slots, which it is. The first store is then a plain fault
/// of a fresh page. The bitmap (1 KiB for 32 MiB) stays in L1. It stays in use after the move to
/// huge pages: a miss in an unwritten page costs no access to the table at all, and a 2 MiB region
/// the move left alone (the kernel may decline one) would otherwise, after MADV_HUGEPAGE, map
/// the huge zero page on a read, the same copy-on-write at its first write.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <system_error>
#include <thread>

#ifdef __linux__
#include <sys/mman.h>
#include <sys/resource.h>
#endif

namespace barrel {

class ZeroedPages {
public:
    /// At least `bytes` of zeroed memory, aligned to 64 bytes. Throws std::bad_alloc if the system
    /// will not map that much.
    explicit ZeroedPages(size_t bytes) : m_bytes{bytes == 0 ? 1 : bytes} {
#ifdef __linux__
        m_raw =
            ::mmap(nullptr, m_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m_raw == MAP_FAILED) throw std::bad_alloc{};
        m_data = m_raw;
#else
        // calloc of a large block maps fresh zero pages too.
        m_raw = std::calloc(m_bytes + kAlign, 1);
        if (m_raw == nullptr) throw std::bad_alloc{};
        m_data = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(m_raw) + kAlign - 1) &
                                         ~uintptr_t{kAlign - 1});
#endif
        // The bits after the mapping: a size the system cannot map is refused by the mapping,
        // never asked of the heap (1/32,768 of it; a sanitizer's allocator aborts on a size it
        // cannot serve instead of throwing).
        try {
            m_written = std::make_unique<BitLine[]>(bit_lines());
        } catch (...) {
            release();
            throw;
        }
    }
    ~ZeroedPages() {
        wait_for_huge_pages();
        release();
    }
    ZeroedPages(const ZeroedPages&) = delete;
    ZeroedPages& operator=(const ZeroedPages&) = delete;

    void* data() const noexcept { return m_data; }
    size_t size() const noexcept { return m_bytes; }

    /// Whether the 4 KiB page holding `p` (an address in the table) has been written. An owner
    /// reads a slot only if so: the slots of a page never written are all empty, and reading one
    /// would map the zero page (see the file comment). One relaxed load of a word of the bitmap.
    ///
    /// Memory order: the bit is a filter in front of the owner's own protocol, never what
    /// publishes an entry. A reader that sees it clear answers "not cached", always a correct
    /// answer for a cache. A reader that sees it set reads the slot by the owner's protocol (a
    /// seqlock), which alone decides whether the copy is whole. What the owner must keep is that
    /// a lookup which starts after an insert is complete finds it: the writer sets the bit before
    /// the owner publishes the insert (before its lock's unlock and the seqlock's closing release
    /// store), so whatever makes the insert happen before the lookup (that release store read by
    /// the lookup's acquire load, or the same thread) also makes the bit's store happen before
    /// the bit's load, and coherence forbids a relaxed load to read an older value. Writers under
    /// the owner's lock see each other's bits the same way, through the lock, so a writer's scan
    /// of a set is exact.
    bool written(const void* p) const noexcept {
        const size_t page = page_of(p);
        return ((word_of(page).load(std::memory_order_relaxed) >> (page % 64)) & 1) != 0;
    }

    /// Marks the page holding `p` written. Call it after the first store into the page (the store
    /// has faulted a fresh page in, so no reader that sees the bit can map the zero page) and
    /// before the entry is published (see written()). Thread-safe; a page already marked costs one
    /// relaxed load.
    void mark_written(const void* p) noexcept {
        const size_t page = page_of(p);
        std::atomic<uint64_t>& word = word_of(page);
        const uint64_t bit = uint64_t{1} << (page % 64);
        if ((word.load(std::memory_order_relaxed) & bit) == 0)
            word.fetch_or(bit, std::memory_order_relaxed);
    }

    /// Called by the owner for each entry written into a slot that was empty; the call that
    /// reaches the threshold moves the table to huge pages. Thread-safe; after the move, one
    /// relaxed load.
    void count_fill() noexcept {
        if (m_huge.load(std::memory_order_relaxed)) return;
        if (m_fills.fetch_add(1, std::memory_order_relaxed) + 1 == fill_threshold())
            use_huge_pages();
    }

    /// Whether the table has been moved to huge pages (asked for: the kernel may still refuse).
    bool huge_pages_asked() const noexcept { return m_huge.load(std::memory_order_relaxed); }

    /// Waits until the move to huge pages, if one was started, is done (tests read the kernel's
    /// accounting after it; the destructor, before it unmaps the memory). Not concurrently with
    /// itself.
    void wait_for_huge_pages() noexcept {
        if (m_mover.joinable()) m_mover.join();
    }

    /// Entries written before the table moves to huge pages: an eighth of its 4 KiB pages.
    size_t fill_threshold() const noexcept { return std::max<size_t>(1, m_bytes / kPage / 8); }

    /// Zeroes everything again and, where the system can, gives the pages back (they are mapped
    /// afresh when next written), and marks every page unwritten. Other threads may meanwhile
    /// load 64-bit words of the memory through std::atomic_ref (a seqlock reader that will
    /// discard what it read): they see old values or zeros, and no store races them.
    void reset() noexcept {
        // The bits first: a reader that still saw a bit set may map the zero page for a page
        // given back below (its write will then copy it; rare and harmless), one that sees it
        // clear will not touch the page.
        for (size_t i = 0; i < bit_lines(); ++i)
            for (std::atomic<uint64_t>& word : m_written[i].words)
                word.store(0, std::memory_order_relaxed);
#ifdef __linux__
        // For a private anonymous mapping MADV_DONTNEED is defined to leave zero-fill pages.
        if (::madvise(m_raw, m_bytes, MADV_DONTNEED) == 0) return;
#endif
        auto* words = static_cast<uint64_t*>(m_data);
        for (size_t i = 0; i < m_bytes / sizeof(uint64_t); ++i)
            std::atomic_ref<uint64_t>{words[i]}.store(0, std::memory_order_relaxed);
        std::memset(words + m_bytes / sizeof(uint64_t), 0, m_bytes % sizeof(uint64_t));
    }

private:
    void release() noexcept {
#ifdef __linux__
        ::munmap(m_raw, m_bytes);
#else
        std::free(m_raw);
#endif
    }

    static constexpr size_t kPage = 4096;  ///< the bitmap's granularity, whatever the system's

    /// The bitmap in whole cache lines of its own: a lookup's load of it never shares a line with
    /// something another thread writes.
    struct alignas(64) BitLine {
        std::atomic<uint64_t> words[8];
    };

    size_t pages() const noexcept { return (m_bytes + kPage - 1) / kPage; }
    size_t bit_lines() const noexcept { return (pages() + 511) / 512; }
    std::atomic<uint64_t>& word_of(size_t page) const noexcept {
        return m_written[page / 512].words[page / 64 % 8];
    }
    size_t page_of(const void* p) const noexcept {
        return (reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(m_data)) / kPage;
    }

    void use_huge_pages() noexcept {
        m_huge.store(true, std::memory_order_relaxed);
#ifdef __linux__
        // Hints: without them the memory still works, on 4 KiB pages. MADV_HUGEPAGE makes every
        // later fault a huge one; MADV_COLLAPSE (Linux 6.1) moves what is mapped already, now
        // instead of whenever khugepaged gets to it. Readers and writers may run meanwhile: the
        // kernel copies under the page table's lock, and the contents do not change.
        (void)::madvise(m_raw, m_bytes, MADV_HUGEPAGE);
        try {
            // Only the call that reaches the threshold gets here, once.
            m_mover = std::thread{[raw = m_raw, bytes = m_bytes] {
                // This thread alone (Linux's nice is per thread): the move takes what the
                // blocks leave.
                (void)::setpriority(PRIO_PROCESS, 0, 19);
                constexpr int kCollapse = 25;  // MADV_COLLAPSE, which glibc 2.36's headers lack
                (void)::madvise(raw, bytes, kCollapse);
            }};
        } catch (const std::system_error&) {
            // No thread to be had: the later faults are huge ones, and khugepaged moves the rest.
        }
#endif
    }

    static constexpr size_t kAlign = 64;
    void* m_raw{nullptr};
    void* m_data{nullptr};
    size_t m_bytes;
    /// Bit p % 64 of word p / 64 (word_of): page p has been written (mark_written). Allocated
    /// after the mapping, which is given back if it fails.
    std::unique_ptr<BitLine[]> m_written;
    /// Written by every fill until the move: a line of its own, not the one of the pointers
    /// every lookup reads.
    alignas(64) std::atomic<size_t> m_fills{0};
    std::atomic<bool> m_huge{false};
    std::thread m_mover;  ///< the move to huge pages, once started
};

}  // namespace barrel
