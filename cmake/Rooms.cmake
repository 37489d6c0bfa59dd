# The library is built as rooms: one static library per folder, linked only to the rooms below it
# (DESIGN.md: nccl -> core -> plan, exec -> topology, compression, kernels, transports -> base).
#
# deepcomm_room(<name> DIR <folder> [DEPENDS <room>...]) declares target dc_<name>. Rooms are
# declared bottom-up and a room may only depend on rooms declared before it, so a cycle cannot be
# written down. What a room includes is checked too (CheckLayering.cmake): before anything
# compiles, the build scans every room's sources and fails on
# - an #include "<other room's folder>/..." of a room that is not among its (transitive)
#   dependencies;
# - an include that runs upward between top-level folders (DEEPCOMM_LAYERS below), whatever the
#   dependencies say; folders are matched by name, so a layer's folder is covered before it exists;
# - a CUDA header (<cuda*.h>, <cu*.h>, <cuda/...>) outside the CUDA room, plugins/cuda.

# The layers between top-level folders, top to bottom: a folder may include the headers of the
# folders in its own layer (as its room's DEPENDS allow) and in the layers below it, never above.
# include/ holds the public headers: their types are every layer's vocabulary, so any folder
# includes them (as "deepcomm/..."), and they include no room.
set(DEEPCOMM_LAYERS
  "include src/nccl src/core"                 # the APIs
  "src/exec src/plan"                         # engine and planner
  "transports compression topology device"    # what the engine drives
  "base kernels")                             # the floor
# The CUDA room stands beside the layers: the only folder whose sources may include CUDA's headers
# and the only room given the toolkit's include directories (deepcomm_cuda_room). It may include
# the folders named here; no other folder includes it (it is loaded with dlopen).
set(DEEPCOMM_CUDA_ROOM_DIR plugins/cuda)
set(DEEPCOMM_CUDA_ROOM_MAY_INCLUDE device compression kernels base)
# The one file elsewhere that names a CUDA header: the public NCCL header takes cudaStream_t from
# <cuda_runtime.h> when the user's compiler finds it. The rooms compile with
# DEEPCOMM_NCCL_WITHOUT_CUDA_RUNTIME, so none of them sees a CUDA header through it.
set(DEEPCOMM_CUDA_HEADER_EXEMPT include/deepcomm/nccl.h)

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
  # No room needs CUDA's types: nccl.h's cudaStream_t is then its own opaque pointer type.
  target_compile_definitions(dc_${name} PRIVATE DEEPCOMM_NCCL_WITHOUT_CUDA_RUNTIME)
  deepcomm_instrument_for_fuzzing(dc_${name})
  foreach(dep ${R_DEPENDS})
    target_link_libraries(dc_${name} PUBLIC dc_${dep})
  endforeach()
  add_dependencies(dc_${name} deepcomm_layering)
endfunction()

