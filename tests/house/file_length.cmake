# The house rule as a test: no source file of src/, include/ or plugins/ (tests excepted) is
# longer than LIMIT lines. A file that grows past it fails the suite, naming every such file
# with its length, so the rule holds without anyone remembering it; split by cohesion.
#   cmake -DROOT=<repo> -DLIMIT=600 -P file_length.cmake
if(NOT ROOT OR NOT LIMIT)
  message(FATAL_ERROR "usage: cmake -DROOT=<repo> -DLIMIT=<lines> -P file_length.cmake")
endif()
file(GLOB_RECURSE files
  ${ROOT}/src/*.cc ${ROOT}/src/*.h
  ${ROOT}/include/*.h
  ${ROOT}/plugins/*.cc ${ROOT}/plugins/*.h)
list(FILTER files EXCLUDE REGEX "_test\\.cc$")
set(long "")
foreach(f IN LISTS files)
  file(READ ${f} text)
  string(REGEX MATCHALL "\n" newlines "${text}")
  list(LENGTH newlines n)
  if(n GREATER LIMIT)
    file(RELATIVE_PATH rel ${ROOT} ${f})
    string(APPEND long "  ${rel}: ${n} lines\n")
  endif()
endforeach()
list(LENGTH files count)
if(long)
  message(FATAL_ERROR "source files longer than ${LIMIT} lines (split them by cohesion):\n${long}")
endif()
message(STATUS "${count} source files, none longer than ${LIMIT} lines")
