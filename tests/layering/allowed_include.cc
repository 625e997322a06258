// Must compile: built with the cache layer's include roots only, it includes the cache's own
// header and the SDK, which the cache may use. The twin of upward_include.cc, so that test
// cannot pass because the compiler call itself is broken.
#include <ksched/node_info.h>

#include "cache/snapshot.h"
