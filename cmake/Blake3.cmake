# BLAKE3 for the state commitment (docs/formats.md, "State commitment"), built from the official C
# and assembly sources that Debian's librust-blake3-dev installs (scripts/deps.sh), as the ABCI
# messages are built from the Go module cache: nothing of BLAKE3 is copied into the repository.
#
# Defines barrel_blake3 (alias barrel::blake3): a static library with <blake3.h> on its include
# path. The x86-64 assembly kernels (SSE2, SSE4.1, AVX2, AVX-512) are chosen at run time by
# BLAKE3's own CPU dispatch; on other machines the portable C is built alone.

set(BARREL_BLAKE3_DIR "" CACHE PATH "The folder of BLAKE3's C sources (blake3.h, blake3.c, ...)")
if(NOT BARREL_BLAKE3_DIR)
    file(GLOB _blake3_dirs LIST_DIRECTORIES true "/usr/share/cargo/registry/blake3-*/c")
    list(SORT _blake3_dirs COMPARE NATURAL ORDER DESCENDING)
    list(GET _blake3_dirs 0 _blake3_dir)
    if(_blake3_dir AND EXISTS "${_blake3_dir}/blake3.h")
        set(BARREL_BLAKE3_DIR "${_blake3_dir}" CACHE PATH "" FORCE)
    endif()
endif()
if(NOT BARREL_BLAKE3_DIR OR NOT EXISTS "${BARREL_BLAKE3_DIR}/blake3.h")
    message(FATAL_ERROR "barrel: BLAKE3's C sources were not found: install Debian's "
                        "librust-blake3-dev (scripts/deps.sh does), or configure with "
                        "-DBARREL_BLAKE3_DIR=/path/to/blake3/c")
endif()
message(STATUS "barrel: BLAKE3 from ${BARREL_BLAKE3_DIR}")

enable_language(C)
set(_blake3_sources
    "${BARREL_BLAKE3_DIR}/blake3.c"
    "${BARREL_BLAKE3_DIR}/blake3_dispatch.c"
    "${BARREL_BLAKE3_DIR}/blake3_portable.c")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND NOT WIN32)
    enable_language(ASM)
    list(APPEND _blake3_sources
        "${BARREL_BLAKE3_DIR}/blake3_sse2_x86-64_unix.S"
        "${BARREL_BLAKE3_DIR}/blake3_sse41_x86-64_unix.S"
        "${BARREL_BLAKE3_DIR}/blake3_avx2_x86-64_unix.S"
        "${BARREL_BLAKE3_DIR}/blake3_avx512_x86-64_unix.S")
else()
    set(_blake3_defines BLAKE3_NO_SSE2 BLAKE3_NO_SSE41 BLAKE3_NO_AVX2 BLAKE3_NO_AVX512)
endif()

add_library(barrel_blake3 STATIC ${_blake3_sources})
add_library(barrel::blake3 ALIAS barrel_blake3)
target_compile_definitions(barrel_blake3 PRIVATE ${_blake3_defines})
# BLAKE3's own code, built as its authors ship it: none of barrel's warnings, sanitizers or
# fuzzing instrumentation (the directory's compile options, C++ ones among them).
set_property(TARGET barrel_blake3 PROPERTY COMPILE_OPTIONS "")
set_target_properties(barrel_blake3 PROPERTIES POSITION_INDEPENDENT_CODE ON EXPORT_NAME blake3
                                               C_STANDARD 99)
target_include_directories(barrel_blake3 SYSTEM PUBLIC $<BUILD_INTERFACE:${BARREL_BLAKE3_DIR}>)
