// Must not compile: built with the cel layer's include roots only, it includes the plugin that
// uses CEL. The language runtime sees the object model and nothing of the plugins, the SDK's
// framework or the scheduler. See CMakeLists.txt here.
#include "plugins/dynamic_resources/allocator.h"
