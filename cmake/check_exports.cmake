# SPDX-License-Identifier: MIT
# cmake -DNM=nm -DLIB=libtahq.so -DHEADER=h1,h2,... -DMODULE=TahqPublicSymbols.cmake [-DDROP=NAME]
#       -P check_exports.cmake
# Fails unless the library's defined dynamic function symbols are exactly
# the functions the headers declare: nothing internal leaks out (such as
# tahq_pack_tile or tahq_header_write) and nothing declared is missing.
# -DDROP=NAME removes one name from the declared list: the control test
# shared_exports_control, which must fail (the library then exports an
# undeclared function).
include(${MODULE})
string(REPLACE "," ";" HEADER "${HEADER}")
tahq_public_symbols(declared ${HEADER})
if(DROP)
  list(REMOVE_ITEM declared ${DROP})
endif()
list(LENGTH declared n_declared)
if(n_declared LESS 20)
  message(FATAL_ERROR "only ${n_declared} declarations found in ${HEADER}: the parser is broken")
endif()
execute_process(COMMAND ${NM} -D --defined-only ${LIB}
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D ${LIB} failed (${rc})")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(exported "")
foreach(line IN LISTS lines)
  # "0000000000001234 T tahq_encode@@TAHQ_0": code symbols only
  if(line MATCHES "^[0-9a-f]+ [TtWi] ([A-Za-z_][A-Za-z0-9_]*)")
    list(APPEND exported ${CMAKE_MATCH_1})
  endif()
endforeach()
list(SORT exported)
set(extra ${exported})
list(REMOVE_ITEM extra ${declared})
set(missing ${declared})
list(REMOVE_ITEM missing ${exported})
list(LENGTH exported n_exported)
if(extra OR missing)
  message(STATUS "exported, not declared: ${extra}")
  message(STATUS "declared, not exported: ${missing}")
  message(FATAL_ERROR "FAIL: ${LIB} exports ${n_exported} functions; not declared in the header: "
                      "[${extra}]; declared but not exported: [${missing}]")
endif()
message(STATUS "ok: ${LIB} exports exactly the ${n_declared} functions the public headers declare")
