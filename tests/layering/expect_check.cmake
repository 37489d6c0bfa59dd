# Runs the include check (cmake/CheckLayering.cmake) on a copy of the fixture tree, with one file
# added when BAD_FILE is given, and checks the outcome: EXPECT=pass, or EXPECT=fail with output
# that matches the regular expression MESSAGE.
# -DCHECK=<CheckLayering.cmake> -DFIXTURE=<tree> -DWORK=<scratch folder> -DEXPECT=pass|fail
# [-DBAD_FILE=<path in the tree> -DBAD_INCLUDE=<header> -DANGLE=ON (<header>, else "header")]
# [-DMESSAGE=<regex>]
cmake_minimum_required(VERSION 3.24)
file(REMOVE_RECURSE ${WORK})
file(COPY ${FIXTURE}/ DESTINATION ${WORK})
if(BAD_FILE)
  if(ANGLE)
    file(WRITE ${WORK}/${BAD_FILE} "#include <${BAD_INCLUDE}>\n")
  else()
    file(WRITE ${WORK}/${BAD_FILE} "#include \"${BAD_INCLUDE}\"\n")
  endif()
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${WORK} -DTABLE=${WORK}/layers.txt -P ${CHECK}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(EXPECT STREQUAL "pass" AND NOT rc EQUAL 0)
  message(FATAL_ERROR "the check failed on a tree that follows the rules:\n${out}")
endif()
if(EXPECT STREQUAL "fail")
  if(rc EQUAL 0)
    message(FATAL_ERROR "the check passed although ${BAD_FILE} includes ${BAD_INCLUDE}")
  endif()
  # The message is wrapped at spaces; compare it as one line.
  string(REGEX REPLACE "[ \n]+" " " flat "${out}")
  if(NOT flat MATCHES "${MESSAGE}")
    message(FATAL_ERROR "the check failed without the expected message \"${MESSAGE}\":\n${out}")
  endif()
endif()
file(REMOVE_RECURSE ${WORK})
