#!/usr/bin/env bash
# Builds barrel and runs its tests. What CI runs (.ci/run) and the README's test command.
#
#   scripts/test.sh                  all phases: style, release, faults, asan, tsan, fuzz
#   scripts/test.sh --quick          style and release phases only
#   scripts/test.sh --only PHASE     one phase: style | release | faults | asan | tsan | fuzz
#
# Phases (each in its own build tree under build/, reused between runs):
#   style    clang-format-14 --dry-run -Werror over every tracked C++ file (.clang-format)
#   release  RelWithDebInfo (gcc): unit tests, official Ethereum vectors, micro-benchmark smoke run,
#            real clients against barrel-node run (ethers.js, viem and foundry's cast: test/ethers,
#            test/viem, test/cast, npm ci), a 4-validator network on CometBFT (test/network:
#            barrel-node testnet, real cometbft processes); every ctest but the fault suite's
#            (ctest -LE faults)
#   faults   the release binaries under a full disk (an ENOSPC shim at every write position, a
#            full tmpfs where mount works; with CI set a refused mount fails), damaged datadirs
#            and endless inputs (test/fault/faults.py, the ctest `faults`: ctest -L faults; its
#            fault matrix goes to build/release/faults-matrix.md)
#   asan     Debug -O1 (clang), AddressSanitizer + UndefinedBehaviorSanitizer: every unit test
#   tsan     Debug -O1 (gcc), ThreadSanitizer against a TSan-built oneTBB (scripts/tsan-tbb.sh):
#            the unit tests that start threads (ctest -LE single_thread)
#   fuzz     libFuzzer in the asan tree: every fuzzer for BARREL_FUZZ_SECONDS (ctest -L fuzz)
#
# Unit tests run as one ctest per GoogleTest suite (unit.<suite>, test/cmake/discover_suites.cmake);
# `ctest --test-dir build/release -R unit.store_` runs some, barrel-tests --gtest_filter=... one.
#
# With CI set in the environment, warnings are errors (BARREL_WERROR=ON).
# BARREL_FUZZ_SECONDS (default 20) sets how long each fuzzer runs; BARREL_TSAN_TBB_DIR points the
# tsan phase at an existing TSan-built oneTBB (its lib/cmake/TBB) instead of scripts/tsan-tbb.sh.
# Stops at the first failing phase with a non-zero exit status.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; }

phases=(style release faults asan tsan fuzz)
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) phases=(style release) ;;
        --only)
            [[ $# -ge 2 ]] || { echo "error: --only needs a phase" >&2; exit 2; }
            case "$2" in
                style|release|faults|asan|tsan|fuzz) phases=("$2") ;;
                *) echo "error: unknown phase '$2' (style, release, faults, asan, tsan, fuzz)" >&2
                   exit 2 ;;
            esac
            shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "error: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

jobs=$(nproc)
werror=OFF
[[ -n "${CI:-}" ]] && werror=ON

deps_args=(--test)
[[ " ${phases[*]} " == *" fuzz "* || " ${phases[*]} " == *" asan "* ]] && deps_args+=(--fuzz)
[[ " ${phases[*]} " == *" style "* ]] && deps_args+=(--style)
# --browser: the release tree's ctest browser_dapp_and_status_page drives Debian's chromium.
[[ " ${phases[*]} " == *" release "* ]] && deps_args+=(--browser)
"$repo/scripts/deps.sh" "${deps_args[@]}"

# The network test's `cometbft` (go install: minutes on a fresh machine, mostly downloads) is
# built in the background while the release tree compiles; network_test waits for it.
cometbft_log="$repo/build/cometbft-deps.log"
if [[ " ${phases[*]} " == *" release "* ]]; then
    mkdir -p "$repo/build"
    rm -f "$cometbft_log.rc"
    ( rc=0; "$repo/scripts/deps.sh" --cometbft >"$cometbft_log" 2>&1 || rc=$?
      echo "$rc" >"$cometbft_log.rc" ) &
fi

