// Must not compile: built with the cel layer's include roots only, it includes the SDK's plugin
// API. CEL links the object model (<ksched/api/...>), not the framework around it.
#include <ksched/plugin.h>
