# barrel_embed_text(TARGET INPUT SYMBOL): the file INPUT compiled into TARGET as
# `extern const std::string_view SYMBOL` (namespace barrel), regenerated when the file changes;
# a page the node serves (src/rpc/status_page.html) ships inside the binary, no file to install.
# Run as a script (-P) it writes the source: INPUT, OUTPUT and SYMBOL given with -D.

if(CMAKE_SCRIPT_MODE_FILE)
    file(READ "${INPUT}" content HEX)
    string(LENGTH "${content}" hex_digits)
    math(EXPR size "${hex_digits} / 2")
    # Bytes rather than a string literal: no escaping, and no compiler's literal length limit.
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${content}")
    file(WRITE "${OUTPUT}"
        "// Generated from ${INPUT} by cmake/EmbedText.cmake: edit that file.\n"
        "#include <string_view>\n"
        "namespace barrel {\n"
        "namespace {\n"
        "constexpr char kBytes[${size} + 1] = {${bytes} 0};\n"
        "}\n"
        "extern const std::string_view ${SYMBOL};\n"
        "const std::string_view ${SYMBOL}{kBytes, ${size}};\n"
        "}  // namespace barrel\n")
    return()
endif()

function(barrel_embed_text target input symbol)
    get_filename_component(name "${input}" NAME)
    set(output "${CMAKE_CURRENT_BINARY_DIR}/embedded/${name}.cpp")
    add_custom_command(
        OUTPUT "${output}"
        COMMAND "${CMAKE_COMMAND}" -DINPUT=${input} -DOUTPUT=${output} -DSYMBOL=${symbol}
                -P "${CMAKE_CURRENT_FUNCTION_LIST_FILE}"
        DEPENDS "${input}" "${CMAKE_CURRENT_FUNCTION_LIST_FILE}"
        COMMENT "Embedding ${name}"
        VERBATIM)
    target_sources(${target} PRIVATE "${output}")
    set_source_files_properties("${output}" PROPERTIES SKIP_UNITY_BUILD_INCLUDE ON)
endfunction()
