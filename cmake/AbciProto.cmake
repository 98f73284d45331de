# The ABCI messages of CometBFT, generated at build time (DESIGN.md, "Network").
#
# The .proto files are the CometBFT module's own (proto/tendermint/**) and gogoproto's gogo.proto,
# which they import for Go-only options. Both come from the Go module cache, where
# `go mod download -json MODULE@VERSION` puts them (downloading once) and prints the folder: the
# wire is then exactly the engine's, and nothing generated or copied is kept in the repository.
# Debian's protoc and libprotobuf (3.21) generate and run the C++ messages.
#
# Defines barrel_abci_proto (alias barrel::abci_proto): the generated messages, included as
# <tendermint/abci/types.pb.h>.

set(BARREL_COMETBFT_VERSION v0.38.26 CACHE STRING "The CometBFT release whose ABCI barrel speaks")
set(BARREL_GOGOPROTO_VERSION v1.7.0 CACHE STRING "The gogoproto release CometBFT's .proto files import")

find_package(Protobuf REQUIRED)  # Debian: protobuf-compiler, libprotobuf-dev (scripts/deps.sh)
find_program(BARREL_GO go PATHS /usr/local/go/bin $ENV{HOME}/go/bin)
if(NOT BARREL_GO)
    message(FATAL_ERROR "barrel: Go is needed to fetch CometBFT's .proto files (go mod download); "
                        "put `go` on PATH or configure with -DBARREL_GO=/path/to/go")
endif()

# barrel_go_module_dir(<out-var> <module> <version>): the module's folder in the Go module cache.
function(barrel_go_module_dir out module version)
    execute_process(
        COMMAND "${BARREL_GO}" mod download -json "${module}@${version}"
        # Outside any Go module, so that no go.mod nearby decides what is downloaded.
        WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
        OUTPUT_VARIABLE json
        ERROR_VARIABLE error
        RESULT_VARIABLE status)
    if(NOT status EQUAL 0)
        message(FATAL_ERROR "barrel: `go mod download ${module}@${version}` failed: ${error}${json}")
    endif()
    string(JSON dir ERROR_VARIABLE json_error GET "${json}" Dir)
    if(json_error OR NOT IS_DIRECTORY "${dir}")
        message(FATAL_ERROR "barrel: `go mod download -json ${module}@${version}` gave no folder: ${json}")
    endif()
    set(${out} "${dir}" PARENT_SCOPE)
endfunction()

barrel_go_module_dir(BARREL_COMETBFT_DIR github.com/cometbft/cometbft ${BARREL_COMETBFT_VERSION})
barrel_go_module_dir(BARREL_GOGOPROTO_DIR github.com/cosmos/gogoproto ${BARREL_GOGOPROTO_VERSION})
message(STATUS "barrel: ABCI messages from ${BARREL_COMETBFT_DIR}")

# types.proto and what it imports, in the import paths' own names.
set(_abci_protos
    tendermint/abci/types.proto
    tendermint/crypto/proof.proto
    tendermint/crypto/keys.proto
    tendermint/types/params.proto
    tendermint/types/validator.proto)
set(_abci_out "${CMAKE_BINARY_DIR}/generated/abci")
set(_abci_inputs "")
set(_abci_sources "")
foreach(proto IN LISTS _abci_protos)
    list(APPEND _abci_inputs "${BARREL_COMETBFT_DIR}/proto/${proto}")
    string(REGEX REPLACE "\\.proto$" "" stem "${proto}")
    list(APPEND _abci_sources "${_abci_out}/${stem}.pb.cc")
endforeach()
list(APPEND _abci_inputs "${BARREL_GOGOPROTO_DIR}/gogoproto/gogo.proto")
list(APPEND _abci_sources "${_abci_out}/gogoproto/gogo.pb.cc")

# google/protobuf/{timestamp,duration,descriptor}.proto: protoc's own include folder.
get_target_property(_protobuf_includes protobuf::libprotobuf INTERFACE_INCLUDE_DIRECTORIES)
set(_protoc_includes "-I${BARREL_COMETBFT_DIR}/proto" "-I${BARREL_GOGOPROTO_DIR}")
foreach(dir IN LISTS _protobuf_includes)
    list(APPEND _protoc_includes "-I${dir}")
endforeach()

add_custom_command(
    OUTPUT ${_abci_sources}
    COMMAND ${CMAKE_COMMAND} -E make_directory "${_abci_out}"
    COMMAND protobuf::protoc ${_protoc_includes} "--cpp_out=${_abci_out}" ${_abci_protos}
            gogoproto/gogo.proto
    DEPENDS ${_abci_inputs}
    COMMENT "Generating CometBFT ${BARREL_COMETBFT_VERSION}'s ABCI messages"
    VERBATIM)

add_library(barrel_abci_proto STATIC ${_abci_sources})
add_library(barrel::abci_proto ALIAS barrel_abci_proto)
# Generated code: its headers are SYSTEM includes and its own warnings are protoc's, not ours.
target_include_directories(barrel_abci_proto SYSTEM PUBLIC "$<BUILD_INTERFACE:${_abci_out}>")
target_compile_options(barrel_abci_proto PRIVATE -w)
target_link_libraries(barrel_abci_proto PUBLIC protobuf::libprotobuf)
set_target_properties(barrel_abci_proto PROPERTIES POSITION_INDEPENDENT_CODE ON)
