# A chapter with no usable GPU, or with a GPU older than it needs, must exit 77 and say which
# compute capability it needs. Both cases are forced, so this runs on any machine:
#   CUDA_VISIBLE_DEVICES=""      hides every GPU (the "no GPU" path)
#   TUTORIAL_PRETEND_CC=7.5      makes the GPU look like a Turing card (the "too old" path)
#   TUTORIAL_PRETEND_IMAGE_ARCH=none  makes the binary look as if it had no code for this GPU
#                                (the "missing kernel image" path: skip, never a wrong answer)
# Usage: cmake -DEXE=<chapter executable> -P check_skip.cmake
foreach(env_setting "CUDA_VISIBLE_DEVICES=" "TUTORIAL_PRETEND_CC=7.5" "TUTORIAL_PRETEND_IMAGE_ARCH=none")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env_setting} ${EXE} --check-only
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 77)
    message(FATAL_ERROR "${env_setting}: exit ${rc}, want 77\n${out}\n${err}")
  endif()
  if(NOT out MATCHES "SKIP: [^\n]*compute capability [0-9]+\\.[0-9]")
    message(FATAL_ERROR "${env_setting}: the skip message must name the compute capability:\n${out}")
  endif()
  string(REGEX MATCH "SKIP: [^\n]*" line "${out}")
  message("ok (${env_setting}): ${line}")
endforeach()

# A skipped run must not touch an earlier --json file (results are replaced only at the end of
# a passing run, through a temporary file renamed over the old one).
get_filename_component(exe_name ${EXE} NAME)
set(earlier ${CMAKE_CURRENT_BINARY_DIR}/${exe_name}.earlier-results.json)
file(WRITE ${earlier} "{\"earlier\": true}\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES= ${EXE} --check-only
                        --json=${earlier}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
file(READ ${earlier} after)
file(REMOVE ${earlier})
if(NOT rc EQUAL 77 OR NOT after STREQUAL "{\"earlier\": true}\n")
  message(FATAL_ERROR "a skipped run with --json: exit ${rc} (want 77), file now:\n${after}")
endif()
message("ok: a skipped run leaves an earlier --json file as it was")

# The --timeline and --json checks before the run probe the folder with a file of their own:
# an existing file beside the path (here the name the --timeline probe once used) survives.
set(beside ${CMAKE_CURRENT_BINARY_DIR}/${exe_name}.timeline.json.tmp)
file(WRITE ${beside} "not a probe\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES= ${EXE} --check-only
                        --timeline=${CMAKE_CURRENT_BINARY_DIR}/${exe_name}.timeline.json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
file(READ ${beside} after)
file(REMOVE ${beside})
if(NOT (rc EQUAL 77 OR (rc EQUAL 2 AND err MATCHES "no in-kernel timeline")) OR
   NOT after STREQUAL "not a probe\n")
  message(FATAL_ERROR "a skipped run with --timeline: exit ${rc} (want 77), the file beside it "
                      "now:\n${after}\n${err}")
endif()
message("ok: the --timeline check leaves a file beside the path as it was")
