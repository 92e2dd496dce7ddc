# Read by cpack, after CPackConfig.cmake and any `cpack -D`: the package's conffiles follow the
# prefix it is made for (`cpack -D CPACK_PACKAGING_INSTALL_PREFIX=/usr` from a build configured
# for /usr/local puts the configuration in /etc/gridcast, as cmake/install.cmake's rule does).
if(CPACK_PACKAGING_INSTALL_PREFIX STREQUAL "/usr")
  set(config_dir /etc/gridcast)
else()
  set(config_dir "${CPACK_PACKAGING_INSTALL_PREFIX}/etc/gridcast")
endif()
file(WRITE "${CPACK_GRIDCAST_CONFFILES}" "${config_dir}/gridcastd.yaml\n")
