# Installs headers, both libraries, the launcher, a CMake package (find_package(DeepComm)) and a
# pkg-config file.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/deepcomm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS deepcomm EXPORT DeepCommTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET nccl)
  install(TARGETS nccl EXPORT DeepCommTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/deepcomm)
endif()
install(EXPORT DeepCommTargets NAMESPACE DeepComm:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/DeepComm)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/DeepCommConfig.cmake.in
  ${PROJECT_BINARY_DIR}/DeepCommConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/DeepComm)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/DeepCommConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/DeepCommConfig.cmake ${PROJECT_BINARY_DIR}/DeepCommConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/DeepComm)

configure_file(${PROJECT_SOURCE_DIR}/cmake/deepcomm.pc.in ${PROJECT_BINARY_DIR}/deepcomm.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/deepcomm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
