# Run with cmake -P: runs the collage_fuzz_readers libFuzzer binary for SECONDS seconds over the
# committed CORPUS. New inputs go to WORK_DIR/new (not the committed corpus); a crash leaves its
# input in WORK_DIR (crash-*, leak-*, timeout-*) and fails the test.
#   FUZZER, CORPUS, WORK_DIR, SECONDS
cmake_minimum_required(VERSION 3.21)
foreach(var FUZZER CORPUS WORK_DIR SECONDS)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_fuzzer.cmake: ${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}/new")
file(MAKE_DIRECTORY "${WORK_DIR}/new")
execute_process(
  COMMAND "${FUZZER}" "-max_total_time=${SECONDS}" -timeout=10 -rss_limit_mb=2048 -max_len=8192
          -print_final_stats=1 "-artifact_prefix=${WORK_DIR}/" "${WORK_DIR}/new" "${CORPUS}"
  RESULT_VARIABLE result
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "fuzz_readers: the fuzzer failed (${result}); inputs that crash are in ${WORK_DIR}\n${out}\n${err}")
endif()
string(REGEX MATCH "stat::number_of_executed_units: *[0-9]+" runs "${err}")
message(STATUS "fuzz_readers: OK (${runs})")
