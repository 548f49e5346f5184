# Compiles SRC and expects failure with the message given in its first line: "// EXPECT: <regex>".
file(STRINGS ${SRC} first LIMIT_COUNT 1)
string(REGEX REPLACE "^// EXPECT: " "" expect "${first}")
execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -I${INC} ${SRC}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SRC} compiled, but it must not")
endif()
if(NOT "${out}${err}" MATCHES "${expect}")
  message(FATAL_ERROR "${SRC} failed to compile, but without the expected message '${expect}':\n${err}")
endif()
message(STATUS "rejected as expected: ${expect}")
