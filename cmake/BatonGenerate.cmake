# baton_generate(<target> SOURCE <file.baton> OUTPUT <header> [NAMESPACE <ns>] [VERIFY <committed header>])
#
# Regenerates <header> from <file.baton> with batonc whenever either changes, and makes <target>
# depend on it (add the header's directory to the target's include path yourself). Paths are
# relative to the current source directory unless absolute. With VERIFY, also adds a test that
# fails when the committed header differs from what batonc generates (a stale generated header).
function(baton_generate target)
  cmake_parse_arguments(BG "" "SOURCE;OUTPUT;NAMESPACE;VERIFY" "" ${ARGN})
  if(NOT BG_SOURCE OR NOT BG_OUTPUT)
    message(FATAL_ERROR "baton_generate(${target}): SOURCE and OUTPUT are required")
  endif()
  if(NOT TARGET batonc)
    message(FATAL_ERROR "baton_generate(${target}): the batonc target does not exist (BATON_BUILD_TOOLS=ON)")
  endif()
  cmake_path(ABSOLUTE_PATH BG_SOURCE BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} OUTPUT_VARIABLE src)
  cmake_path(ABSOLUTE_PATH BG_OUTPUT BASE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR} OUTPUT_VARIABLE out)
  set(ns_args)
  if(BG_NAMESPACE)
    set(ns_args --namespace ${BG_NAMESPACE})
  endif()
  # Run from the project root so the header's banner names the source as the repository does.
  cmake_path(RELATIVE_PATH src BASE_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE src_rel)
  add_custom_command(OUTPUT ${out}
    COMMAND batonc ${src_rel} ${ns_args} -o ${out}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    DEPENDS batonc ${src}
    COMMENT "batonc ${src_rel}"
    VERBATIM)
  string(MAKE_C_IDENTIFIER "${target}_${src_rel}" gen_target)
  add_custom_target(${gen_target} DEPENDS ${out})
  add_dependencies(${target} ${gen_target})
  if(BG_VERIFY)
    cmake_path(ABSOLUTE_PATH BG_VERIFY BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} OUTPUT_VARIABLE committed)
    cmake_path(RELATIVE_PATH committed BASE_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE committed_rel)
    add_test(NAME batonc.stale.${src_rel}
             COMMAND batonc ${src_rel} ${ns_args} --verify ${committed_rel}
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(batonc.stale.${src_rel} PROPERTIES LABELS host TIMEOUT 120)
  endif()
endfunction()
