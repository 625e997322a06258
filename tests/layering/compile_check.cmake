# Compiles SOURCE with the compiler CXX and the include directories INCLUDES ('|'-separated),
# syntax only. EXPECT=pass: the compilation must succeed. EXPECT=fail: it must fail, and its
# diagnostics must name MISSING (the header the include roots must not reach), so that a
# failure for another reason does not count.
#   cmake -DCXX=... -DINCLUDES=a|b -DSOURCE=x.cc -DEXPECT=fail -DMISSING=scheduler/scheduler.h -P
string(REPLACE "|" ";" includes "${INCLUDES}")
list(REMOVE_DUPLICATES includes)
set(args -std=c++20 -fsyntax-only)
foreach(dir IN LISTS includes)
  if(dir)
    list(APPEND args -I${dir})
  endif()
endforeach()
execute_process(COMMAND ${CXX} ${args} ${SOURCE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(EXPECT STREQUAL "pass")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${SOURCE} should compile with these include roots:\n${includes}\n${err}")
  endif()
  message(STATUS "${SOURCE} compiles, as it should")
elseif(EXPECT STREQUAL "fail")
  if(rc EQUAL 0)
    message(FATAL_ERROR "${SOURCE} compiled, but its include must not be reachable from "
      "these include roots:\n${includes}")
  endif()
  string(FIND "${err}" "${MISSING}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${SOURCE} failed to compile, but not because ${MISSING} was not "
      "found:\n${err}")
  endif()
  message(STATUS "${SOURCE} does not compile (${MISSING} not found), as it should")
else()
  message(FATAL_ERROR "EXPECT must be pass or fail, not '${EXPECT}'")
endif()
