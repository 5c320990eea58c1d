# Options for the optional parts of collage's build (tests, benchmarks, examples, tool) and the
# dependencies each part needs.

# collage_option(NAME DOC DEFAULT): a BOOL option like option(), which also says whether the user
# chose it. NAME_EXPLICIT is TRUE when NAME was given (on the command line, in the cache, or as a
# parent project's variable) with a value other than the default it last took; FALSE when NAME
# takes DEFAULT. An option the user has not chosen follows DEFAULT on every configure (so a
# reconfigure with -DBUILD_TESTING=OFF turns the tests off).
function(collage_option name doc default)
  set(marker "_COLLAGE_DEFAULT_OF_${name}")
  if(DEFINED ${name} AND NOT (DEFINED CACHE{${marker}} AND "${${name}}" STREQUAL "$CACHE{${marker}}"))
    set(${name}_EXPLICIT TRUE PARENT_SCOPE)
    return()
  endif()
  if(default)
    set(value ON)
  else()
    set(value OFF)
  endif()
  set(${name} ${value} CACHE BOOL "${doc}" FORCE)
  set(${marker} ${value} CACHE INTERNAL "The value collage_option last gave ${name} by default")
  set(${name}_EXPLICIT FALSE PARENT_SCOPE)
endfunction()

# collage_find_for(OPTION PACKAGE [ARGS...]): find_package(PACKAGE ARGS...) for the part that
# OPTION (a collage_option) switches on. When the package is missing, a part the user asked for is
# a configure error; a part on by default is turned off for this configure, with a message.
macro(collage_find_for option package)
  if(${option})
    if(${option}_EXPLICIT)
      find_package(${package} ${ARGN} REQUIRED)
    else()
      find_package(${package} ${ARGN} QUIET)
      if(NOT ${package}_FOUND)
        message(STATUS "collage: ${package} not found, so ${option} is OFF "
                       "(scripts/install-deps.sh installs it; -D${option}=ON makes it required)")
        set(${option} OFF)
      endif()
    endif()
  endif()
endmacro()

# collage_unity_groups(TARGET "NAME:FILE FILE..." ...): when COLLAGE_UNITY_TESTS is on, compiles
# each group of TARGET's source files (paths relative to the calling directory) as one
# translation unit. Test files that instantiate the same templates (the partitioner, the searches,
# the rules, the example compiler's graph and backends) then instantiate them once: about half
# the build time of the files grouped. Two files of a group must not define the same name; a file
# in no group compiles on its own.
function(collage_unity_groups target)
  if(NOT COLLAGE_UNITY_TESTS)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  foreach(group IN LISTS ARGN)
    string(REPLACE ":" ";" group "${group}")
    list(GET group 0 name)
    list(GET group 1 files)
    separate_arguments(files)
    list(TRANSFORM files PREPEND "${CMAKE_CURRENT_SOURCE_DIR}/")
    set_source_files_properties(${files} TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP "${name}")
  endforeach()
endfunction()