# deepcomm_cuda_room(<name> DIR plugins/cuda [DEPENDS <room>...]): the CUDA room, the one room
# given CUDA's include directories. Its target, OBJECT library dc_<name>, exists where CMake finds
# the CUDA toolkit and nvcc; the include check covers the folder either way. DEPENDS names the rooms whose
# headers it may include; their archives are not linked: the plugin uses only their header-only
# code (the plugin ABI, the element code, base/error.h), so it carries no second copy of the
# library into the processes that load it.
function(deepcomm_cuda_room name)
  cmake_parse_arguments(R "" "DIR" "DEPENDS" ${ARGN})
  if(NOT R_DIR STREQUAL DEEPCOMM_CUDA_ROOM_DIR)
    message(FATAL_ERROR "the CUDA room lives in ${DEEPCOMM_CUDA_ROOM_DIR} (cmake/Rooms.cmake), "
                        "not in ${R_DIR}")
  endif()
  deepcomm_layer(${name} ${R_DIR} ${R_DEPENDS})
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND OR NOT CMAKE_CUDA_COMPILER)
    message(STATUS "DeepComm: no CUDA toolkit with nvcc found, so ${R_DIR} is not built")
    return()
  endif()
  set_property(GLOBAL PROPERTY DEEPCOMM_CUDA_INCLUDE_DIRS ${CUDAToolkit_INCLUDE_DIRS})
  add_library(dc_${name} OBJECT)
  target_include_directories(dc_${name} PRIVATE
    ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_options(dc_${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)
  add_dependencies(dc_${name} deepcomm_layering)
endfunction()

# Fails when a room other than the CUDA room has CUDA's include directories or CUDA:: libraries
# (the text check cannot see those). Tests are not rooms: a GPU test may use CUDA directly.
function(deepcomm_check_cuda_targets cuda_room)
  get_property(rooms GLOBAL PROPERTY DEEPCOMM_ROOMS)
  get_property(cuda_dirs GLOBAL PROPERTY DEEPCOMM_CUDA_INCLUDE_DIRS)
  foreach(room ${rooms})
    if(room STREQUAL cuda_room OR NOT TARGET dc_${room})
      continue()
    endif()
    get_target_property(dirs dc_${room} INCLUDE_DIRECTORIES)
    get_target_property(libs dc_${room} LINK_LIBRARIES)
    set(found "")
    foreach(dir ${cuda_dirs})
      if(dir IN_LIST dirs)
        list(APPEND found ${dir})
      endif()
    endforeach()
    foreach(lib ${libs})
      if(lib MATCHES "^CUDA::")
        list(APPEND found ${lib})
      endif()
    endforeach()
    if(found)
      message(FATAL_ERROR "DeepComm layering: room ${room} uses ${found}; only the CUDA room "
                          "(${DEEPCOMM_CUDA_ROOM_DIR}, cmake/Rooms.cmake) may use CUDA")
    endif()
  endforeach()
endfunction()

# The include check, run before any room compiles (deepcomm_room makes every room depend on it).
add_custom_target(deepcomm_layering)

# Called once every layer is declared: writes the layer table (its format is described in
# CheckLayering.cmake) and runs the scan.
function(deepcomm_check_layering)
  get_property(rooms GLOBAL PROPERTY DEEPCOMM_ROOMS)
  set(table "")
  set(sources "")
  set(cuda_room "")
  list(LENGTH DEEPCOMM_LAYERS height)
  foreach(folders ${DEEPCOMM_LAYERS})
    math(EXPR height "${height} - 1")
    string(REPLACE " " ";" folders "${folders}")
    foreach(folder ${folders})
      string(APPEND table "layer ${height} ${folder}\n")
    endforeach()
  endforeach()
  string(REPLACE ";" "," may_include "${DEEPCOMM_CUDA_ROOM_MAY_INCLUDE}")
  string(APPEND table "cuda_room ${DEEPCOMM_CUDA_ROOM_DIR} ${may_include}\n")
  foreach(file ${DEEPCOMM_CUDA_HEADER_EXEMPT})
    string(APPEND table "cuda_exempt ${file}\n")
  endforeach()
  # The public headers, scanned like a room that may include nothing but itself.
  string(APPEND table "room public include include\n")
  file(GLOB_RECURSE public_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/*.h)
  list(APPEND sources ${public_headers})
  foreach(room ${rooms})
    get_property(dir GLOBAL PROPERTY DEEPCOMM_ROOM_DIR_${room})
    get_property(allowed GLOBAL PROPERTY DEEPCOMM_ROOM_ALLOWED_${room})
    string(REPLACE ";" "," allowed_list "${allowed}")
    string(APPEND table "room ${room} ${dir} ${allowed_list}\n")
    if(dir STREQUAL DEEPCOMM_CUDA_ROOM_DIR)
      set(cuda_room ${room})
    endif()
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
  deepcomm_check_cuda_targets("${cuda_room}")
endfunction()
