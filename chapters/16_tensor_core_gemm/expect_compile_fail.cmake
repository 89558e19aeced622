# Passes only when SRC compiles with -DCONTROL and FAILS without it, with EXPECT in the output.
# Usage: cmake -DNVCC=<nvcc> -DSRC=<file.cu> -DROOT=<source root> -DINC=<chapter dir> -DOUT=<dir>
#              -DEXPECT=<regex> -P this
set(flags -std=c++17 -arch=compute_90a -ptx -I${ROOT} -I${INC})
execute_process(COMMAND ${NVCC} ${flags} -DCONTROL ${SRC} -o ${OUT}/control.ptx
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "control build of ${SRC} (the chapter's own budget) failed, so the test proves nothing:\n${out}${err}")
endif()
execute_process(COMMAND ${NVCC} ${flags} ${SRC} -o ${OUT}/fail.ptx
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SRC} compiled, but a register budget above the block's pool must be rejected (${EXPECT})")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "${SRC} failed, but without the expected diagnostic '${EXPECT}':\n${out}${err}")
endif()
string(REGEX MATCH "[^\n]*${EXPECT}[^\n]*" line "${out}${err}")
message("rejected as expected: ${line}")
