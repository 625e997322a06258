// The legacy scheduler Policy (--policy-config-file, or the ConfigMap key policy.cfg) from
// JSON or YAML text, as the daemon applies it (config::resolveConfiguration without --config):
// decode, applyPolicy() onto the default configuration, then validation with every profile
// wired into a framework of the in-tree plugins. Errors are returned as lines, nothing is
// thrown. A valid result is written out as --write-config-to and /configz do and its extenders
// are built.
#include <memory>

#include "config/policy.h"
#include "config/scheduler_config.h"
#include "config/wiring.h"
#include "extender/http_extender.h"
#include "plugins/registry.h"
#include "tests/fuzz/fuzz_util.h"

using namespace ksched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Registry registry = plugins::inTreeRegistry();
  config::PolicyResult p = config::decodePolicy(fuzz::asText(data, size), "policy.cfg");
  if (!p.policy) return 0;
  config::SchedulerConfiguration c = config::defaultConfiguration();
  if (!config::applyPolicy(*p.policy, "policy.cfg", c).empty()) return 0;
  if (!config::validateConfig(c, config::wiringCheck(registry)).empty()) return 0;

  const std::string yaml = config::toYaml(c);
  fuzz::dump({{"componentconfig", config::toJson(c)}});
  (void)config::frameworkProfiles(c);
  try {
    (void)extender::buildExtenders(c.extenders);
  } catch (const extender::ExtenderError&) {
  }
  // The v1 file --write-config-to writes decodes (v1.20's plugins that v1 no longer has may make
  // it invalid there; docs/migrating.md).
  fuzz::check(config::decodeConfig(yaml, "written.yaml").ok(),
              "toYaml() of a Policy does not decode");
  return 0;
}
