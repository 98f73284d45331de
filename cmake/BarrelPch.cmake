# Precompiled headers: CI minutes. scripts/test.sh builds three trees from scratch on 2 cores
# (release, asan, tsan), and parsing the same third-party headers again in every file was a large
# part of each: GoogleTest, nlohmann/json and Boost.Multiprecision (core/uint256.hpp) are in
# nearly every test file and most of the node's modules. Parsed once per target instead
# (docs/benchmarks.md, "Compile time"). Only third-party and standard headers are precompiled,
# never barrel's own: a change to a barrel header rebuilds what includes it, as before.
#
# Each file keeps its own #includes (the PCH only makes them cheap). A file that forgets one still
# compiles with the PCH: -DBARREL_PCH=OFF builds every file with only its own includes.
#
# GCC before 13 does not keep `#pragma GCC diagnostic` in a PCH (GCC bug 64117), and libstdc++ 12
# silences -Warray-bounds, -Wstringop-overflow and -Wstringop-overread around char_traits with
# such pragmas: through a PCH those false positives reach the test files (core_hex_test failed
# under -Werror, which is why an earlier PCH was dropped). So with GCC < 13 only barrel-tests gets
# a PCH, with those three warnings off in it: the test files' code, which clang's asan tree still
# checks with its own -Warray-bounds; the library keeps them in every tree. clang keeps the
# pragmas, and its tree precompiles the heavy modules too.
option(BARREL_PCH "Precompile the third-party headers most files include (faster builds)" ON)

set(BARREL_PCH_GCC_DROPS_PRAGMAS OFF)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    set(BARREL_PCH_GCC_DROPS_PRAGMAS ON)
endif()

# What most files of the heavy targets include, directly or through barrel's headers.
set(BARREL_PCH_HEADERS
    <boost/multiprecision/cpp_int.hpp>
    <nlohmann/json.hpp>
    <algorithm> <array> <chrono> <cstdint> <functional> <map> <memory> <optional> <string>
    <string_view> <utility> <vector>)

# barrel_precompile_headers(<target> [TEST] [HEADERS <header>...])
#
# TEST: the target is the unit-test binary (GoogleTest added; precompiled with every compiler).
# Otherwise a module, precompiled only where the compiler keeps the pragmas (above).
function(barrel_precompile_headers target)
    cmake_parse_arguments(PARSE_ARGV 1 arg "TEST" "" "HEADERS")
    if(NOT BARREL_PCH)
        return()
    endif()
    if(NOT arg_TEST AND BARREL_PCH_GCC_DROPS_PRAGMAS)
        return()
    endif()
    target_precompile_headers(${target} PRIVATE ${BARREL_PCH_HEADERS} ${arg_HEADERS})
    if(BARREL_PCH_GCC_DROPS_PRAGMAS)
        target_compile_options(${target} PRIVATE
            -Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread)
    endif()
endfunction()
