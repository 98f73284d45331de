# ctest cmake_package_consumer: installs the barrel build tree into a fresh prefix, then
# configures, builds and runs the consumer project next to this file against that prefix only.
#
#   cmake -DBARREL_BINARY_DIR=<build> -DCONSUMER_SOURCE_DIR=<this dir> -DWORK_ROOT=<dir>
#         [-DBARREL_CONFIG=<cfg>] [-DCONSUMER_GENERATOR=<gen>] [-DCONSUMER_MAKE_PROGRAM=<path>]
#         [-DCONSUMER_CXX_COMPILER=<path>] [-DCONSUMER_BUILD_TYPE=<type>] -P run.cmake
#
# Each run gets its own directory under WORK_ROOT (prefix/, build/, datadir/); it is removed when
# the run passes and kept, with its path printed, when it fails.

cmake_minimum_required(VERSION 3.25)

foreach(var IN ITEMS BARREL_BINARY_DIR CONSUMER_SOURCE_DIR WORK_ROOT)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
        message(FATAL_ERROR "run.cmake: -D${var}=... is required")
    endif()
endforeach()
if(NOT EXISTS "${BARREL_BINARY_DIR}/cmake_install.cmake")
    message(FATAL_ERROR "run.cmake: ${BARREL_BINARY_DIR} is not a configured barrel build tree "
                        "(no cmake_install.cmake)")
endif()

# A fresh directory per run, so nothing of an earlier run (an installed file that is no longer
# installed, a cached find result) can make this one pass.
string(TIMESTAMP stamp "%Y%m%d-%H%M%S")
string(RANDOM LENGTH 6 ALPHABET "0123456789abcdef" salt)
set(work "${WORK_ROOT}/run-${stamp}-${salt}")
set(prefix "${work}/prefix")
set(consumer_build "${work}/build")
set(datadir "${work}/datadir")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")

# Runs one step; on failure prints its output and stops with a message naming the step.
function(step name)
    cmake_parse_arguments(PARSE_ARGV 1 arg "" "HINT" "COMMAND")
    string(REPLACE ";" " " shown "${arg_COMMAND}")
    message(STATUS "cmake_package: ${name}: ${shown}")
    execute_process(COMMAND ${arg_COMMAND}
        RESULT_VARIABLE rc
        OUTPUT_VARIABLE out
        ERROR_VARIABLE out)
    if(NOT rc EQUAL 0)
        set(hint "")
        if(arg_HINT)
            set(hint "\n${arg_HINT}")
        endif()
        message(FATAL_ERROR "cmake_package: ${name} failed (${rc}):\n${out}${hint}\n"
                            "work directory kept: ${work}")
    endif()
    set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(config_args "")
if(BARREL_CONFIG)
    set(config_args --config "${BARREL_CONFIG}")
endif()
step(install
    COMMAND "${CMAKE_COMMAND}" --install "${BARREL_BINARY_DIR}" --prefix "${prefix}" ${config_args}
    HINT "build barrel first: cmake --build ${BARREL_BINARY_DIR}")

if(NOT EXISTS "${prefix}/include/barrel/barrel.hpp")
    message(FATAL_ERROR "cmake_package: the install put no include/barrel/barrel.hpp under ${prefix}\n"
                        "work directory kept: ${work}")
endif()
file(GLOB_RECURSE configs "${prefix}/*/barrelConfig.cmake")
if(NOT configs)
    message(FATAL_ERROR "cmake_package: the install put no barrelConfig.cmake under ${prefix}\n"
                        "work directory kept: ${work}")
endif()

# The consumer sees the fresh prefix and the system; never barrel's build or source tree.
set(configure_args
    -S "${CONSUMER_SOURCE_DIR}" -B "${consumer_build}"
    "-DCMAKE_PREFIX_PATH=${prefix}"
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
if(CONSUMER_GENERATOR)
    list(APPEND configure_args -G "${CONSUMER_GENERATOR}")
endif()
if(CONSUMER_MAKE_PROGRAM)
    list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${CONSUMER_MAKE_PROGRAM}")
endif()
if(CONSUMER_CXX_COMPILER)
    list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CONSUMER_CXX_COMPILER}")
endif()
if(BARREL_CONFIG)
    list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${BARREL_CONFIG}")
elseif(CONSUMER_BUILD_TYPE)
    list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${CONSUMER_BUILD_TYPE}")
endif()
step(configure COMMAND "${CMAKE_COMMAND}" ${configure_args})
step(build COMMAND "${CMAKE_COMMAND}" --build "${consumer_build}" ${config_args} --parallel 1)

set(consumer "${consumer_build}/consumer")
if(NOT EXISTS "${consumer}" AND BARREL_CONFIG)  # multi-config generators
    set(consumer "${consumer_build}/${BARREL_CONFIG}/consumer")
endif()
if(NOT EXISTS "${consumer}")
    message(FATAL_ERROR "cmake_package: the build made no ${consumer}\nwork directory kept: ${work}")
endif()
step(run COMMAND "${consumer}" "${datadir}")
message(STATUS "cmake_package: consumer says:\n${step_output}")

file(REMOVE_RECURSE "${work}")
message(STATUS "cmake_package: passed")
