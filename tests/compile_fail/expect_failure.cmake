# Run with cmake -P. Compiles SOURCE with -fsyntax-only and checks that it fails the expected way.
#   CXX_COMPILER   the C++ compiler
#   CXX_STANDARD   17 or 20
#   SOURCE         the translation unit that must not compile
#   INCLUDE_DIRS   ;-list of include directories
#   EXPECT_TEXT    ;-list of strings that must all appear in the diagnostics
#   EXPECT_ERRORS  the exact number of lines matching "error:"
cmake_minimum_required(VERSION 3.21)

foreach(var CXX_COMPILER CXX_STANDARD SOURCE)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "expect_failure.cmake: ${var} is not set")
  endif()
endforeach()

set(include_flags "")
foreach(dir IN LISTS INCLUDE_DIRS)
  if(NOT dir STREQUAL "")
    list(APPEND include_flags "-I${dir}")
  endif()
endforeach()

execute_process(
  COMMAND "${CXX_COMPILER}" -std=c++${CXX_STANDARD} -fsyntax-only ${include_flags} "${SOURCE}"
  RESULT_VARIABLE result
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
set(diagnostics "${out}${err}")

set(problems "")
if(result EQUAL 0)
  list(APPEND problems "the compile succeeded but must fail")
endif()
foreach(text IN LISTS EXPECT_TEXT)
  string(FIND "${diagnostics}" "${text}" pos)
  if(pos EQUAL -1)
    list(APPEND problems "the diagnostics do not contain '${text}'")
  endif()
endforeach()
if(DEFINED EXPECT_ERRORS)
  # ';' would split the list of matches, so take it out first.
  string(REPLACE ";" "," flat "${diagnostics}")
  string(REGEX MATCHALL "[^\n]*error:[^\n]*" error_lines "${flat}")
  list(LENGTH error_lines error_count)
  if(NOT error_count EQUAL EXPECT_ERRORS)
    list(APPEND problems "expected ${EXPECT_ERRORS} line(s) matching 'error:', got ${error_count}")
  endif()
endif()

if(problems)
  string(REPLACE ";" "\n  - " problem_text "${problems}")
  message(FATAL_ERROR
    "compile-failure check for ${SOURCE} (C++${CXX_STANDARD}) failed:\n  - ${problem_text}\n"
    "---- compiler diagnostics (exit code ${result}) ----\n${diagnostics}\n---- end ----")
endif()
message(STATUS "OK: ${SOURCE} fails to compile as expected under C++${CXX_STANDARD} (${error_count} error)")
