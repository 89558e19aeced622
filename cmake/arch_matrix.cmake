# Which GPU runs what (docs/arch-matrix.md), from tools/arch_matrix.py. CTest label "arch":
#   arch_matrix_compile  every chapter's device code for sm_80, sm_86, sm_89, sm_90a, sm_100a
#                        and sm_120a (nvcc to PTX, then ptxas; no host code, no GPU), into
#                        <build>/arch-matrix/; a chapter that does not compile for a target is a
#                        result, not a failure
#   arch_matrix_gates    every chapter binary's --gates verdicts against those compile results:
#                        fails when a gate lets a variant run on a target whose compile lost one
#                        of its features, or a chapter run on a target it does not compile for
#   arch_matrix_page     the committed docs/arch-matrix.md is what this tree generates (the
#                        generated page is <build>/arch-matrix/arch-matrix.md); only when every
#                        chapter is configured (TUTORIAL_ONLY empty)
# `cmake --build build --target arch_matrix` regenerates docs/arch-matrix.md.
if(NOT Python3_Interpreter_FOUND)
  return()
endif()
get_property(arch_matrix_chapters GLOBAL PROPERTY TUTORIAL_CHAPTERS)
set(arch_matrix_work ${CMAKE_BINARY_DIR}/arch-matrix)
set(arch_matrix_tool ${PROJECT_SOURCE_DIR}/tools/arch_matrix.py)
set(arch_matrix_only "")
if(TUTORIAL_ONLY)
  set(arch_matrix_only --only "${TUTORIAL_ONLY}")
endif()
set(arch_matrix_jobs 2)  # the CI machine's cores

add_test(NAME arch_matrix_compile
  COMMAND ${Python3_EXECUTABLE} ${arch_matrix_tool} compile --root ${PROJECT_SOURCE_DIR}
          --work ${arch_matrix_work} --nvcc ${CMAKE_CUDA_COMPILER} --jobs ${arch_matrix_jobs}
          ${arch_matrix_only})
set_tests_properties(arch_matrix_compile PROPERTIES LABELS "arch" TIMEOUT 3600
  FIXTURES_SETUP arch_compiled RUN_SERIAL TRUE)

add_test(NAME arch_matrix_gates
  COMMAND ${Python3_EXECUTABLE} ${arch_matrix_tool} page --root ${PROJECT_SOURCE_DIR}
          --work ${arch_matrix_work} --bin ${CMAKE_BINARY_DIR}/bin --consistency
          ${arch_matrix_only})
set_tests_properties(arch_matrix_gates PROPERTIES LABELS "arch" FIXTURES_REQUIRED arch_compiled)

if(NOT TUTORIAL_ONLY)
  add_test(NAME arch_matrix_page
    COMMAND ${Python3_EXECUTABLE} ${arch_matrix_tool} page --root ${PROJECT_SOURCE_DIR}
            --work ${arch_matrix_work} --bin ${CMAKE_BINARY_DIR}/bin
            --check ${PROJECT_SOURCE_DIR}/docs/arch-matrix.md)
  set_tests_properties(arch_matrix_page PROPERTIES LABELS "arch" FIXTURES_REQUIRED arch_compiled)
endif()

add_custom_target(arch_matrix
  COMMAND ${Python3_EXECUTABLE} ${arch_matrix_tool} compile --root ${PROJECT_SOURCE_DIR}
          --work ${arch_matrix_work} --nvcc ${CMAKE_CUDA_COMPILER} ${arch_matrix_only}
  COMMAND ${Python3_EXECUTABLE} ${arch_matrix_tool} page --root ${PROJECT_SOURCE_DIR}
          --work ${arch_matrix_work} --bin ${CMAKE_BINARY_DIR}/bin ${arch_matrix_only}
          --write ${PROJECT_SOURCE_DIR}/docs/arch-matrix.md
  DEPENDS ${arch_matrix_chapters}
  USES_TERMINAL
  COMMENT "docs/arch-matrix.md: every chapter compiled for six targets, gates and results")
