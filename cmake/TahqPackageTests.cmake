# SPDX-License-Identifier: MIT
include(${CMAKE_CURRENT_LIST_DIR}/TahqPublicSymbols.cmake)
string(REPLACE ";" "," tahq_headers_arg "${TAHQ_PUBLIC_HEADERS}")
# Tests of tahq as a package:
#   shared_exports    libtahq.so exports exactly the functions include/*.h
#                     declare (cmake/check_exports.cmake)
#   package_consumer  installs this build into a temporary prefix, then
#                     builds and runs a small program against it twice: a
#                     CMake project with find_package(tahq), and a plain
#                     compiler call with pkg-config (tests/package/); then
#                     moves the prefix and runs the installed programs
#   package_library_only  libtahq alone builds without jansson
find_program(TAHQ_NM NAMES nm)
if(TAHQ_NM)
  add_test(NAME shared_exports
           COMMAND ${CMAKE_COMMAND} -DNM=${TAHQ_NM} -DLIB=$<TARGET_FILE:tahq_shared>
                   -DHEADER=${tahq_headers_arg}
                   -DMODULE=${PROJECT_SOURCE_DIR}/cmake/TahqPublicSymbols.cmake
                   -P ${PROJECT_SOURCE_DIR}/cmake/check_exports.cmake)
  set_tests_properties(shared_exports PROPERTIES LABELS "package;unit" TIMEOUT 60)
  # the control: with tahq_encode left out of the declared list the check
  # must fail, naming it as exported but not declared
  add_test(NAME shared_exports_control
           COMMAND ${CMAKE_COMMAND} -DNM=${TAHQ_NM} -DLIB=$<TARGET_FILE:tahq_shared>
                   -DHEADER=${tahq_headers_arg} -DDROP=tahq_encode
                   -DMODULE=${PROJECT_SOURCE_DIR}/cmake/TahqPublicSymbols.cmake
                   -P ${PROJECT_SOURCE_DIR}/cmake/check_exports.cmake)
  set_tests_properties(shared_exports_control PROPERTIES LABELS "package;unit" TIMEOUT 60
                       PASS_REGULAR_EXPRESSION "exported, not declared: tahq_encode\n")
else()
  message(STATUS "tahq: nm not found; test shared_exports not registered")
endif()

# Not in a sanitizer build: the consumers are built without the sanitizer
# runtimes that an instrumented libtahq.a needs.
if(TAHQ_SANITIZE)
  message(STATUS "tahq: TAHQ_SANITIZE=ON: test package_consumer not registered")
  return()
endif()
find_program(TAHQ_PKG_CONFIG NAMES pkg-config pkgconf)
add_test(NAME package_consumer
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/package/consumer_test.sh
                 ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/package_consumer
                 ${CMAKE_C_COMPILER} ${CMAKE_COMMAND} "${TAHQ_PKG_CONFIG}")
set_tests_properties(package_consumer PROPERTIES LABELS package TIMEOUT 300)

# libtahq alone, without jansson (a Debug build of the library: about a
# minute of CPU)
add_test(NAME package_library_only
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/package/library_only_test.sh
                 ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/package_library_only
                 ${CMAKE_COMMAND})
set_tests_properties(package_library_only PROPERTIES LABELS package TIMEOUT 600)