# Sanitizer run-time options, exported for the build too: gtest_discover_tests runs the test
# binary at build time.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:print_stacktrace=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="suppressions=$repo/test/tsan.supp halt_on_error=1 second_deadlock_stack=1"

banner() {
    echo
    echo "================================================================================"
    echo "== $*"
    echo "================================================================================"
}

# configure DIR CMAKE_ARGS... ; build DIR [TARGET] ; run_ctest DIR CTEST_ARGS...
# Every tree precompiles the third-party headers of its heaviest targets (BARREL_PCH, default ON,
# cmake/BarrelPch.cmake: barrel-tests in all three, the rpc, cli, abci and store modules in the
# clang tree): CI minutes, each tree being built from scratch on 2 cores (docs/benchmarks.md,
# "Compile time"). With ccache, set CCACHE_SLOPPINESS=pch_defines,time_macros for it to cache them.
# Every tree also compiles in unity batches (BARREL_UNITY, cmake/BarrelUnity.cmake): barrel-tests
# one batch per module's test files, the store, rpc, abci and cli modules and the benchmarks 8
# files a batch; barrel-tests, the largest part of each tree, in 62 % of the CPU time (release
# tree; README, "What CI runs"). A test file edited here recompiles its batch.
configure() {
    local dir=$1; shift
    cmake -S "$repo" -B "$dir" -G Ninja -DBARREL_WERROR="$werror" -DBARREL_UNITY=ON "$@"
}
build() {
    local dir=$1; shift
    cmake --build "$dir" -j "$jobs" "$@"
}
run_ctest() {
    local dir=$1; shift
    ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 900 "$@"
}

phase_style() {
    # Every tracked C++ source, so a file nobody builds (a fuzzer, the package consumer) is checked
    # too. -Werror: any line clang-format would change fails the phase and names the file and line.
    git -C "$repo" ls-files -z '*.cpp' '*.hpp' '*.h' | xargs -0 clang-format-14 --dry-run -Werror
    echo "style: $(git -C "$repo" ls-files '*.cpp' '*.hpp' '*.h' | wc -l) files formatted as .clang-format says"
}

# In CI the release tree keeps line tables only (-g1: file and line in backtraces and sanitizer-
# free crash reports), which compiles about 40 % faster than full -g (a test file: 54 s -> 33 s
# on this machine); the code is the same -O2. Locally it keeps RelWithDebInfo's -g for gdb.
configure_release() {
    local flags=()
    [[ -n "${CI:-}" ]] && flags+=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")
    configure build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo "${flags[@]}"
}

# Waits for the background build of `cometbft` (above); fails if it failed.
wait_for_cometbft() {
    while [[ ! -f $cometbft_log.rc ]]; do sleep 1; done
    cat "$cometbft_log"
    if [[ $(cat "$cometbft_log.rc") != 0 ]]; then
        echo "cometbft could not be built: the testnet tests and the network test need it" >&2
        return 1
    fi
}

