# A compile-fail test: passes only when SRC compiles with -DCONTROL and FAILS without it, with
# EXPECT in the compiler's output. The control build shows that the failure comes from what the
# CONTROL macro switches (the one wrong line the test is about), not from a file that is broken
# anyway.
# Usage: cmake -DNVCC=<nvcc> -DSRC=<file.cu> -DARCH=<compute_XX> -DINC=<dir> [-DROOT=<dir>]
#              [-DCASE=<name>] -DOUT=<dir> -DEXPECT=<regex>
#              "-DCONTROL_IS=<what the control build compiles>"
#              "-DMUST_REJECT=<what the failing build must be rejected for>"
#              -P expect_compile_fail.cmake
# CASE selects one of several cases of SRC: it defines CASE_<NAME> (upper case) in both builds.
# Both builds emit PTX only: a diagnostic of the front end or of the PTX generation is enough.
set(flags -std=c++17 -arch=${ARCH} -ptx)
if(ROOT)
  list(APPEND flags -I${ROOT})
endif()
list(APPEND flags -I${INC})
set(subject "${SRC}")
if(CASE)
  string(TOUPPER "${CASE}" case_upper)
  list(APPEND flags -DCASE_${case_upper})
  string(APPEND subject ", case ${CASE},")
endif()
execute_process(COMMAND ${NVCC} ${flags} -DCONTROL ${SRC} -o ${OUT}/control.ptx
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "control build of ${subject} (${CONTROL_IS}) failed, so the test proves nothing:\n${out}${err}")
endif()
execute_process(COMMAND ${NVCC} ${flags} ${SRC} -o ${OUT}/fail.ptx
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${subject} compiled, but ${MUST_REJECT} must be rejected (${EXPECT})")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "${subject} failed, but without the expected diagnostic '${EXPECT}':\n${out}${err}")
endif()
string(REGEX MATCH "[^\n]*${EXPECT}[^\n]*" line "${out}${err}")
message("rejected as expected: ${line}")
