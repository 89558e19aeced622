# An unsolved exercise must fail the chapter's own check (exit 1): the gaps are real.
# Usage: cmake -DEXE=<chNN_topic_exercise_unsolved> -P check_exercise_fails.cmake
execute_process(COMMAND ${EXE} --check-only --seed=11
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
if(rc EQUAL 77)
  message("[tutorial-skip] ${out}")
elseif(rc EQUAL 1)
  message("ok: the unsolved exercise fails its check, as it must")
else()
  message(FATAL_ERROR "unsolved exercise exited ${rc} (want 1)\n${out}\n${err}")
endif()
