# Install layout (make install PREFIX=... [DESTDIR=...], or cmake --install):
#   bin/numalock                          the command
#   lib/libnumalock.so.0, libnumalock.a   the library (shared, static)
#   lib/libnumalock-preload.so            the pthread interposer (numalock run)
#   include/numalock/*.h, numalock.hpp    public headers (C11, C++17)
#   share/numalock/                       default, quick and apps suites, report.py,
#                                         compare.py (numalock compare)
#   bin/numalock-leveldb-bench            the apps suite's LevelDB driver (when built)
#   lib/pkgconfig/numalock.pc             pkg-config (relocatable: ${pcfiledir})
#   lib/cmake/numalock/                   find_package(numalock): numalock::numalock
#                                         (shared), numalock::numalock_static
# The command finds share/numalock and lib/ relative to its own executable
# (tools/paths.c), so an installed tree can be moved as a whole. The build
# tree has the same shape: BUILD/share/numalock links to the source files.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(NL_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/numalock)
set(NL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/numalock)
set(NL_DATA_FILES bench/default-suite.txt bench/quick-suite.txt bench/apps-suite.txt tools/report.py
  tools/compare.py scripts/requirements.txt sim/machines.txt)

# bindir -> datadir, bindir -> libdir, relative, for tools/paths.c
file(RELATIVE_PATH NL_REL_DATADIR ${CMAKE_INSTALL_FULL_BINDIR}
     ${CMAKE_INSTALL_PREFIX}/${NL_INSTALL_DATADIR})
file(RELATIVE_PATH NL_REL_LIBDIR ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
target_compile_definitions(numalock_cli PRIVATE NL_REL_DATADIR="${NL_REL_DATADIR}"
  NL_REL_LIBDIR="${NL_REL_LIBDIR}")

# the build tree's share/numalock: links to the sources, and python3 to the
# checkout's .venv (made by `make venv`; `numalock report` falls back to the
# python3 on PATH while it does not exist)
set(NL_BUILD_DATADIR ${CMAKE_BINARY_DIR}/share/numalock)
file(MAKE_DIRECTORY ${NL_BUILD_DATADIR})
foreach(f ${NL_DATA_FILES})
  get_filename_component(name ${f} NAME)
  file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${f} ${NL_BUILD_DATADIR}/${name} SYMBOLIC)
endforeach()
file(CREATE_LINK ${CMAKE_SOURCE_DIR}/.venv/bin/python3 ${NL_BUILD_DATADIR}/python3 SYMBOLIC)

# the static archive is libnumalock.a beside libnumalock.so
set_target_properties(numalock_static PROPERTIES OUTPUT_NAME numalock)

install(TARGETS numalock numalock_static EXPORT numalockTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS numalock_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET numalock_sim)
  install(TARGETS numalock_sim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET numalock_preload)
  install(TARGETS numalock_preload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/numalock DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
foreach(f ${NL_DATA_FILES})
  if(f MATCHES "[.]py$")
    install(PROGRAMS ${CMAKE_SOURCE_DIR}/${f} DESTINATION ${NL_INSTALL_DATADIR})
  else()
    install(FILES ${CMAKE_SOURCE_DIR}/${f} DESTINATION ${NL_INSTALL_DATADIR})
  endif()
endforeach()

# CMake package
install(EXPORT numalockTargets NAMESPACE numalock:: DESTINATION ${NL_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/numalockConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/numalockConfig.cmake INSTALL_DESTINATION ${NL_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/numalockConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/numalockConfig.cmake
  ${CMAKE_BINARY_DIR}/cmake/numalockConfigVersion.cmake DESTINATION ${NL_INSTALL_CMAKEDIR})

# pkg-config, relative to the .pc file's own folder
file(RELATIVE_PATH NL_PC_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" NL_PC_PREFIX "${NL_PC_PREFIX}")
file(RELATIVE_PATH NL_PC_LIBDIR ${CMAKE_INSTALL_PREFIX} ${CMAKE_INSTALL_FULL_LIBDIR})
file(RELATIVE_PATH NL_PC_INCLUDEDIR ${CMAKE_INSTALL_PREFIX} ${CMAKE_INSTALL_FULL_INCLUDEDIR})
configure_file(${CMAKE_SOURCE_DIR}/cmake/numalock.pc.in ${CMAKE_BINARY_DIR}/cmake/numalock.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/numalock.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
