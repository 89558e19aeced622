# The tour: run every chapter at full size, then print one summary of each chapter's point.
# Usage: cmake -DBIN_DIR=... -DRESULTS_DIR=... -DCHAPTERS=ch00_x,ch01_y,... -DPYTHON=...
#              -DSUMMARY_SCRIPT=tools/tour_summary.py -DPLOT_SCRIPT=tools/plot_results.py
#              -DTIMELINE_SCRIPT=tools/plot_timeline.py -P tour.cmake
# Each chapter writes RESULTS_DIR/<chapter>.json; tour_status.txt records each exit code, so
# the summary (tools/tour_summary.py, which also writes tour.json) lists chapters that skipped
# (77: no suitable GPU) or failed. Any exit other than 0 or 77 fails the tour after all
# chapters have run.
string(REPLACE "," ";" CHAPTERS "${CHAPTERS}")
file(MAKE_DIRECTORY ${RESULTS_DIR})
set(status_file ${RESULTS_DIR}/tour_status.txt)
file(WRITE ${status_file} "")
set(failed "")
foreach(ch IN LISTS CHAPTERS)
  message("\n================ ${ch} ================")
  set(json ${RESULTS_DIR}/${ch}.json)
  file(REMOVE ${json})  # this tour's results only
  execute_process(COMMAND ${BIN_DIR}/${ch} --json=${json}
    RESULT_VARIABLE rc ECHO_OUTPUT_VARIABLE ECHO_ERROR_VARIABLE
    OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(why "")
  if(rc EQUAL 77)
    string(REGEX MATCH "SKIP: [^\n]*" why "${out}")
    string(REGEX REPLACE "^SKIP: " "" why "${why}")
  elseif(NOT rc EQUAL 0)
    list(APPEND failed ${ch})
  endif()
  string(REPLACE "\t" " " why "${why}")
  file(APPEND ${status_file} "${ch}\t${rc}\t${why}\n")
endforeach()

message("\n================ tour summary ================")
if(PYTHON)
  execute_process(COMMAND ${PYTHON} ${SUMMARY_SCRIPT} ${RESULTS_DIR} --out ${RESULTS_DIR}/tour.json
    RESULT_VARIABLE summary_rc)
  if(NOT summary_rc EQUAL 0)
    message(WARNING "tools/tour_summary.py failed (${summary_rc})")
  endif()
  file(GLOB measured ${RESULTS_DIR}/ch[0-9][0-9]_*.json)
  if(NOT measured)
    # nothing ran (tools/tour_summary.py said why): nothing to plot or trace either
    if(failed)
      message(FATAL_ERROR "chapters that failed: ${failed}")
    endif()
    return()
  endif()
  # Plots, when matplotlib is there (optional: the tour never fails for want of it).
  execute_process(COMMAND ${PYTHON} ${PLOT_SCRIPT} ${RESULTS_DIR} ${RESULTS_DIR}/plots
    RESULT_VARIABLE plot_rc OUTPUT_VARIABLE plot_out ERROR_VARIABLE plot_err)
  message("plots: ${plot_out}${plot_err}")
  # The overlap, side by side (docs/timelines.md): the kernels tools/timeline_side_by_side.txt
  # names, each traced on a small problem (--check-only: the traced runs are checked too),
  # drawn on one time axis.
  set(timeline_dir ${RESULTS_DIR}/timelines)
  file(MAKE_DIRECTORY ${timeline_dir})
  set(side "")
  file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/../tools/timeline_side_by_side.txt picks REGEX "^ch")
  foreach(pick ${picks})
    string(REPLACE ":" ";" parts "${pick}")
    list(GET parts 0 ch)
    list(GET parts 1 variant)
    if(NOT EXISTS ${BIN_DIR}/${ch})
      continue()
    endif()
    string(REGEX MATCH "^ch[0-9][0-9]" short "${ch}")
    file(REMOVE ${timeline_dir}/${short}.json)
    execute_process(COMMAND ${BIN_DIR}/${ch} --check-only --seed=7
                            --timeline=${timeline_dir}/${short}.json
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(rc EQUAL 0 AND EXISTS ${timeline_dir}/${short}.json)
      list(APPEND side ${timeline_dir}/${short}.json:${variant})
    elseif(NOT rc EQUAL 77)
      list(APPEND failed "${ch}(--timeline)")
    endif()
  endforeach()
  list(LENGTH side n_side)
  if(n_side GREATER 1)
    execute_process(COMMAND ${PYTHON} ${TIMELINE_SCRIPT} ${side} --blocks 1
                            -o ${RESULTS_DIR}/plots/timeline_side_by_side.png
      RESULT_VARIABLE side_rc OUTPUT_VARIABLE side_out ERROR_VARIABLE side_err)
    message("timelines: ${side_out}${side_err}")
  endif()
else()
  message("python3 was not found: no summary table; each chapter's JSON is in ${RESULTS_DIR}")
endif()
if(failed)
  message(FATAL_ERROR "chapters that failed: ${failed}")
endif()
