# CTest `headers`: build each tutorial_headers_* object library (one translation unit per
# header, see HeaderCheck.cmake), keep going past failures, and name every header that does
# not compile on its own: the one whose object file is missing afterwards (the objects are
# removed first, so an object left from an earlier build cannot hide a failure).
#   cmake -DBUILD_DIR=... -DGENERATOR=... -DTARGETS=a,b [-DJOBS=2] -P check_headers.cmake
string(REPLACE "," ";" TARGETS "${TARGETS}")
if(NOT JOBS)
  set(JOBS 2)
endif()
if(GENERATOR MATCHES "Ninja")
  set(keep_going -k 0)
else()
  set(keep_going -k)
endif()
foreach(target IN LISTS TARGETS)
  file(GLOB_RECURSE old_objects ${BUILD_DIR}/CMakeFiles/${target}.dir/*.o)
  if(old_objects)
    file(REMOVE ${old_objects})
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${target}
                          --parallel ${JOBS} -- ${keep_going}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message("${out}${err}")
  endif()
endforeach()
file(GLOB_RECURSE tus RELATIVE ${BUILD_DIR}/headers ${BUILD_DIR}/headers/*.cu)
list(SORT tus)
set(failed "")
foreach(tu IN LISTS tus)
  file(GLOB objects ${BUILD_DIR}/CMakeFiles/tutorial_headers_*.dir/headers/${tu}.o)
  if(NOT objects)
    string(REGEX REPLACE "\\.cu$" "" header "${tu}")
    list(APPEND failed ${header})
  endif()
endforeach()
list(LENGTH tus total)
list(LENGTH failed n_failed)
if(n_failed GREATER 0)
  string(REPLACE ";" "\n  " text "${failed}")
  message(FATAL_ERROR "${n_failed} of ${total} headers do not compile on their own "
                      "(compiler output above):\n  ${text}")
endif()
message(STATUS "all ${total} headers compile on their own")
