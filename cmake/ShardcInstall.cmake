# `cmake --install build --prefix P` gives an outside project everything it
# needs to embed shardc (docs/embedding.md):
#   P/include/shardc/...           headers, the TableGen'd .inc files too
#   P/lib/libShardc*.a             the libraries
#   P/bin/shardc, shardc-opt       the tools
#   P/lib/cmake/shardc/            find_package(shardc CONFIG): shardc::engine
#   P/lib/pkgconfig/shardc.pc      the same for pkg-config
# Included at the end of the top-level CMakeLists.txt, once every target
# exists.

include(GNUInstallDirs)

# Every library an embedder links, in link order (a library before the ones
# it uses). The only list of them: the install rules, the CMake package and
# the pkg-config file are all generated from it.
set(SHARDC_INSTALLED_LIBRARIES
  ShardcEngine
  ShardcRuntime
  ShardcTransforms
  ShardcAnalysis
  ShardcImport
  ShardcExport
  ShardcInterpreter
  MLIRShardcDialect
  ShardcSupport
)
set(SHARDC_INSTALLED_TOOLS shardc shardc-opt)

install(TARGETS ${SHARDC_INSTALLED_LIBRARIES}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT shardc)
install(TARGETS ${SHARDC_INSTALLED_TOOLS}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT shardc)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/shardc
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT shardc
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/shardc
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT shardc
  FILES_MATCHING PATTERN "*.inc" PATTERN "CMakeFiles" EXCLUDE)

# What each installed library links, as an outside project can name it:
# shardc's own libraries become shardc::X; header-only Eigen (private to the
# interpreter) drops out; OpenBLAS, CBC, Open MPI, ONNX's onnx_proto and
# protobuf become their libraries' paths (FindMPI's C component would make
# a C++-only consumer enable C);
# MLIR, LLVM and Threads targets stay as they are (shardcConfig.cmake finds
# their packages).
find_package(MPI REQUIRED COMPONENTS C)
function(shardc_exported_link_libraries lib out)
  get_target_property(deps ${lib} INTERFACE_LINK_LIBRARIES)
  set(result "")
  foreach(dep ${deps})
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
    if(dep IN_LIST SHARDC_INSTALLED_LIBRARIES)
      list(APPEND result "shardc::${dep}")
    elseif(dep STREQUAL "PkgConfig::OpenBLAS")
      list(APPEND result ${OpenBLAS_LINK_LIBRARIES})
    elseif(dep STREQUAL "PkgConfig::Cbc")
      list(APPEND result ${Cbc_LINK_LIBRARIES})
    elseif(dep STREQUAL "MPI::MPI_C")
      list(APPEND result ${MPI_C_LIBRARIES})
    elseif(dep STREQUAL "onnx_proto")
      # ONNX's schema and the protobuf runtime it is compiled against: the
      # importer's objects call into both.
      get_target_property(onnx_proto_location onnx_proto LOCATION)
      list(APPEND result ${onnx_proto_location} ${Protobuf_LIBRARIES})
    elseif(dep MATCHES "^(Eigen3::Eigen|nlohmann_json::nlohmann_json)$"
           OR dep MATCHES "^\\$<")
      # header-only, or a generator expression of the build tree
    elseif(dep)
      list(APPEND result "${dep}")
    endif()
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

set(SHARDC_TARGETS_BODY "")
foreach(lib ${SHARDC_INSTALLED_LIBRARIES})
  shardc_exported_link_libraries(${lib} deps)
  string(APPEND SHARDC_TARGETS_BODY
    "add_library(shardc::${lib} STATIC IMPORTED)\n"
    "set_target_properties(shardc::${lib} PROPERTIES\n"
    "  IMPORTED_LOCATION \"\${_shardc_prefix}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:${lib}>\"\n"
    "  INTERFACE_LINK_LIBRARIES \"${deps}\")\n")
endforeach()
list(TRANSFORM SHARDC_INSTALLED_LIBRARIES PREPEND "shardc::"
  OUTPUT_VARIABLE SHARDC_ENGINE_LINKS)

set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/shardc)
set(staging ${PROJECT_BINARY_DIR}/install-staging)
configure_file(${PROJECT_SOURCE_DIR}/cmake/shardcTargets.cmake.in
  ${staging}/shardcTargets.cmake.in @ONLY)
file(GENERATE OUTPUT ${staging}/shardcTargets.cmake
  INPUT ${staging}/shardcTargets.cmake.in)
configure_file(${PROJECT_SOURCE_DIR}/cmake/shardcConfig.cmake.in
  ${staging}/shardcConfig.cmake @ONLY)
include(CMakePackageConfigHelpers)
write_basic_package_version_file(${staging}/shardcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${staging}/shardcConfig.cmake
  ${staging}/shardcConfigVersion.cmake ${staging}/shardcTargets.cmake
  DESTINATION ${cmake_dir} COMPONENT shardc)

# pkg-config: shardc's static libraries, then MLIR and LLVM as Debian's
# shared libraries (libMLIR.so holds every MLIR library; none of its static
# ones are linked beside it, so no option is registered twice).
list(TRANSFORM SHARDC_INSTALLED_LIBRARIES PREPEND "-l" OUTPUT_VARIABLE pc_libs)
string(JOIN " " SHARDC_PC_LIBS ${pc_libs})
set(SHARDC_PC_LLVM_LIBDIR ${LLVM_LIBRARY_DIR})
set(SHARDC_PC_LLVM_INCLUDEDIR ${LLVM_INCLUDE_DIR})
configure_file(${PROJECT_SOURCE_DIR}/cmake/shardc.pc.in
  ${staging}/shardc.pc @ONLY)
install(FILES ${staging}/shardc.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT shardc)
