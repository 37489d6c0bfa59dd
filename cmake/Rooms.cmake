# The library is built as rooms: one static library per folder, linked only to the rooms below it
# (DESIGN.md: nccl -> core -> plan, exec -> topology, compression, kernels, transports -> base).
#
# deepcomm_room(<name> DIR <folder> [DEPENDS <room>...]) declares target dc_<name>. Rooms are
# declared bottom-up and a room may only depend on rooms declared before it, so a cycle cannot be
# written down. What a room includes is checked too: before anything compiles, the build scans
# every room's sources for #include "<other room's folder>/..." and fails on any room that is not
# among its (transitive) dependencies.

set_property(GLOBAL PROPERTY DEEPCOMM_ROOMS "")

# Records a layer for the include check; deepcomm_room calls it, and so does the NCCL library
# (a shared library, not a room archive).
function(deepcomm_layer name dir)
  set(allowed ${dir})
  foreach(dep ${ARGN})
    get_property(known GLOBAL PROPERTY DEEPCOMM_ROOM_ALLOWED_${dep} SET)
    if(NOT known)
      message(FATAL_ERROR "room ${name} depends on room ${dep}, which is not declared yet: rooms are "
                          "declared bottom-up, so that no dependency cycle can be expressed")
    endif()
    get_property(dep_allowed GLOBAL PROPERTY DEEPCOMM_ROOM_ALLOWED_${dep})
    list(APPEND allowed ${dep_allowed})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set_property(GLOBAL PROPERTY DEEPCOMM_ROOM_ALLOWED_${name} ${allowed})
  set_property(GLOBAL PROPERTY DEEPCOMM_ROOM_DIR_${name} ${dir})
  set_property(GLOBAL APPEND PROPERTY DEEPCOMM_ROOMS ${name})
endfunction()

function(deepcomm_room name)
  cmake_parse_arguments(R "" "DIR" "DEPENDS" ${ARGN})
  deepcomm_layer(${name} ${R_DIR} ${R_DEPENDS})
  add_library(dc_${name} STATIC)
  target_include_directories(dc_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>)
  target_compile_options(dc_${name} PRIVATE -Wall -Wextra)
  deepcomm_instrument_for_fuzzing(dc_${name})
  foreach(dep ${R_DEPENDS})
    target_link_libraries(dc_${name} PUBLIC dc_${dep})
  endforeach()
  add_dependencies(dc_${name} deepcomm_layering)
endfunction()

# The include check, run before any room compiles (deepcomm_room makes every room depend on it).
add_custom_target(deepcomm_layering)

# Called once every layer is declared: writes the layer table and runs the scan.
function(deepcomm_check_layering)
  get_property(rooms GLOBAL PROPERTY DEEPCOMM_ROOMS)
  set(table "")
  set(sources "")
  foreach(room ${rooms})
    get_property(dir GLOBAL PROPERTY DEEPCOMM_ROOM_DIR_${room})
    get_property(allowed GLOBAL PROPERTY DEEPCOMM_ROOM_ALLOWED_${room})
    string(REPLACE ";" "," allowed_list "${allowed}")
    string(APPEND table "${room} ${dir} ${allowed_list}\n")
    file(GLOB_RECURSE room_sources CONFIGURE_DEPENDS
      ${PROJECT_SOURCE_DIR}/${dir}/*.h ${PROJECT_SOURCE_DIR}/${dir}/*.cpp
      ${PROJECT_SOURCE_DIR}/${dir}/*.inc ${PROJECT_SOURCE_DIR}/${dir}/*.cu ${PROJECT_SOURCE_DIR}/${dir}/*.cuh)
    list(APPEND sources ${room_sources})
  endforeach()
  set(table_file ${PROJECT_BINARY_DIR}/deepcomm_layers.txt)
  file(WRITE ${table_file} "${table}")
  set(stamp ${PROJECT_BINARY_DIR}/deepcomm_layering.stamp)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DTABLE=${table_file}
            -P ${PROJECT_SOURCE_DIR}/cmake/CheckLayering.cmake
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${sources} ${table_file} ${PROJECT_SOURCE_DIR}/cmake/CheckLayering.cmake
    COMMENT "Checking that each room includes only the rooms below it"
    VERBATIM)
  add_custom_target(deepcomm_layering_scan DEPENDS ${stamp})
  add_dependencies(deepcomm_layering deepcomm_layering_scan)
endfunction()
