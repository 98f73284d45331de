#!/usr/bin/env bash
# Runs barrel's benchmark: the README's main command.
#
#   scripts/bench.sh [ARGS...]
#
# Installs missing Debian packages, builds barrel-bench and only what it links in the optimised
# tree build/release (shared with scripts/test.sh, which builds the rest), then runs the driver
# build/release/bench/barrel-bench ARGS... (2,500-transaction blocks through decode, verify,
# execute and commit, with an embedded RocksDB; --help lists its options). The micro-benchmarks
# are build/release/bench/barrel-microbench (docs/benchmarks.md, "How to reproduce").
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

"$repo/scripts/deps.sh"

# Same configuration as test.sh's release phase, so the two share one build tree (BARREL_WERROR is
# left as the cache has it).
cmake -S "$repo" -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBARREL_TESTING=ON -DBARREL_BENCHMARKS=ON
# The driver and the libraries it links: not the node, its RPC, the tests or the other tools.
cmake --build build/release -j "$(nproc)" --target barrel-bench

exec build/release/bench/barrel-bench "$@"
