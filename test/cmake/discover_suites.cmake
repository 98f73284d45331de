# Run after each build of barrel-tests (POST_BUILD, test/CMakeLists.txt): lists its GoogleTest
# suites (barrel-tests --gtest_list_tests) and writes CTEST_FILE, one ctest per suite, named
# unit.<suite> and running barrel-tests --gtest_filter=<suite>.*. Listing at build time, as
# gtest_discover_tests does, means a new suite or test is never left out of ctest.
#
#   -DTEST_EXECUTABLE=path  -DCTEST_FILE=path  -DSINGLE_THREADED=suite,suite,...
#   -DSLOW_SUITES=suite=N,...  (suites split into N ctests by GoogleTest's own sharding)
#
# Labels: every suite `unit`; the suites in SINGLE_THREADED also `single_thread` (they start no
# thread, so ThreadSanitizer can tell nothing about them; scripts/test.sh's tsan phase skips them).
# With -DCHECK_SINGLE_THREADED=ON (builds with test/unit/thread_guard.cpp), those run with
# BARREL_TEST_NO_THREADS=1, so that one that starts a thread fails.
cmake_minimum_required(VERSION 3.20)
string(REPLACE "," ";" SINGLE_THREADED "${SINGLE_THREADED}")
string(REPLACE "," ";" SLOW_SUITES "${SLOW_SUITES}")

execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE rc
                TIMEOUT 300)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${rc}):\n${errors}")
endif()

foreach(entry IN LISTS SLOW_SUITES)
    string(REPLACE "=" ";" pair "${entry}")
    list(GET pair 0 suite)
    list(GET pair 1 n)
    set("shards_${suite}" ${n})
endforeach()

string(REPLACE "\n" ";" lines "${listing}")
set(script "# Written by test/cmake/discover_suites.cmake after the build of barrel-tests.\n")
set(count 0)
foreach(line IN LISTS lines)
    # A suite line starts in column 0 and ends with '.' (then maybe "  # TypeParam = ...").
    if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
        set(suite "${CMAKE_MATCH_1}")
        string(REGEX REPLACE "^.*/" "" base "${suite}")  # Instantiation/Suite -> Suite
        set(labels unit)
        if(base IN_LIST SINGLE_THREADED)
            list(APPEND labels single_thread)
        endif()
        set(n 1)
        if(DEFINED "shards_${base}")
            set(n ${shards_${base}})
        endif()
        math(EXPR last "${n} - 1")
        foreach(i RANGE ${last})
            set(name "unit.${suite}")
            set(env "")
            if(n GREATER 1)
                set(name "unit.${suite}.${i}")
                set(env "GTEST_TOTAL_SHARDS=${n};GTEST_SHARD_INDEX=${i}")
            endif()
            if(CHECK_SINGLE_THREADED AND "single_thread" IN_LIST labels)
                # thread_guard.cpp: a thread started by a suite listed as single-threaded fails it.
                list(APPEND env "BARREL_TEST_NO_THREADS=1")
            endif()
            string(APPEND script
                "add_test([=[${name}]=] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n"
                "set_tests_properties([=[${name}]=] PROPERTIES LABELS [==[${labels}]==]"
                " TIMEOUT 900")
            if(env)
                string(APPEND script " ENVIRONMENT [==[${env}]==]")
            endif()
            string(APPEND script ")\n")
            math(EXPR count "${count} + 1")
        endforeach()
    endif()
endforeach()
if(count EQUAL 0)
    message(FATAL_ERROR "${TEST_EXECUTABLE} lists no test suite")
endif()
file(WRITE "${CTEST_FILE}" "${script}")
