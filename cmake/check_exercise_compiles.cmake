# The exercise as a student gets it (tools/exercise.py new) must compile: generate it into a
# scratch folder of the build tree and compile it to PTX, which runs nvcc's front end over the
# whole program (host and device code) and generates the device code, without ptxas or the
# host compiler, so CI stays quick.
# Usage: cmake -DPYTHON=... -DTOOL=tools/exercise.py -DTOPIC=NN_topic -DOUT=<scratch folder>
#              -DNVCC=... -DARCH=90 -DROOT=<repository> -P check_exercise_compiles.cmake
file(REMOVE_RECURSE ${OUT}/${TOPIC})
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${PYTHON} ${TOOL} new ${TOPIC} --into ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tools/exercise.py new ${TOPIC} failed (${rc}):\n${out}${err}")
endif()
execute_process(COMMAND ${NVCC} -ptx -std=c++17 -O3 -arch=compute_${ARCH} -I${ROOT}
                        -I${OUT}/${TOPIC} ${OUT}/${TOPIC}/main.cu -o ${OUT}/${TOPIC}.ptx
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the unsolved exercise of ${TOPIC} does not compile:\n${out}${err}")
endif()
message("ok: the exercise of ${TOPIC} compiles (compute_${ARCH} PTX)")