# The sanitizer trees compile in the background, at the lowest CPU priority, from the end of the
# release build on: the release phase's tests (real clients, the network, the fault suite) leave a
# core idle much of their time, and a compile at nice 19 takes only what they leave (a test is
# never slowed by more than the scheduler's share a nice-19 task gets). One job, asan tree then
# tsan tree, so that two compiles never share the cores; each phase waits for its tree's part
# (wait_for_prebuild), then builds again in the foreground, which finishes what is left and
# reports a compile error where it belongs. Only when the sanitizer phases are among those run.
prebuild_log="$repo/build/prebuild"
start_prebuild() {
    local want_asan=0 want_tsan=0
    [[ " ${phases[*]} " == *" asan "* || " ${phases[*]} " == *" fuzz "* ]] && want_asan=1
    [[ " ${phases[*]} " == *" tsan "* ]] && want_tsan=1
    ((want_asan || want_tsan)) || return 0
    mkdir -p "$prebuild_log"
    ((want_asan)) && touch "$prebuild_log/asan.planned"
    ((want_tsan)) && touch "$prebuild_log/tsan.planned"
    # Its own process group (job control on for the spawn), so that the script's exit trap can
    # stop the whole compile if a phase fails before the job is done.
    set -m
    (
        if ((want_asan)); then
            rc=0
            { configure_asan && nice -n 19 cmake --build build/asan -j "$jobs"; } \
                >"$prebuild_log/asan.log" 2>&1 || rc=$?
            echo "$rc" >"$prebuild_log/asan.rc"
        fi
        if ((want_tsan)); then
            rc=0
            { configure_tsan && nice -n 19 cmake --build build/tsan -j "$jobs"; } \
                >"$prebuild_log/tsan.log" 2>&1 || rc=$?
            echo "$rc" >"$prebuild_log/tsan.rc"
        fi
        touch "$prebuild_log/done"
    ) </dev/null &
    echo "$!" >"$prebuild_log/pgid"
    set +m
}
stop_prebuild() {
    [[ -f "$prebuild_log/pgid" && ! -f "$prebuild_log/done" ]] || return 0
    kill -- "-$(cat "$prebuild_log/pgid")" 2>/dev/null || true
}
# Waits for the background compile of one tree (asan or tsan), if one was started, and says how
# it went; the phase's own build then does the rest (or shows the error).
wait_for_prebuild() {
    local tree=$1 waited=0
    [[ -f "$prebuild_log/$tree.planned" ]] || return 0
    while [[ ! -f "$prebuild_log/$tree.rc" ]]; do
        if ! kill -0 "$(cat "$prebuild_log/pgid")" 2>/dev/null; then
            echo "background build of build/$tree: ended without a status; building here"
            return 0
        fi
        sleep 1
        waited=$((waited + 1))
    done
    echo "background build of build/$tree: exit $(cat "$prebuild_log/$tree.rc") (waited ${waited}s; log: $prebuild_log/$tree.log)"
}

phase_release() {
    configure_release
    build build/release
    start_prebuild
    # Before the unit tests: cli_testnet's init tests run the real `cometbft testnet`.
    wait_for_cometbft
    run_ctest build/release -LE faults
    local failed=0
    wallet_test build/release || failed=1
    network_test build/release || failed=1
    return "$failed"
}

