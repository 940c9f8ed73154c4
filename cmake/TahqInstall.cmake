# SPDX-License-Identifier: MIT
# Installation: libtahq (static and shared), its headers, the tahq program,
# a CMake package (find_package(tahq) gives tahq::tahq and tahq::shared) and
# a pkg-config file (tahq.pc). Tested by package_consumer
# (cmake/TahqPackageTests.cmake).
include(GNUInstallDirs)
include(${CMAKE_CURRENT_LIST_DIR}/TahqPublicSymbols.cmake)
include(CMakePackageConfigHelpers)

install(TARGETS tahq tahq_shared
        EXPORT tahqTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${TAHQ_PUBLIC_HEADERS} ${PROJECT_BINARY_DIR}/include/tahq_version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The programs, and the data they find next to their bin/ folder
# (common/tahq_datadir.h): the plot scripts in share/tahq/plots (their
# tests stay behind), the corpus script tahq-train names.
foreach(program IN ITEMS tahq_cli tahq_sim_cli tahq_train_cli tahq_train_mpi)
  if(TARGET ${program})
    install(TARGETS ${program} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
if(TARGET tahq_cli OR TARGET tahq_sim_cli)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/plots/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tahq/plots
          FILES_MATCHING PATTERN "*.sh" PATTERN "*.gp" PATTERN "*.py" PATTERN "README.md"
          PATTERN "*_test.sh" EXCLUDE)
endif()
if(TARGET tahq_train_cli)
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/fetch_corpus.sh
          DESTINATION ${CMAKE_INSTALL_DATADIR}/tahq)
endif()
# The licence (MIT) goes with every install, in share/doc/tahq.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(TAHQ_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tahq)
install(EXPORT tahqTargets NAMESPACE tahq:: DESTINATION ${TAHQ_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tahqConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tahqConfig.cmake
                              INSTALL_DESTINATION ${TAHQ_CMAKE_DIR})
# 0.x releases: only the same minor version is compatible
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tahqConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tahqConfig.cmake ${PROJECT_BINARY_DIR}/tahqConfigVersion.cmake
        DESTINATION ${TAHQ_CMAKE_DIR})

# pkg-config: the paths are made absolute at install time when they are
# relative to the prefix (GNUInstallDirs' defaults).
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TAHQ_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(TAHQ_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(TAHQ_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(TAHQ_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
if(TAHQ_LIBM_LIB)
  set(TAHQ_PC_LIBS_PRIVATE "-lm -pthread")
else()
  set(TAHQ_PC_LIBS_PRIVATE "-pthread")
endif()
# first pass now; the prefix is filled in by the second, at install time
set(TAHQ_PC_PREFIX "@prefix@")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tahq.pc.in ${PROJECT_BINARY_DIR}/tahq.pc.in @ONLY)
# ${CMAKE_INSTALL_PREFIX} is read when installing, so --prefix is honoured
install(CODE "
  set(prefix \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_BINARY_DIR}/tahq.pc.in\" \"${PROJECT_BINARY_DIR}/tahq.pc\" @ONLY)
  file(INSTALL \"${PROJECT_BINARY_DIR}/tahq.pc\"
       DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\")
")

# ---------------------------------------------------------------------------
# Python wheel (pyproject.toml, built by scikit-build-core, which sets
# SKBUILD): libtahq.so goes into the package folder tahq/ as component
# "python", the only component the wheel installs. The file is installed
# under the plain name libtahq.so (a wheel holds no symlinks); the binding
# loads it by path. TAHQ_PYTHON_INSTALL adds the same rule to another build.
# ---------------------------------------------------------------------------
option(TAHQ_PYTHON_INSTALL "Install libtahq.so into <prefix>/tahq, component python" OFF)
if(SKBUILD OR TAHQ_PYTHON_INSTALL)
  install(FILES $<TARGET_FILE:tahq_shared>
          DESTINATION tahq
          RENAME libtahq${CMAKE_SHARED_LIBRARY_SUFFIX}
          COMPONENT python)
  install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION tahq COMPONENT python)
endif()
