# One bad input of tests/dsl/bad (run by ctest as batonc.bad.<name>): batonc must exit 1 and print
# the message in <name>.err. <name>.args, when present, holds extra arguments, one per line
# (e.g. --check conv1->conv2=kblock).
get_filename_component(dir ${PROGRAM} DIRECTORY)
get_filename_component(stem ${PROGRAM} NAME_WE)
file(READ ${dir}/${stem}.err want)
# The .err files hold the status text "<code>: <file>:<line>:<col>: ..."; batonc prints the message after "batonc: ".
string(REGEX REPLACE "^[a-z ]+: " "" want "${want}")
string(STRIP "${want}" want)
set(args)
if(EXISTS ${dir}/${stem}.args)
  file(STRINGS ${dir}/${stem}.args args)
endif()
file(RELATIVE_PATH rel ${ROOT} ${PROGRAM})
execute_process(COMMAND ${BATONC} ${rel} ${args} WORKING_DIRECTORY ${ROOT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "batonc ${rel} ${args}: exit ${rc}, expected 1 (the program is bad)\nstdout: ${out}\nstderr: ${err}")
endif()
string(FIND "${err}" "${want}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "batonc ${rel} ${args}: the error is not the one in ${stem}.err\nwant:\n${want}\nstderr:\n${err}")
endif()
