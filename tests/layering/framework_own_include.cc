// Must compile: built with the framework layer's include roots only, it includes the framework's
// own header, the twin of framework_client_include.cc.
#include "framework/framework.h"
