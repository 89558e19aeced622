# CTest <name>_exercise_check: tools/exercise.py check, which needs no GPU, must FAIL on the
# exercise as a student gets it, naming at least one missing protocol step (so each gap breaks
# a rule the check can see, and the copy compiles), and must pass on the chapter's own files.
# Usage: cmake -DPYTHON=... -DTOOL=tools/exercise.py -DTOPIC=NN_topic -DARCH=90
#              [-DSOLUTION_PTX=build/ptx/<name>.sm_90.ptx] [-DCUOBJDUMP=...] -DBUILD=<build>
#              -P check_exercise_check.cmake
if(CUOBJDUMP AND NOT CUOBJDUMP MATCHES "NOTFOUND$")
  set(tool_args --cuobjdump ${CUOBJDUMP})
else()
  set(tool_args --cuobjdump "")
endif()
list(APPEND tool_args --arch ${ARCH} --build ${BUILD} --no-run)

execute_process(COMMAND ${PYTHON} ${TOOL} check ${TOPIC} --unsolved ${tool_args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(out MATCHES "does not compile|ptxas rejects")
  message(FATAL_ERROR "the unsolved exercise of ${TOPIC} does not compile")
endif()
if(rc EQUAL 0 AND tool_args MATCHES "--cuobjdump;;")
  # Some gaps may break only SASS rules; without cuobjdump they cannot be seen.
  message("[tutorial-skip] SKIP: the unsolved exercise of ${TOPIC} breaks no PTX rule, and "
          "without cuobjdump its SASS rules cannot run (README.md, Two commands)")
  return()
endif()
if(NOT rc EQUAL 1 OR NOT out MATCHES "MISSING: ")
  message(FATAL_ERROR "tools/exercise.py check ${TOPIC} --unsolved exited ${rc}: the unsolved "
                      "exercise must fail, naming the protocol steps its gaps leave out; a gap "
                      "that breaks no rule of asm_expect.txt needs a rule that can see it")
endif()

if(SOLUTION_PTX AND EXISTS ${SOLUTION_PTX})
  list(APPEND tool_args --ptx ${SOLUTION_PTX})
endif()
execute_process(COMMAND ${PYTHON} ${TOOL} check ${TOPIC} --solution ${tool_args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tools/exercise.py check ${TOPIC} --solution exited ${rc}: the chapter's "
                      "own files must pass the check")
endif()
message("ok: the unsolved exercise of ${TOPIC} fails the check, naming its missing steps, and "
        "the solution passes")
