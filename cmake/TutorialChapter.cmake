# tutorial_add_chapter(<name> [MIN_ARCH <sm>] [MIN_CUDA <version>] [ARCHS <arch>...]
#                      [SOURCES <files>...] [LIBRARIES <libs>...])
#
# Adds one chapter, defined in the calling chapters/NN_topic/ directory:
#   - the executable <name> (e.g. ch01_sync_shared_loads) in build/bin/, built from main.cu;
#   - its PTX for every architecture it is built for, at build/ptx/<name>.sm_XX.ptx;
#   - CTest entries (SKIP_RETURN_CODE 77, so "no suitable GPU" shows as skipped):
#       <name>               runs `<name> --check-only`               labels chapter;gpu
#       <name>_negatives     every negative variant must FAIL         labels chapter;gpu;negative
#       <name>_bad_input     bad flags/values exit 2 (no GPU needed)  labels chapter;cli
#       <name>_skips         no GPU / too-old GPU / no code for the GPU exit 77, naming
#                            why; an earlier --json file survives    labels chapter;cli
#       <name>_perturb_negatives  (TUTORIAL_PERTURB=ON builds only, and only for a chapter
#                            whose sources set `.perturb_negative = true` on a variant) every
#                            perturbation negative must FAIL, with three seeds
#                                                                      labels chapter;gpu;perturb
#       <name>_ptx           asm_expect.txt "ptx" lines vs the PTX    labels inspect
#       <name>_sass          asm_expect.txt "sass" lines vs cuobjdump labels inspect;sass
#                            (listed as skipped, with the reason, when cuobjdump is missing)
#       <name>_rules         each asm_expect.txt counterexample (mutate) labels rules
#                            is rejected by its rule (tools/check_rules.py)
#       and the exercise's tests (tutorial_add_exercise below)
# MIN_ARCH 90 restricts a Hopper-only chapter to architectures >= 90 among those configured
# (sm_90 when none are). ARCHS overrides the architectures of the binary, its GPU tests and its
# exercise (e.g. 90a-real for sm_90a-only instructions); the PTX listings keep MIN_ARCH's list.
# MIN_CUDA 12.8 states the oldest toolkit whose nvcc can build the chapter (e.g. the
# .shared::cta forms of cp.async.bulk need PTX ISA 8.6, CUDA 12.8); with an older nvcc the
# chapter is left out at configure time with a message saying so, instead of a ptxas error.
function(tutorial_add_chapter name)
  cmake_parse_arguments(ARG "" "MIN_ARCH;MIN_CUDA" "SOURCES;LIBRARIES;ARCHS" ${ARGN})
  if(ARG_MIN_CUDA AND CMAKE_CUDA_COMPILER_VERSION VERSION_LESS ARG_MIN_CUDA)
    message(WARNING "${name} is skipped: it needs CUDA ${ARG_MIN_CUDA} or newer; this nvcc is "
                    "${CMAKE_CUDA_COMPILER_VERSION}")
    set_property(GLOBAL APPEND PROPERTY TUTORIAL_SKIPPED_CHAPTERS ${name})
    return()
  endif()
  if(NOT ARG_SOURCES)
    set(ARG_SOURCES main.cu)
  endif()

  # Architectures for this chapter.
  set(archs ${CMAKE_CUDA_ARCHITECTURES})
  if(ARG_MIN_ARCH)
    set(kept "")
    foreach(a IN LISTS archs)
      string(REGEX MATCH "^[0-9]+" num "${a}")
      if(num GREATER_EQUAL ARG_MIN_ARCH)
        list(APPEND kept ${a})
      endif()
    endforeach()
    if(NOT kept)
      set(kept ${ARG_MIN_ARCH})
    endif()
    set(archs ${kept})
  endif()

  set(bin_archs ${archs})
  if(ARG_ARCHS)
    set(bin_archs ${ARG_ARCHS})
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE tutorial_common ${ARG_LIBRARIES})
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  tutorial_set_archs(${name} "${bin_archs}")
  tutorial_cuda_flags(${name})

  # PTX, one file per architecture (CUDA_PTX_COMPILATION takes one architecture per target,
  # so nvcc is called directly; -ptx stops before ptxas and the host compiler, so it is cheap).
  file(GLOB chapter_headers ${CMAKE_CURRENT_SOURCE_DIR}/*.cuh ${PROJECT_SOURCE_DIR}/common/*.cuh
       ${PROJECT_SOURCE_DIR}/common/*.hpp)
  set(perturb_flag "")   # the PTX listings show what the binary runs, delays included
  if(TUTORIAL_PERTURB)
    set(perturb_flag -DTUTORIAL_PERTURB)
  endif()
  set(ptx_files "")
  foreach(a IN LISTS archs)
    string(REGEX MATCH "^[0-9]+a?" num "${a}")
    set(ptx ${CMAKE_BINARY_DIR}/ptx/${name}.sm_${num}.ptx)
    list(GET ARG_SOURCES 0 main_source)
    add_custom_command(OUTPUT ${ptx}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/ptx
      COMMAND ${CMAKE_CUDA_COMPILER} -ptx -std=c++17 -lineinfo -O3 ${perturb_flag}
              -arch=compute_${num} -I${PROJECT_SOURCE_DIR} -I${CMAKE_CURRENT_SOURCE_DIR}
              -MMD -MF ${ptx}.d ${CMAKE_CURRENT_SOURCE_DIR}/${main_source} -o ${ptx}
      DEPENDS ${ARG_SOURCES} ${chapter_headers}
      DEPFILE ${ptx}.d  # every header nvcc read, e.g. another chapter's shared workload
      COMMENT "PTX for ${name} (sm_${num})"
      VERBATIM)
    list(APPEND ptx_files ${ptx})
  endforeach()
  add_custom_target(${name}_ptx ALL DEPENDS ${ptx_files})
  set_property(GLOBAL APPEND PROPERTY TUTORIAL_CHAPTERS ${name})
  set_property(GLOBAL PROPERTY TUTORIAL_ARCHS_${name} "${bin_archs}")

  # Tests.
  add_test(NAME ${name} COMMAND ${name} --check-only)
  set_tests_properties(${name} PROPERTIES LABELS "chapter;gpu" SKIP_RETURN_CODE 77)

  add_test(NAME ${name}_negatives
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${name}>
            -P ${PROJECT_SOURCE_DIR}/cmake/check_negatives.cmake)
  set_tests_properties(${name}_negatives PROPERTIES
    LABELS "chapter;gpu;negative" SKIP_REGULAR_EXPRESSION "\\[tutorial-skip\\]")

  # The perturbation negatives (harness.cuh, Variant::perturb_negative): races that only the
  # perturbation build's delays expose reliably. A chapter has them when one of its own files
  # sets the flag on a registry entry; the test then lists them (--list) and requires exit 1
  # from each. In a normal build they may pass, so no test runs them there.
  if(TUTORIAL_PERTURB)
    file(GLOB perturb_scan ${CMAKE_CURRENT_SOURCE_DIR}/*.cu ${CMAKE_CURRENT_SOURCE_DIR}/*.cuh)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${perturb_scan})
    set(has_perturb_negatives FALSE)
    foreach(f IN LISTS perturb_scan)
      file(STRINGS ${f} flag_line REGEX "\\.perturb_negative *= *true" LIMIT_COUNT 1)
      if(flag_line)
        set(has_perturb_negatives TRUE)
      endif()
    endforeach()
    if(has_perturb_negatives)
      add_test(NAME ${name}_perturb_negatives
        COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${name}> -DKIND=perturb
                -P ${PROJECT_SOURCE_DIR}/cmake/check_negatives.cmake)
      set_tests_properties(${name}_perturb_negatives PROPERTIES
        LABELS "chapter;gpu;perturb" SKIP_REGULAR_EXPRESSION "\\[tutorial-skip\\]")
    endif()
  endif()

  add_test(NAME ${name}_bad_input
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${name}>
            -P ${PROJECT_SOURCE_DIR}/cmake/check_bad_input.cmake)
  set_tests_properties(${name}_bad_input PROPERTIES LABELS "chapter;cli")

  add_test(NAME ${name}_skips
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${name}>
            -P ${PROJECT_SOURCE_DIR}/cmake/check_skip.cmake)
  set_tests_properties(${name}_skips PROPERTIES LABELS "chapter;cli")

  tutorial_add_exercise(${name} "${bin_archs}" "${archs}" "${ARG_SOURCES}" "${ARG_LIBRARIES}")

  set(expect ${CMAKE_CURRENT_SOURCE_DIR}/asm_expect.txt)
  if(NOT EXISTS ${expect})
    message(FATAL_ERROR "${name}: ${expect} is missing (the PTX/SASS assertions)")
  endif()
  if(Python3_Interpreter_FOUND)
    add_test(NAME ${name}_ptx
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_asm.py
              --kind ptx --expect ${expect} --ptx ${ptx_files})
    set_tests_properties(${name}_ptx PROPERTIES LABELS "inspect")
    if(TUTORIAL_CUOBJDUMP)
      add_test(NAME ${name}_sass
        COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_asm.py
                --kind sass --expect ${expect} --binary $<TARGET_FILE:${name}>
                --cuobjdump ${TUTORIAL_CUOBJDUMP})
    else()
      # Listed, and reported as skipped with the reason, so a missing tool is never silent.
      add_test(NAME ${name}_sass
        COMMAND ${Python3_EXECUTABLE} -c
                "print('SKIP: cuobjdump not found, so the SASS assertions cannot run; install it (README.md, Two commands) and reconfigure'); raise SystemExit(77)")
    endif()
    set_tests_properties(${name}_sass PROPERTIES LABELS "inspect;sass" SKIP_RETURN_CODE 77)
    # Every rule can fail: each `mutate` counterexample of asm_expect.txt is built (PTX, and
    # SASS through ptxas + cuobjdump when cuobjdump is found) and must be rejected by its rule;
    # every require rule has one (tools/check_rules.py). Label rules.
    set(ptx_nums "")
    foreach(a IN LISTS archs)
      string(REGEX MATCH "^[0-9]+a?" num "${a}")
      list(APPEND ptx_nums ${num})
    endforeach()
    set(sass_nums "")
    foreach(a IN LISTS bin_archs)
      if(NOT a MATCHES "-virtual$")
        string(REGEX MATCH "^[0-9]+a?" num "${a}")
        list(APPEND sass_nums ${num})
      endif()
    endforeach()
    list(REMOVE_DUPLICATES sass_nums)
    set(rules_sass "")
    if(TUTORIAL_CUOBJDUMP)
      set(rules_sass --sass-archs ${sass_nums} --binary $<TARGET_FILE:${name}>
                     --cuobjdump ${TUTORIAL_CUOBJDUMP})
    endif()
    add_test(NAME ${name}_rules
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_rules.py
              --chapter ${CMAKE_CURRENT_SOURCE_DIR} --nvcc ${CMAKE_CUDA_COMPILER}
              --work ${CMAKE_BINARY_DIR}/rules/${name} --ptx-archs ${ptx_nums}
              --ptx ${ptx_files} ${rules_sass})
    # One nvcc build per counterexample: chapter 16 (about 60 mutations) takes about 20 minutes
    # on two cores, past CTest's default limit.
    set_tests_properties(${name}_rules PROPERTIES LABELS "rules" TIMEOUT 2400)
  endif()
endfunction()

# The architectures of a target built from a chapter's code (the chapter, its exercises, its
# GPU tests), and the same list as TUTORIAL_BUILT_ARCHS: the arch gate (common/arch_probe.cuh)
# reads it to tell an sm_90a image from an sm_90 one (the runtime reports 90 for both) and
# names it in the skip message when the binary has no code for the GPU it runs on. A target
# built for 90a-real without it would skip its sm_90a-only variants as if they were missing.
function(tutorial_set_archs target archs)
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${archs}")
  string(REPLACE ";" "," built_archs "${archs}")
  target_compile_definitions(${target} PRIVATE TUTORIAL_BUILT_ARCHS="${built_archs}")
endfunction()

# Flags every CUDA target of the tutorial gets: warnings on, -lineinfo so compute-sanitizer
# and Nsight Compute can point at source lines.
function(tutorial_cuda_flags target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo -Xcompiler=-Wall,-Wextra>
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)
endfunction()

# A chapter's exercise is made from its solution: tools/exercise.py turns the
# EXERCISE-BEGIN/END regions of the chapter's files into TODO gaps and copies the rest.
#   - A student's copy, exercises/NN_topic/ (tools/exercise.py new NN; not tracked by git), is
#     built as <name>_exercise from its own main.cu (a quoted #include looks in the including
#     file's folder first, so it picks up the copy's kernels). It is outside `all`: a half-done
#     copy never breaks `cmake --build build` or the test preset; it is built when asked for
#     (--target <name>_exercise), by `tools/exercise.py check NN` on a GPU machine, and by
#     CTest <name>_exercise (label "student-exercise", outside the test preset), which builds
#     it and runs it with --check-only.
#   - <name>_exercise_check (label "exercise_check", in CI): `tools/exercise.py check` on the
#     exercise as shipped must FAIL, naming the missing protocol steps (so the gaps are real
#     and the rules can see them), and on the chapter's own files it must pass. No GPU: the
#     copy is compiled to PTX and a cubin for one architecture and held to asm_expect.txt.
#   - With TUTORIAL_BUILD_EXERCISES=ON, <name>_exercise_unsolved is the generated exercise
#     built for the GPU, and <name>_exercise_unsolved_fails (label "exercise", the GPU job)
#     requires it to FAIL the chapter's check: the gaps are real.
function(tutorial_add_exercise name bin_archs ptx_archs sources libraries)
  get_filename_component(topic ${CMAKE_CURRENT_SOURCE_DIR} NAME)  # NN_topic
  if(NOT Python3_Interpreter_FOUND)
    return()
  endif()
  file(GLOB chapter_files CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cu
       ${CMAKE_CURRENT_SOURCE_DIR}/*.cuh ${CMAKE_CURRENT_SOURCE_DIR}/*.h
       ${CMAKE_CURRENT_SOURCE_DIR}/*.hpp ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  set(has_gaps "")
  foreach(f IN LISTS chapter_files)
    file(STRINGS ${f} gap REGEX "// EXERCISE-BEGIN:" LIMIT_COUNT 1)
    if(gap)
      set(has_gaps TRUE)
    endif()
  endforeach()

  # The student's copy, when there is one (configure again after making it).
  set(student_dir ${PROJECT_SOURCE_DIR}/exercises/${topic})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/exercises)
  if(EXISTS ${student_dir}/main.cu)
    set(student_sources ${sources})
    list(TRANSFORM student_sources PREPEND ${student_dir}/)
    add_executable(${name}_exercise EXCLUDE_FROM_ALL ${student_sources})
    target_include_directories(${name}_exercise PRIVATE ${student_dir})
    target_link_libraries(${name}_exercise PRIVATE tutorial_common ${libraries})
    tutorial_set_archs(${name}_exercise "${bin_archs}")
    # its skip message says that the student's code was not run, and names the no-GPU check
    string(SUBSTRING ${topic} 0 2 chapter_number)
    target_compile_definitions(${name}_exercise PRIVATE TUTORIAL_EXERCISE="${chapter_number}")
    tutorial_cuda_flags(${name}_exercise)
    add_test(NAME ${name}_exercise_build
      COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target ${name}_exercise)
    set_tests_properties(${name}_exercise_build PROPERTIES LABELS "student-exercise"
      FIXTURES_SETUP ${name}_exercise_built)
    add_test(NAME ${name}_exercise COMMAND ${name}_exercise --check-only)
    set_tests_properties(${name}_exercise PROPERTIES LABELS "student-exercise" SKIP_RETURN_CODE 77
      FIXTURES_REQUIRED ${name}_exercise_built)
  endif()

  if(NOT has_gaps)
    return()
  endif()
  # CI: the exercise as shipped fails tools/exercise.py check, the chapter's own files pass it.
  # One architecture, the newest the binary is built for; the solution's PTX is the build's
  # own listing when there is one for that architecture (only ptxas and cuobjdump run again).
  list(GET bin_archs -1 check_arch)
  string(REGEX MATCH "^[0-9]+a?" check_arch "${check_arch}")
  set(solution_ptx "")
  foreach(a IN LISTS ptx_archs)
    string(REGEX MATCH "^[0-9]+a?" a "${a}")
    if(a STREQUAL check_arch)
      set(solution_ptx ${CMAKE_BINARY_DIR}/ptx/${name}.sm_${a}.ptx)
    endif()
  endforeach()
  add_test(NAME ${name}_exercise_check
    COMMAND ${CMAKE_COMMAND} -DPYTHON=${Python3_EXECUTABLE}
            -DTOOL=${PROJECT_SOURCE_DIR}/tools/exercise.py -DTOPIC=${topic} -DARCH=${check_arch}
            -DSOLUTION_PTX=${solution_ptx} -DCUOBJDUMP=${TUTORIAL_CUOBJDUMP}
            -DBUILD=${CMAKE_BINARY_DIR}
            -P ${PROJECT_SOURCE_DIR}/cmake/check_exercise_check.cmake)
  set_tests_properties(${name}_exercise_check PROPERTIES LABELS "exercise_check"
    SKIP_REGULAR_EXPRESSION "\\[tutorial-skip\\]")

  # GPU job: the unsolved exercise, generated at build time, must fail its check.
  if(TUTORIAL_BUILD_EXERCISES)
    set(unsolved_parent ${CMAKE_BINARY_DIR}/exercises-unsolved)
    set(unsolved_files "")
    foreach(f IN LISTS chapter_files)
      get_filename_component(f_name ${f} NAME)
      list(APPEND unsolved_files ${unsolved_parent}/${topic}/${f_name})
    endforeach()
    add_custom_command(OUTPUT ${unsolved_files}
      COMMAND ${CMAKE_COMMAND} -E rm -rf ${unsolved_parent}/${topic}
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/exercise.py new ${topic}
              --into ${unsolved_parent}
      DEPENDS ${chapter_files} ${PROJECT_SOURCE_DIR}/tools/exercise.py
      COMMENT "Unsolved exercise of ${name}"
      VERBATIM)
    set(unsolved_sources ${sources})
    list(TRANSFORM unsolved_sources PREPEND ${unsolved_parent}/${topic}/)
    add_executable(${name}_exercise_unsolved ${unsolved_sources})
    target_include_directories(${name}_exercise_unsolved PRIVATE ${unsolved_parent}/${topic})
    target_link_libraries(${name}_exercise_unsolved PRIVATE tutorial_common ${libraries})
    tutorial_set_archs(${name}_exercise_unsolved "${bin_archs}")
    tutorial_cuda_flags(${name}_exercise_unsolved)
    add_test(NAME ${name}_exercise_unsolved_fails
      COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${name}_exercise_unsolved>
              -P ${PROJECT_SOURCE_DIR}/cmake/check_exercise_fails.cmake)
    set_tests_properties(${name}_exercise_unsolved_fails PROPERTIES
      LABELS "exercise" SKIP_REGULAR_EXPRESSION "\\[tutorial-skip\\]")
  endif()
endfunction()
