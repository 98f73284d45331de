# Run at every build (cmake -P, from the barrel_build_commit target in src/CMakeLists.txt), not at
# configure time: a commit read once at configure would be stale after the next commit. Writes
# OUTPUT only when what it holds changes, so an unchanged commit recompiles nothing.
#
#   cmake -DGIT=/usr/bin/git -DSOURCE_DIR=<repo> -DOUTPUT=<file.cpp> -P BarrelBuildCommit.cmake
#
# Outside a git checkout (a source tarball) the commit is "unknown".

set(commit "unknown")
set(modified "false")
if(GIT)
    execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse HEAD
                    OUTPUT_VARIABLE head RESULT_VARIABLE status ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(status EQUAL 0 AND head MATCHES "^[0-9a-f]+$")
        set(commit "${head}")
        # Tracked files that differ from the commit: the binary is not quite that commit's.
        execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" diff --quiet HEAD --
                        RESULT_VARIABLE dirty OUTPUT_QUIET ERROR_QUIET)
        if(dirty EQUAL 1)
            set(modified "true")
        endif()
    endif()
endif()

set(content "// Written by cmake/BarrelBuildCommit.cmake at every build; not to be edited.
#include \"version/build_commit.hpp\"

namespace barrel::version {
const std::string_view kBuildCommit = \"${commit}\";
const bool kBuildModified = ${modified};
}  // namespace barrel::version
")
set(old "")
if(EXISTS "${OUTPUT}")
    file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL content)
    file(WRITE "${OUTPUT}" "${content}")
endif()
