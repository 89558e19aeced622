# Bad command lines must get one clear error line and exit code 2 - never a crash, a hang or
# exit 0 - in the one format `error: --flag: problem (see --help)` (a stray word is named in
# quotes instead of a flag). None of these needs a GPU: parsing happens before the GPU is
# touched, and a --json or --timeline path that is a directory is refused then too (the run
# would otherwise end, after all its GPU work, unable to write). One pair of parentheses: the
# problem itself does not end in one. --help must say first what --size means in this chapter.
# Usage: cmake -DEXE=<chapter executable> -P check_bad_input.cmake
set(bad_inputs
  "--size=0" "--size=-5" "--size=abc" "--size=12Q" "--size=99999999999999999999999"
  "--size=18446744073709551615G" "--size=2000G" "--repeats=0" "--warmup=-1" "--repeats=x"
  "--repeats=99999999999999999999" "--seed=-1" "--seed=banana" "--bogus" "--variant=nope"
  "--variant=" "--check-only=yes" "stray" "--size" "--json=/nonexistent-dir/out.json"
  "--json=${CMAKE_CURRENT_BINARY_DIR}" "--json=${CMAKE_CURRENT_BINARY_DIR}/"
  "--timeline=${CMAKE_CURRENT_BINARY_DIR}")
foreach(arg IN LISTS bad_inputs)
  execute_process(COMMAND ${EXE} ${arg} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err TIMEOUT 60)
  string(STRIP "${err}" err)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines extra_lines)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "'${arg}': exit ${rc}, want 2\nstdout: ${out}\nstderr: ${err}")
  endif()
  if(NOT err MATCHES "^error: (--[a-z-]+|'[^']*'): [^\n]+ \\(see --help\\)$" OR NOT extra_lines EQUAL 0)
    message(FATAL_ERROR "'${arg}': want one line 'error: --flag: problem (see --help)' on stderr, got:\n${err}")
  endif()
  if(err MATCHES "\\) \\(see --help\\)$")
    message(FATAL_ERROR "'${arg}': two parentheses in a row, the problem's own and (see --help):\n${err}")
  endif()
  message("ok: '${arg}' -> exit 2: ${err}")
endforeach()
foreach(arg --help --list)
  execute_process(COMMAND ${EXE} ${arg} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_QUIET
    TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "'${arg}': exit ${rc}, want 0")
  endif()
  if(arg STREQUAL "--help" AND NOT out MATCHES "usage: [^\n]*\n\n  --size here is: [^\n]+")
    message(FATAL_ERROR "--help must say right after the usage line what --size means:\n${out}")
  endif()
endforeach()
