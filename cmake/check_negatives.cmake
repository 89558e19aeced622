# Every negative (deliberately broken) variant of a chapter must be reported FAIL by the
# chapter's own check: exit code 1. One that passes means the check is blind to that bug.
# Usage: cmake -DEXE=<chapter executable> -P check_negatives.cmake
# Prints "[tutorial-skip]" (the test's SKIP_REGULAR_EXPRESSION) when the GPU is unsuitable.
execute_process(COMMAND ${EXE} --list RESULT_VARIABLE rc OUTPUT_VARIABLE listing)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --list failed (${rc})")
endif()
string(REGEX MATCHALL "[^\n]*\\[negative: must FAIL\\]" lines "${listing}")
if(NOT lines)
  message(FATAL_ERROR "${EXE} registers no negative variant; every chapter needs one")
endif()
foreach(line IN LISTS lines)
  string(REGEX MATCH "^[^ ]+" key "${line}")
  execute_process(COMMAND ${EXE} --variant=${key} --check-only --seed=7
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(rc EQUAL 77)
    message("[tutorial-skip] ${out}")
    return()
  elseif(rc EQUAL 1)
    message("caught: negative variant '${key}' was reported FAIL, as it must be")
  else()
    message(FATAL_ERROR "negative variant '${key}' exited ${rc} (want 1: check failed)\n${out}\n${err}")
  endif()
endforeach()
