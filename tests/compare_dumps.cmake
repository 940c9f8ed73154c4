# SPDX-License-Identifier: MIT
# compare_dumps.cmake - runs encode_dump built against libraries compiled at
# different optimization levels and requires identical output files.
#
#   cmake -DDUMPERS="exe1;exe2;..." -DWORK_DIR=dir -P compare_dumps.cmake
#
# The first program's output is the reference; every other output must be
# byte-for-byte identical.
if(NOT DUMPERS OR NOT WORK_DIR)
  message(FATAL_ERROR "compare_dumps: DUMPERS and WORK_DIR are required")
endif()
file(MAKE_DIRECTORY "${WORK_DIR}")
set(reference "")
set(index 0)
foreach(exe IN LISTS DUMPERS)
  set(dump "${WORK_DIR}/dump_${index}.bin")
  file(REMOVE "${dump}")
  execute_process(COMMAND "${exe}" "${dump}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
  string(STRIP "${text}" text)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "compare_dumps: ${exe} failed (${rc}): ${err}")
  endif()
  get_filename_component(name "${exe}" NAME)
  message(STATUS "${name}: ${text}")
  if(reference STREQUAL "")
    set(reference "${dump}")
  else()
    execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${reference}" "${dump}"
                    RESULT_VARIABLE same)
    if(NOT same EQUAL 0)
      message(FATAL_ERROR "compare_dumps: FAIL: output of ${name} differs from the reference "
                          "(${reference} vs ${dump})")
    endif()
  endif()
  math(EXPR index "${index} + 1")
endforeach()
list(LENGTH DUMPERS count)
message(STATUS "determinism: ${count} builds, identical message bytes, decoded values, bounds and primitives -> PASS")
