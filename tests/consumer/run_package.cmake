# Run with cmake -P: configures collage itself as a packager would (fresh build directory, default
# options unless the case says otherwise, GoogleTest hidden) and checks the outcome.
#   CASE  install_without_tests   -DBUILD_TESTING=OFF: configures without the tests, and
#                                 `cmake --install` installs the headers and the CMake package
#         tests_off_without_gtest the defaults: configures, turning the tests off with a message
#         tests_need_gtest        -DCOLLAGE_BUILD_TESTS=ON: configuring fails, naming GTest
#   COLLAGE_SOURCE_DIR, WORK_DIR (wiped first), CXX_COMPILER, GENERATOR (optional)
cmake_minimum_required(VERSION 3.21)

foreach(var CASE COLLAGE_SOURCE_DIR WORK_DIR CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_package.cmake: ${var} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
set(build "${WORK_DIR}/build")
set(configure_args -S "${COLLAGE_SOURCE_DIR}" -B "${build}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
                   -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON)
if(GENERATOR)
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(CASE STREQUAL "install_without_tests")
  list(APPEND configure_args -DBUILD_TESTING=OFF)
elseif(CASE STREQUAL "tests_need_gtest")
  list(APPEND configure_args -DCOLLAGE_BUILD_TESTS=ON)
elseif(NOT CASE STREQUAL "tests_off_without_gtest")
  message(FATAL_ERROR "run_package.cmake: unknown CASE '${CASE}'")
endif()

execute_process(COMMAND "${CMAKE_COMMAND}" ${configure_args} RESULT_VARIABLE result OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(CASE STREQUAL "tests_need_gtest")
  if(result EQUAL 0)
    message(FATAL_ERROR "package (${CASE}): configuring succeeded without GTest although the tests were asked for")
  endif()
  if(NOT err MATCHES "GTest")
    message(FATAL_ERROR "package (${CASE}): configuring failed, but without naming GTest\n${out}\n${err}")
  endif()
  message(STATUS "package (${CASE}): configuring failed, naming GTest, as it should")
  return()
endif()
if(NOT result EQUAL 0)
  message(FATAL_ERROR "package (${CASE}): configuring failed (${result})\n${out}\n${err}")
endif()
foreach(dir tests tools/collage/tests)
  if(EXISTS "${build}/${dir}")
    message(FATAL_ERROR "package (${CASE}): the tests (${dir}) were configured")
  endif()
endforeach()
if(CASE STREQUAL "tests_off_without_gtest" AND NOT out MATCHES "GTest not found, so COLLAGE_BUILD_TESTS is OFF")
  message(FATAL_ERROR "package (${CASE}): no message says why the tests are off\n${out}")
endif()

if(CASE STREQUAL "install_without_tests")
  set(prefix "${WORK_DIR}/prefix")
  execute_process(COMMAND "${CMAKE_COMMAND}" --install "${build}" --prefix "${prefix}" RESULT_VARIABLE result
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "package (${CASE}): installing failed (${result})\n${out}\n${err}")
  endif()
  file(GLOB_RECURSE config "${prefix}/*/collageConfigVersion.cmake")
  if(NOT EXISTS "${prefix}/include/collage/collage.hpp" OR NOT config)
    message(FATAL_ERROR "package (${CASE}): the headers or the CMake package were not installed\n${out}")
  endif()
endif()
message(STATUS "package (${CASE}): OK")
