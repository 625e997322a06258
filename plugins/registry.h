// The in-tree plugins: the one explicit list of every plugin ksched ships (upstream
// framework/plugins/registry.go). Out-of-tree plugins merge into the result.
#pragma once

#include <ksched/registry.h>

namespace ksched::plugins {

// A new registry with every in-tree plugin, by upstream name.
[[nodiscard]] Registry inTreeRegistry();

}  // namespace ksched::plugins
