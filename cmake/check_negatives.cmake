# Every negative (deliberately broken) variant of a chapter must be reported FAIL by the
# chapter's own check: exit code 1. One that passes means the check is blind to that bug.
# Usage: cmake -DEXE=<chapter executable> [-DKIND=perturb] -P check_negatives.cmake
#   KIND unset:   the variants --list marks "[negative: must FAIL]", each run once (--seed=7);
#   KIND=perturb: the perturbation negatives ("[perturb negative: must FAIL in a
#                 TUTORIAL_PERTURB build]"), in a -DTUTORIAL_PERTURB=ON build; each must FAIL
#                 with every seed of SEEDS (default 7;11;13), since each seed delays a different
#                 subset of warps and iterations.
# Prints "[tutorial-skip]" (the test's SKIP_REGULAR_EXPRESSION) when the GPU is unsuitable.
if(KIND STREQUAL "perturb")
  set(marker "\\[perturb negative: must FAIL in a TUTORIAL_PERTURB build\\]")
  set(what "perturbation negative")
  if(NOT DEFINED SEEDS)
    set(SEEDS 7 11 13)
  endif()
else()
  set(marker "\\[negative: must FAIL\\]")
  set(what "negative")
  set(SEEDS 7)
endif()
execute_process(COMMAND ${EXE} --list RESULT_VARIABLE rc OUTPUT_VARIABLE listing)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --list failed (${rc})")
endif()
string(REGEX MATCHALL "[^\n]*${marker}" lines "${listing}")
if(NOT lines)
  if(KIND STREQUAL "perturb")
    message(FATAL_ERROR "${EXE} registers no perturbation negative, though one of its sources "
                        "sets .perturb_negative = true (CMake found it there)")
  endif()
  message(FATAL_ERROR "${EXE} registers no negative variant; every chapter needs one")
endif()
foreach(line IN LISTS lines)
  string(REGEX MATCH "^[^ ]+" key "${line}")
  foreach(seed IN LISTS SEEDS)
    execute_process(COMMAND ${EXE} --variant=${key} --check-only --seed=${seed}
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
    if(rc EQUAL 77)
      message("[tutorial-skip] ${out}")
      return()
    elseif(rc EQUAL 1)
      message("caught: ${what} variant '${key}' was reported FAIL with --seed=${seed}, as it must be")
    else()
      message(FATAL_ERROR "${what} variant '${key}' exited ${rc} with --seed=${seed} "
                          "(want 1: check failed)\n${out}\n${err}")
    endif()
  endforeach()
endforeach()
