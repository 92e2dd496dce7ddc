# What `cmake --install` puts on a node, and the Debian package `cpack -G DEB` makes of it
# (docs/real-cluster.md, "Install"): the two programs, libgridcast (with a SONAME) and its
# headers, a pkg-config file, the MPI shim, the Python package (its rules in
# client/python/CMakeLists.txt), the systemd unit and an example configuration.
# Nothing to build or test with: a node needs the runtime libraries only.
include(GNUInstallDirs)

install(TARGETS gridcast gridcastd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS libgridcast LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Unspecified)
if(TARGET gridcast-mpi)
  install(TARGETS gridcast-mpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(FILES include/gridcast/gridcast.h include/gridcast/gridcast.hpp include/gridcast/result.h
              include/gridcast/status.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gridcast)

# gridcast.pc finds the prefix from where it lies (pkg-config's ${pcfiledir}): right under any
# `cmake --install --prefix`, and in the package.
file(RELATIVE_PATH pc_to_prefix "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")
configure_file(cmake/gridcast.pc.in ${CMAKE_BINARY_DIR}/gridcast.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/gridcast.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The configuration's directory: /etc/gridcast under the prefix /usr (a package's, as
# GNUInstallDirs has it), else etc/gridcast in the prefix. Decided when installing, where
# `cmake --install --prefix` may set another prefix than the build's.
set(gridcast_config_dir_rule "
  if(\"\${CMAKE_INSTALL_PREFIX}\" STREQUAL \"/usr\")
    set(config_dir /etc/gridcast)
  else()
    set(config_dir \"\${CMAKE_INSTALL_PREFIX}/etc/gridcast\")
  endif()")
# The unit names the programs and the configuration where the install puts them (the
# repository's says /usr/local/bin and /etc/gridcast).
install(CODE "${gridcast_config_dir_rule}
  file(READ \"${PROJECT_SOURCE_DIR}/deploy/systemd/gridcastd.service\" unit)
  string(REPLACE \"/usr/local/bin/\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/\" unit \"\${unit}\")
  string(REPLACE \"/etc/gridcast/\" \"\${config_dir}/\" unit \"\${unit}\")
  file(WRITE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/gridcastd.service\" \"\${unit}\")
  message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/gridcastd.service\")
  file(INSTALL \"${PROJECT_SOURCE_DIR}/deploy/systemd/gridcastd.yaml\" DESTINATION \"\${config_dir}\")  # DESTDIR its own
")
install(FILES docs/real-cluster.md docs/daemon-settings.md docs/cli-reference.md docs/operations.md docs/topology.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_PACKAGE_NAME gridcast)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Peer-to-peer bulk distribution of one payload to many nodes")
set(CPACK_PACKAGE_CONTACT "gridcast maintainers <gridcast@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_STRIP_FILES ON)
# Depends: the shared libraries the binaries load, as dpkg-shlibdeps finds them; no -dev package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The Python package (client/python/) is built for Debian 12's python3, 3.11; a node without it
# has the rest.
if(TARGET gridcast_python)
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3 (>= 3.11), python3 (<< 3.12), python3-numpy")
endif()
# The example configuration is the node's own once edited: an upgrade keeps it. Written when
# the package is made (cmake/cpack_project_config.cmake), for the prefix it is made for.
set(CPACK_GRIDCAST_CONFFILES ${CMAKE_BINARY_DIR}/debian/conffiles)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_SOURCE_DIR}/cmake/cpack_project_config.cmake)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_SOURCE_DIR}/deploy/debian/postinst ${CMAKE_SOURCE_DIR}/deploy/debian/postrm ${CPACK_GRIDCAST_CONFFILES})
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
