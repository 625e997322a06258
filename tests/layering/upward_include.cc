// Must not compile: built with the cache layer's include roots only, it includes a header of the
// scheduler layer, which uses the cache (an upward include). See CMakeLists.txt here.
#include "scheduler/scheduler.h"
