// A plugin's status as the framework passes it on: named after the plugin that said it, unless
// the status names one already (a plugin may pass on another's).
#pragma once

#include <string_view>
#include <utility>

#include <ksched/status.h>

namespace ksched::framework {

[[nodiscard]] inline Status withPlugin(Status s, std::string_view plugin) {
  if (s.plugin().empty()) s.withPlugin(plugin);
  return s;
}

}  // namespace ksched::framework
