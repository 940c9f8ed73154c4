# SPDX-License-Identifier: MIT
# The public headers, one audience each (include/tahq.h says which).
set(TAHQ_PUBLIC_HEADERS ${CMAKE_CURRENT_LIST_DIR}/../include/tahq.h
    ${CMAKE_CURRENT_LIST_DIR}/../include/tahq_spec.h
    ${CMAKE_CURRENT_LIST_DIR}/../include/tahq_paper_v1.h
    ${CMAKE_CURRENT_LIST_DIR}/../include/tahq_parallel.h)

# tahq_public_symbols(VAR HEADER...): the function names the public headers
# declare, sorted. A declaration starts in column 0 with its return type and
# names a function tahq_*; that is how include/*.h are written. Used to make
# the shared library's version script (ref/CMakeLists.txt) and by the test
# of its dynamic symbols (cmake/check_exports.cmake), so both read the same
# list: the headers.
function(tahq_public_symbols var)
  set(names "")
  foreach(header IN LISTS ARGN)
    file(STRINGS ${header} lines REGEX "^[a-z][a-z0-9_ ]*[ *]tahq_[a-z0-9_]+\\(")
    foreach(line IN LISTS lines)
      string(REGEX MATCH "tahq_[a-z0-9_]+\\(" name "${line}")
      string(REPLACE "(" "" name "${name}")
      list(APPEND names ${name})
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES names)
  list(SORT names)
  set(${var} ${names} PARENT_SCOPE)
endfunction()
