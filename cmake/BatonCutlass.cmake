# baton_find_cutlass(): defines the INTERFACE target baton::cutlass with the CUTLASS 4.2 headers.
#   -DBATON_CUTLASS_DIR=<checkout>   use an existing CUTLASS checkout (its include/ and tools/util/include)
#   otherwise                        pip-install nvidia-cutlass==4.2.0.0 (headers only) into the build tree
# The attention kernel (baton/cutlass/sm90_fmha.cuh) builds on the collectives of CUTLASS's example 88
# (Hopper FMHA): when <examples>/88_hopper_fmha is there (a checkout's examples/, the wheel's
# cutlass_library/source/examples/), <examples> joins the include directories and
# BATON_CUTLASS_HAS_FMHA is set; without it the attention targets are not built (a STATUS line says so).
function(baton_find_cutlass)
  if(TARGET baton::cutlass)
    return()
  endif()
  if(BATON_CUTLASS_DIR)
    set(inc "${BATON_CUTLASS_DIR}/include")
    set(util "${BATON_CUTLASS_DIR}/tools/util/include")
    set(examples "${BATON_CUTLASS_DIR}/examples")
    if(NOT EXISTS "${inc}/cutlass/cutlass.h")
      message(FATAL_ERROR "baton: BATON_CUTLASS_DIR=${BATON_CUTLASS_DIR} has no include/cutlass/cutlass.h. "
                          "Point it at a CUTLASS 4.2 checkout, or leave it empty to pip-install nvidia-cutlass==4.2.0.0.")
    endif()
  else()
    set(dir "${CMAKE_BINARY_DIR}/_deps/cutlass-pip")
    set(inc "${dir}/cutlass_library/source/include")
    set(util "${dir}/cutlass_library/source/tools/util/include")
    set(examples "${dir}/cutlass_library/source/examples")
    if(NOT EXISTS "${inc}/cutlass/cutlass.h")
      find_package(Python3 COMPONENTS Interpreter)
      if(NOT Python3_Interpreter_FOUND)
        message(FATAL_ERROR "baton: CUTLASS is needed and no python3 was found to pip-install it. "
                            "Install python3 + pip, or pass -DBATON_CUTLASS_DIR=<CUTLASS 4.2 checkout>.")
      endif()
      message(STATUS "baton: pip-installing nvidia-cutlass==4.2.0.0 (headers) into ${dir}")
      execute_process(
        COMMAND ${Python3_EXECUTABLE} -m pip install --quiet --no-deps --disable-pip-version-check
                --target ${dir} nvidia-cutlass==4.2.0.0
        RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
      if(NOT rc EQUAL 0 OR NOT EXISTS "${inc}/cutlass/cutlass.h")
        message(FATAL_ERROR "baton: 'pip install nvidia-cutlass==4.2.0.0' failed (${rc}):\n${err}\n"
                            "Check network access to PyPI, or pass -DBATON_CUTLASS_DIR=<CUTLASS 4.2 checkout>.")
      endif()
    endif()
  endif()
  set(dirs "${inc};${util}")
  if(EXISTS "${examples}/88_hopper_fmha/collective/fmha_collective_tma_warpspecialized.hpp")
    list(APPEND dirs "${examples}")
    set(BATON_CUTLASS_HAS_FMHA ON PARENT_SCOPE)
  else()
    set(BATON_CUTLASS_HAS_FMHA OFF PARENT_SCOPE)
    message(STATUS "baton: no ${examples}/88_hopper_fmha (CUTLASS's Hopper FMHA example): the attention kernels are not built")
  endif()
  add_library(baton_cutlass INTERFACE)
  add_library(baton::cutlass ALIAS baton_cutlass)
  target_include_directories(baton_cutlass SYSTEM INTERFACE ${dirs})
  set(BATON_CUTLASS_INCLUDE "${inc}" PARENT_SCOPE)
  set(BATON_CUTLASS_INCLUDE_DIRS "${dirs}" PARENT_SCOPE)  # recorded in batonConfig.cmake
  message(STATUS "baton: CUTLASS headers: ${inc}")
endfunction()
