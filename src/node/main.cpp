// barrel-node: everything happens in barrel::cli::run, which the tests drive directly.

#include <barrel/cli/cli.hpp>

#include <iostream>
#include <string_view>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int main(int argc, char** argv) {
#if defined(__GLIBC__)
    // glibc raises its mmap threshold every time a large block is freed; from then on the
    // per-block buffers (wire blocks, document vectors, write batches: MiBs each, freed every
    // block) come from the heap arenas of whichever TBB thread ran, and fragment them, so a long
    // import's peak memory kept growing with its length (docs/benchmarks.md, "Memory", measures
    // both). Setting the thresholds turns the adjustment off.
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 20);
#endif
    std::ios::sync_with_stdio(false);
    const std::vector<std::string_view> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    return barrel::cli::run(args, std::cin, std::cout, std::cerr);
}