# Real clients against the node, each pinned by its test/<client>/package-lock.json (installed by
# npm ci), each starting a `barrel-node run` of its own: ethers.js v6 (a wallet: transfers,
# receipts, rejections, SIGTERM and SIGKILL restarts), viem (HTTP and WebSocket transports:
# subscriptions, filters, the errors it classifies) and foundry's cast (the npm package's binary:
# the commands a user types). Seconds each; the timeouts turn a hang into a failure that leaves CI
# time to report it. All three run, so that one failing does not hide another's result.
wallet_test() {
    local dir=$1 client limit failed=()
    for client in ethers viem cast; do
        limit=180
        if [[ $client == ethers ]]; then limit=600; fi # its restarts under load
        # npm's download cache in build/ (kept between runs, as the build trees are):
        # --prefer-offline takes what it holds without asking the registry again.
        (cd "$repo/test/$client" &&
            npm ci --no-audit --no-fund --loglevel=error --prefer-offline --cache "$repo/build/npm-cache" &&
            BARREL_NODE="$repo/$dir/src/barrel-node" timeout "$limit" npm test) || failed+=("$client")
    done
    if ((${#failed[@]})); then
        echo "real clients failed against barrel-node: ${failed[*]}" >&2
        return 1
    fi
}

# A network of barrel nodes on CometBFT (test/network): `barrel-node testnet init` writes 4
# validators on loopback, `testnet start` starts them (real `cometbft` processes, the binary
# scripts/deps.sh --cometbft built), ethers.js sends through node 0; validators are killed,
# paused, stopped and restarted, and a full node joins; then, in network namespaces the test
# makes (root: npm test runs in one of its own, test/network/run.mjs), a validator is cut off and
# the network partitioned 2|2 (docs/network.md, "Perturbations"). About two and a half minutes;
# the timeout turns a hang into a failure that leaves CI time to report it.
network_test() {
    local dir=$1 go_bin
    go_bin=$(command -v go || echo /usr/local/go/bin/go)
    (cd "$repo/test/network" &&
        npm ci --no-audit --no-fund --loglevel=error --prefer-offline --cache "$repo/build/npm-cache" &&
        BARREL_NODE="$repo/$dir/src/barrel-node" COMETBFT="$("$go_bin" env GOPATH)/bin/cometbft" \
            timeout 420 npm test) || { echo "the network test failed" >&2; return 1; }
}

phase_faults() {
    # The release tree's binaries; after the release phase this builds nothing.
    configure_release
    build build/release --target barrel-node barrel-bench barrel-fault-enospc
    # The ctest `faults` (test/fault/CMakeLists.txt): faults.py on this tree, its matrix written
    # to build/release/faults-matrix.md.
    run_ctest build/release -L faults
}

# One clang tree for ASan+UBSan and the fuzzers: libFuzzer needs clang, and building the library
# with the same sanitizers twice would cost CI minutes. -g1: file and line in reports, without the
# full debug information's compile time. The unit-test files at -O0 (the library they test at
# -O1): clang with ASan compiles a test file in about 40 % of the -O1 time (cli_pool_test 49 ->
# 20 CPU-s), the largest part of this tree; the same checks run, a little slower.
configure_asan() {
    CC=clang CXX=clang++ configure build/asan -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
        -DBARREL_SANITIZE=address,undefined -DBARREL_FUZZING=ON \
        -DBARREL_TESTING=ON -DBARREL_BENCHMARKS=OFF \
        -DBARREL_FUZZ_SECONDS="${BARREL_FUZZ_SECONDS:-20}" -DBARREL_TEST_OPT_FLAGS=-O0
}

phase_asan() {
    wait_for_prebuild asan
    configure_asan
    build build/asan
    run_ctest build/asan -LE fuzz
}

configure_tsan() {
    # Debian's libtbb is not instrumented; TSan needs one that is (see test/tsan.supp).
    # BARREL_TSAN_TBB_DIR: the TBB CMake package dir of a TSan-built oneTBB you already have.
    local tbb_dir=${BARREL_TSAN_TBB_DIR:-}
    [[ -n "$tbb_dir" ]] || tbb_dir=$(nice -n 19 "$repo/scripts/tsan-tbb.sh")
    configure build/tsan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
        -DBARREL_SANITIZE=thread -DBARREL_TESTING=ON -DBARREL_BENCHMARKS=OFF \
        -DTBB_DIR="$tbb_dir"
}

phase_tsan() {
    wait_for_prebuild tsan
    configure_tsan
    build build/tsan
    # Only what starts threads: a suite that starts none cannot race (test/CMakeLists.txt lists
    # them, and the release tree checks that they still start none).
    run_ctest build/tsan -LE single_thread
}

phase_fuzz() {
    # After the asan phase this builds nothing.
    wait_for_prebuild asan
    configure_asan
    build build/asan --target barrel-fuzzers
    run_ctest build/asan -L fuzz
}

rm -rf "$prebuild_log"
trap stop_prebuild EXIT
total_start=$(date +%s)
summary=()
for phase in "${phases[@]}"; do
    banner "phase $phase  ($(date '+%H:%M:%S'), $jobs jobs)"
    start=$(date +%s)
    # A subshell outside any `if`, so that `set -e` still stops the phase at its first failure.
    set +e
    ( set -e; "phase_$phase" )
    rc=$?
    set -e
    elapsed=$(( $(date +%s) - start ))
    if [[ $rc -ne 0 ]]; then
        banner "phase $phase FAILED (exit $rc) after ${elapsed}s"
        exit "$rc"
    fi
    summary+=("$(printf '%-8s %5ss' "$phase" "$elapsed")")
    banner "phase $phase passed in ${elapsed}s"
done

echo
echo "test.sh: all phases passed in $(( $(date +%s) - total_start ))s"
printf '  %s\n' "${summary[@]}"
