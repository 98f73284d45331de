# ctest build_version: each program's --version names the commit the build came from (git
# rev-parse HEAD of the source tree, read now), the project's version, the compiler and the build
# type, with exit status 0.
#   cmake -DPROGRAMS=<path>,<path>,... -DGIT=<git> -DSOURCE_DIR=<repo> -DVERSION=<x.y.z>
#         -DBUILD_TYPE=<type> -P version.cmake
cmake_minimum_required(VERSION 3.20)
execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse HEAD
                OUTPUT_VARIABLE head RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT head MATCHES "^[0-9a-f]+$")
    message(FATAL_ERROR "git rev-parse HEAD in ${SOURCE_DIR} failed (${rc}): '${head}'")
endif()
string(REPLACE "," ";" programs "${PROGRAMS}")
foreach(program IN LISTS programs)
    get_filename_component(name "${program}" NAME)
    execute_process(COMMAND "${program}" --version
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${name} --version: exit ${rc}\n${out}${err}")
    endif()
    foreach(expected "${name} ${VERSION}\n" "\ncommit ${head}" "\ncompiler " "\nbuild type ${BUILD_TYPE}\n")
        string(FIND "${out}" "${expected}" at)
        if(at EQUAL -1)
            message(FATAL_ERROR "${name} --version lacks '${expected}' (HEAD is ${head}):\n${out}")
        endif()
    endforeach()
    message(STATUS "${name} --version:\n${out}")
endforeach()
