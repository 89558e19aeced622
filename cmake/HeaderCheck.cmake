# Every header compiles on its own (CTest `headers`, label headers).
#
# For each header under chapters/NN_topic/ (of the configured chapters) and common/ (*.cuh,
# *.hpp), a translation unit build/headers/<folder>/<header>.cu holds one line, the #include of
# that header, and nothing else. They form the OBJECT library tutorial_headers (not built by
# default). Each is compiled by nvcc for one virtual architecture (PTX only, no ptxas): the
# chapter's last architecture (90a for chapter 16's wgmma headers, 80/90 chapters 90), 90 for
# common/, with warnings off: the test asks only "does it compile alone", so a header that
# uses something it does not include fails with its name. The test builds the library with
# keep-going and lists every header whose translation unit failed (cmake/check_headers.cmake).
function(tutorial_add_header_check)
  set(header_dir ${CMAKE_BINARY_DIR}/headers)
  set(sources "")
  set(groups "")
  get_property(chapters GLOBAL PROPERTY TUTORIAL_CHAPTERS)
  # common/ and each configured chapter folder, with the architecture to compile for
  set(folders "common=90")
  foreach(ch IN LISTS chapters)
    string(REGEX REPLACE "^ch" "" topic ${ch})       # 01_sync_shared_loads
    get_property(archs GLOBAL PROPERTY TUTORIAL_ARCHS_${ch})
    list(GET archs -1 arch)
    string(REGEX MATCH "^[0-9]+a?" arch "${arch}")
    list(APPEND folders "chapters/${topic}=${arch}")
  endforeach()
  foreach(entry IN LISTS folders)
    string(REPLACE "=" ";" entry "${entry}")
    list(GET entry 0 folder)
    list(GET entry 1 arch)
    file(GLOB headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${folder}/*.cuh
         ${PROJECT_SOURCE_DIR}/${folder}/*.hpp)
    list(SORT headers)
    set(tus "")
    foreach(h IN LISTS headers)
      file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${h})
      set(tu ${header_dir}/${rel}.cu)
      set(text "// generated: does ${rel} compile on its own?\n#include \"${rel}\"\n")
      if(EXISTS ${tu})
        file(READ ${tu} old)
      else()
        set(old "")
      endif()
      if(NOT old STREQUAL text)
        file(WRITE ${tu} "${text}")
      endif()
      list(APPEND tus ${tu})
    endforeach()
    if(NOT tus)
      continue()
    endif()
    string(MAKE_C_IDENTIFIER "${folder}" id)
    set(target tutorial_headers_${id})
    add_library(${target} OBJECT EXCLUDE_FROM_ALL ${tus})
    # only the repository root: a header that needs its own folder on the include path (a
    # chapter-local include by short name) still finds it, since a quoted include looks in the
    # including file's folder first
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} PRIVATE tutorial_common)
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${arch}-virtual")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-w>)
    list(APPEND groups ${target})
  endforeach()
  add_custom_target(tutorial_headers DEPENDS ${groups})
  string(REPLACE ";" "," group_csv "${groups}")  # one argument, not many
  add_test(NAME headers
    COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DGENERATOR=${CMAKE_GENERATOR}
            -DTARGETS=${group_csv} -P ${PROJECT_SOURCE_DIR}/cmake/check_headers.cmake)
  # Some 80 translation units with the CUDA headers: minutes on two cores, more than the test
  # preset's default limit when other tests run beside it.
  set_tests_properties(headers PROPERTIES LABELS "headers" TIMEOUT 3600)
endfunction()
