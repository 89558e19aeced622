# The Doxygen site, built from nothing: cmake -DDOXYGEN=<doxygen> -DDOXYFILE=<Doxyfile>
#   -DHTML_DIR=<site folder> -P docs_build.cmake  (run in the source root, as the Doxyfile's
#   relative names expect). Doxygen overwrites the pages it writes and leaves every other file
# of an earlier run in place, so a page that no longer exists (a symbol removed, a file
# renamed) would stay in the site with its dead links, and docs_links would check it. The old
# site goes first. Doxygen's warnings pass through; any warning fails (WARN_AS_ERROR).
file(REMOVE_RECURSE "${HTML_DIR}")
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "doxygen ${DOXYFILE} failed (exit ${rc}): see its warnings above")
endif()
