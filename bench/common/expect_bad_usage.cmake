# expect_bad_usage(EXPECTED ARGS...): runs ${PROGRAM} ARGS and requires exit status 2, nothing
# on stdout and exactly one line on stderr that contains EXPECTED. Included by the smoke tests
# of barrel-bench and barrel-load, whose usage mistakes are all reported this way.
function(expect_bad_usage expected)
    execute_process(COMMAND "${PROGRAM}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    string(FIND "${err}" "${expected}" at)
    string(REGEX MATCHALL "\n" lines "${err}")
    list(LENGTH lines line_count)
    if(NOT rc EQUAL 2 OR at EQUAL -1 OR NOT line_count EQUAL 1 OR NOT out STREQUAL "")
        message(FATAL_ERROR "${ARGN}: exit ${rc}, expected one line with \"${expected}\", stderr:\n${err}")
    endif()
endfunction()
