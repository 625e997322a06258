// Must compile: built with the plugins layer's include roots only, it includes CEL's narrow
// face (which the plugins may use) and, through it, the object model. The twin of the cel_*
// failures, so that they cannot pass because the compiler call itself is broken.
#include "cel/cel.h"
