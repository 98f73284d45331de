# ctest driver_smoke: runs barrel-bench on a tiny chain and checks that the JSON it writes has the
# documented shape and plausible values, so that a driver that stops measuring fails the tests.
#   cmake -DBENCH=<barrel-bench> -DWORK=<scratch dir> -P smoke.cmake
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${BENCH}" --blocks 3 --txs 40 --threads 2 --json "${WORK}/bench.json" --plot "${WORK}/bench.svg"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "barrel-bench failed (${rc}):\n${out}\n${err}")
endif()
foreach(expected "recovery ceiling" "the same loop on 1 thread" "2t cold one-by-one" "stage speedup over 1 thread" "peak RSS")
    string(FIND "${out}" "${expected}" at)
    if(at EQUAL -1)
        message(FATAL_ERROR "the table lacks \"${expected}\":\n${out}")
    endif()
endforeach()

file(READ "${WORK}/bench.json" doc)
string(JSON ceiling GET "${doc}" recover_ceiling_tps)
if(NOT ceiling GREATER 0)
    message(FATAL_ERROR "recover_ceiling_tps is ${ceiling}")
endif()
string(JSON scaling GET "${doc}" machine_scaling)
string(JSON one_thread GET "${doc}" recover_1_thread_tps)
if(NOT scaling GREATER 0 OR NOT one_thread GREATER 0)
    message(FATAL_ERROR "machine_scaling ${scaling}, recover_1_thread_tps ${one_thread}")
endif()
string(JSON cores GET "${doc}" machine cores)
string(JSON runs LENGTH "${doc}" runs)
if(NOT runs EQUAL 8)
    message(FATAL_ERROR "expected 8 runs (1 and 2 threads x cold/warm x one-by-one/streamed), got ${runs}")
endif()
math(EXPR last "${runs} - 1")
set(paired 0)
foreach(i RANGE ${last})
    string(JSON threads GET "${doc}" runs ${i} threads)
    string(JSON streamed GET "${doc}" runs ${i} streamed)
    string(JSON blocks GET "${doc}" runs ${i} blocks)
    string(JSON txs GET "${doc}" runs ${i} txs_per_block)
    string(JSON tps GET "${doc}" runs ${i} tps)
    if(NOT blocks EQUAL 3 OR NOT txs EQUAL 40 OR NOT tps GREATER 0)
        message(FATAL_ERROR "run ${i}: blocks ${blocks}, txs_per_block ${txs}, tps ${tps}")
    endif()
    foreach(stage decode verify execute commit)
        string(JSON median GET "${doc}" runs ${i} stages ${stage} median_ms)
        string(JSON p95 GET "${doc}" runs ${i} stages ${stage} p95_ms)
        if(NOT median GREATER 0 OR p95 LESS median)
            message(FATAL_ERROR "run ${i} ${stage}: median ${median}, p95 ${p95}")
        endif()
        string(JSON speedup ERROR_VARIABLE missing GET "${doc}" runs ${i} stages ${stage} speedup_over_1_thread)
        if(threads EQUAL 2 AND NOT streamed)
            if(missing OR NOT speedup GREATER 0)
                message(FATAL_ERROR "run ${i} ${stage}: no per-stage speedup (${missing})")
            endif()
            math(EXPR paired "${paired} + 1")
        elseif(NOT missing)
            message(FATAL_ERROR "run ${i} ${stage}: a speedup where no lockstep baseline exists")
        endif()
    endforeach()
endforeach()
if(NOT paired EQUAL 8)
    message(FATAL_ERROR "expected per-stage speedups for the two lockstep 2-thread runs, got ${paired} stages")
endif()

file(READ "${WORK}/bench.svg" svg)
string(FIND "${svg}" "<svg" at)
if(NOT at EQUAL 0)
    message(FATAL_ERROR "bench.svg is not an SVG document")
endif()

