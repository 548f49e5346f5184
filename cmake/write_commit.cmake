# BATON_COMMIT (environment) names the commit where git cannot: a copy of the working tree whose
# .git is stale or absent (the device machine's copy of a session's checkout).
if(DEFINED ENV{BATON_COMMIT} AND NOT "$ENV{BATON_COMMIT}" STREQUAL "")
  set(commit "$ENV{BATON_COMMIT}")
  set(rc 0)
else()
  execute_process(COMMAND git -C ${SRC} describe --always --dirty --abbrev=12
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
endif()
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
set(content "#pragma once\n#define BATON_GIT_COMMIT \"${commit}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${content}")
  file(WRITE ${OUT} "${content}")
endif()
