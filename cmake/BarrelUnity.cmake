# Unity builds: CI minutes. scripts/test.sh builds three trees from scratch on 2 cores, and the
# heavy targets' files each compile the same inline code again (GoogleTest's, nlohmann's,
# Boost.Beast's, barrel's own headers); in a unity batch, one translation unit that includes
# several of a target's files, it is compiled once per batch (README, "What CI runs", has the
# figures). A file edited recompiles its whole batch, which is why it is an option and
# scripts/test.sh, whose trees are built from scratch in CI, is what turns it on.
#
# The files of a batch share a translation unit: their anonymous namespaces and `using` lines
# meet, so a name defined at namespace scope in one file must not be defined again by another
# file of the same target (give it a name of its own, or put it in a header both include).
option(BARREL_UNITY "Compile the heavy targets in unity batches (less CPU from scratch)" OFF)

# barrel_unity(<target> [GROUP])
#
# Batches of 8 files in the order of the sources; GROUP: the batches are the sources' UNITY_GROUP
# properties, set by the caller (a source without one compiles alone).
function(barrel_unity target)
    cmake_parse_arguments(PARSE_ARGV 1 arg "GROUP" "" "")
    if(NOT BARREL_UNITY)
        return()
    endif()
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
    if(arg_GROUP)
        set_target_properties(${target} PROPERTIES UNITY_BUILD_MODE GROUP)
    endif()
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        # gcc warns at a class that uses a type of an anonymous namespace when it is not in the
        # main file: in a batch that is every file, so every TEST_P fixture and pimpl of such a
        # type. The warning guards against a header that defines the class in several
        # translation units; a source file in a batch is compiled in one.
        target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
    endif()
endfunction()