# Wrong arguments: a clear error and exit status 2.
execute_process(COMMAND "${BENCH}" --blocks 0 RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
string(FIND "${err}" "--blocks: must be at least 1" at)
if(NOT rc EQUAL 2 OR at EQUAL -1)
    message(FATAL_ERROR "--blocks 0: exit ${rc}, stderr: ${err}")
endif()

# Every mistake is exit status 2 and ONE line naming it (no usage after it), found before any
# measuring (issue 19).
set(PROGRAM "${BENCH}")
include("${CMAKE_CURRENT_LIST_DIR}/../common/expect_bad_usage.cmake")
expect_bad_usage("error: unknown option --bogus" --bogus)
expect_bad_usage("error: option --blocks given twice" --blocks 1 --blocks 2)
expect_bad_usage("error: option --txs needs a value N" --txs)
expect_bad_usage("error: --txs: must be at most 1000000, got 1000001" --txs 1000001)
expect_bad_usage("error: --txs: expected an unsigned 64-bit integer, got '99999999999999999999'" --txs 99999999999999999999)
expect_bad_usage("error: --mix: expected transfer, dag or mixed, got \"x\"" --mix x)
expect_bad_usage("error: --hot-ratio: expected a number in [0, 1], got \"2\"" --hot-ratio 2)
expect_bad_usage("error: --genesis: only with --input (a chain file)" --genesis g.json)
expect_bad_usage("error: --json: cannot write '${WORK}/missing/bench.json': No such file or directory"
                 --blocks 1 --txs 10 --json "${WORK}/missing/bench.json")
expect_bad_usage("error: --plot: '${WORK}' is a directory" --blocks 1 --txs 10 --plot "${WORK}")
file(WRITE "${WORK}/garbage.bin" "not a chain file\n")
expect_bad_usage("error: --input: '${WORK}/garbage.bin' is neither a chain file" --input "${WORK}/garbage.bin")
# An empty plain transaction list (the single byte 0xc0) is timed for decode and verify only:
# --json and --plot are refused, not ignored, and nothing is written.
string(ASCII 192 empty_list)
file(WRITE "${WORK}/list.bin" "${empty_list}")
expect_bad_usage("error: --json: '${WORK}/list.bin' is a transaction list" --input "${WORK}/list.bin"
                 --json "${WORK}/list.json" --plot "${WORK}/list.svg")
if(EXISTS "${WORK}/list.json" OR EXISTS "${WORK}/list.svg")
    message(FATAL_ERROR "--json/--plot with a transaction list wrote a file")
endif()
# ... nor leaves their temporary files behind (issue 20: an error after the outputs are
# created unwinds through them).
file(GLOB leftovers "${WORK}/.*.tmp*")
if(leftovers)
    message(FATAL_ERROR "temporary files left behind: ${leftovers}")
endif()

# Issue 20. An input that does not end (/dev/zero) or declares a 4 GiB block is refused having
# read a bounded amount: under a 1 GB address-space limit where the machine allows one to be set
# (a sanitizer build reserves more than that up front, so the check is skipped there).
expect_bad_usage("error: --input: '/dev/zero' is neither a chain file (block 1: malformed_block: unexpected_string) nor a transaction list"
                 --input /dev/zero)
find_program(PRLIMIT prlimit)
if(PRLIMIT)
    execute_process(COMMAND "${PRLIMIT}" --as=1000000000 "${BENCH}" --help RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
    if(rc EQUAL 0)
        execute_process(COMMAND "${PRLIMIT}" --as=1000000000 "${BENCH}" --input /dev/zero
                        RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
        if(NOT rc EQUAL 2)
            message(FATAL_ERROR "--input /dev/zero under a 1 GB limit: exit ${rc}, stderr:\n${err}")
        endif()
    endif()
endif()
string(ASCII 251 255 255 255 255 huge_prefix)  # a list of 0xffffffff bytes
file(WRITE "${WORK}/huge.bin" "${huge_prefix}")
file(READ "${WORK}/huge.bin" huge_hex HEX)
if(huge_hex STREQUAL "fbffffffff")
    expect_bad_usage("error: --input: '${WORK}/huge.bin': block 1: larger than the limit of 1073741824 bytes"
                     --input "${WORK}/huge.bin")
endif()

# --json -: the document on stdout, the table on stderr.
execute_process(COMMAND "${BENCH}" --blocks 1 --txs 10 --quick --json -
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(JSON runs ERROR_VARIABLE bad LENGTH "${out}" runs)
string(FIND "${err}" "recovery ceiling" at)
if(NOT rc EQUAL 0 OR bad OR NOT runs EQUAL 4 OR at EQUAL -1)
    message(FATAL_ERROR "--json -: exit ${rc}, ${bad}, stdout:\n${out}\nstderr:\n${err}")
endif()
expect_bad_usage("error: --json and --plot cannot both write standard output" --json - --plot -)

# A chain file of another genesis is the input's fault: exit 2 naming both (barrel-node makes
# the files; it is built beside barrel-bench).
get_filename_component(build_dir "${BENCH}" DIRECTORY)
set(NODE "${build_dir}/../src/barrel-node")
if(EXISTS "${NODE}")
    foreach(seed 1 2)
        execute_process(COMMAND "${NODE}" gen --genesis "${WORK}/g${seed}.json" --out "${WORK}/c${seed}.rlp"
                                --blocks 1 --txs 4 --accounts 8 --seed ${seed}
                        RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
        if(NOT rc EQUAL 0)
            message(FATAL_ERROR "barrel-node gen: exit ${rc}: ${err}")
        endif()
    endforeach()
    # Found by the first timed import (after the progress lines): the line ends stderr.
    execute_process(COMMAND "${BENCH}" --input "${WORK}/c1.rlp" --genesis "${WORK}/g2.json" --quick
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    string(REGEX MATCH "\nerror: --input: '[^\n]*c1.rlp' does not apply to --genesis '[^\n]*g2.json': block 1: link: [^\n]*\n$" line "${err}")
    if(NOT rc EQUAL 2 OR NOT line OR NOT out STREQUAL "")
        message(FATAL_ERROR "a chain of another genesis: exit ${rc}, stderr:\n${err}")
    endif()
endif()
file(REMOVE_RECURSE "${WORK}")
