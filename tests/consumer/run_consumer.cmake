# Run with cmake -P: configures, builds and runs tests/consumer in a fresh build directory.
#   MODE                find_package | add_subdirectory | fetchcontent
#   COLLAGE_SOURCE_DIR  the collage source tree
#   COLLAGE_BINARY_DIR  the configured collage build tree (installed from, in find_package mode)
#   CONSUMER_SOURCE_DIR tests/consumer
#   WORK_DIR            scratch directory (wiped first)
#   CXX_COMPILER, CXX_STANDARD, COMPILER_LAUNCHER (optional), GENERATOR (optional)
#   BUILD_TYPE          (optional) the consumer's CMAKE_BUILD_TYPE, e.g. Release (default: none)
#   FIND_VERSION        (find_package mode, optional) the version the consumer asks for
#   EXPECT_UNSUITABLE   (find_package mode, optional) ON: the installed collage must not satisfy
#                       FIND_VERSION (configuring fails, naming the version); nothing is built
# In add_subdirectory and fetchcontent modes, installing the consumer must install nothing of collage.
cmake_minimum_required(VERSION 3.21)

foreach(var MODE COLLAGE_SOURCE_DIR CONSUMER_SOURCE_DIR WORK_DIR CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake: ${var} is not set")
  endif()
endforeach()

function(run_step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "consumer (${MODE}): ${name} failed (${result})\n$ ${ARGN}\n${out}\n${err}")
  endif()
  if(name STREQUAL "run")
    message(STATUS "consumer (${MODE}): ${out}")
  endif()
  message(STATUS "consumer (${MODE}): ${name} OK")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set(configure_args
  -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/build"
  "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
  "-DCOLLAGE_CONSUME_MODE=${MODE}"
  "-DCOLLAGE_SOURCE_DIR=${COLLAGE_SOURCE_DIR}")
if(GENERATOR)
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(CXX_STANDARD)
  list(APPEND configure_args "-DCMAKE_CXX_STANDARD=${CXX_STANDARD}")
endif()
if(COMPILER_LAUNCHER)
  # On the consumer's target only, so that the consumer can check collage sets none itself.
  list(APPEND configure_args "-DCONSUMER_LAUNCHER=${COMPILER_LAUNCHER}")
endif()

if(MODE STREQUAL "find_package")
  if(NOT COLLAGE_BINARY_DIR)
    message(FATAL_ERROR "run_consumer.cmake: COLLAGE_BINARY_DIR is needed in find_package mode")
  endif()
  set(prefix "${WORK_DIR}/prefix")
  run_step("install collage into ${prefix}" "${CMAKE_COMMAND}" --install "${COLLAGE_BINARY_DIR}" --prefix "${prefix}")
  list(APPEND configure_args "-DCMAKE_PREFIX_PATH=${prefix}" "-DCOLLAGE_EXPECT_PREFIX=${prefix}"
       -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  if(FIND_VERSION)
    list(APPEND configure_args "-DCOLLAGE_FIND_VERSION=${FIND_VERSION}")
  endif()
endif()

if(EXPECT_UNSUITABLE)
  execute_process(COMMAND "${CMAKE_COMMAND}" ${configure_args} RESULT_VARIABLE result OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(result EQUAL 0)
    message(FATAL_ERROR "consumer (${MODE}): find_package(collage ${FIND_VERSION}) accepted an unsuitable version\n${out}")
  endif()
  if(NOT err MATCHES "collageConfig\\.cmake, version: ")
    message(FATAL_ERROR "consumer (${MODE}): configuring failed, but not for the version\n${out}\n${err}")
  endif()
  message(STATUS "consumer (${MODE}): find_package(collage ${FIND_VERSION}) rejected the installed version, as it should")
  return()
endif()

run_step(configure "${CMAKE_COMMAND}" ${configure_args})
run_step(build "${CMAKE_COMMAND}" --build "${WORK_DIR}/build")

set(exe "${WORK_DIR}/build/collage_consumer")
if(NOT EXISTS "${exe}")
  message(FATAL_ERROR "consumer (${MODE}): ${exe} was not built")
endif()
run_step(run "${exe}")

if(NOT MODE STREQUAL "find_package")
  run_step(install "${CMAKE_COMMAND}" --install "${WORK_DIR}/build" --prefix "${WORK_DIR}/install")
  file(GLOB_RECURSE installed RELATIVE "${WORK_DIR}/install" "${WORK_DIR}/install/*")
  if(installed)
    message(FATAL_ERROR "consumer (${MODE}): installing the consumer installed collage's files: ${installed}")
  endif()
endif()
