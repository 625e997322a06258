// KubeSchedulerConfiguration (v1, v1beta3, v1beta2, v1beta1) from YAML or JSON text, as the
// daemon loads --config (config::resolveConfiguration): decode + defaults, then validation
// with every profile wired into a framework of the in-tree plugins (their args decoded). Errors
// are returned as lines, nothing is thrown. A valid configuration is then written out as
// --write-config-to and /configz do, must load back the same, and its extenders are built
// (ExtenderError is what the scheduler turns into its start-up error).
#include <cstdio>
#include <memory>

#include "config/scheduler_config.h"
#include "config/wiring.h"
#include "extender/http_extender.h"
#include "plugins/registry.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace ksched;

const Registry& registry() {
  static const Registry r = plugins::inTreeRegistry();
  return r;
}

// Validates as the daemon does; empty when valid.
std::vector<std::string> validate(const config::SchedulerConfiguration& c) {
  return config::validateConfig(c, config::wiringCheck(registry()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  config::LoadResult r = config::decodeConfig(fuzz::asText(data, size), "fuzz.yaml");
  if (!r.ok()) return 0;
  if (!validate(*r.config).empty()) return 0;
  const config::SchedulerConfiguration& c = *r.config;

  const std::string yaml = config::toYaml(c);
  const nlohmann::json written = config::toJson(c);
  fuzz::dump({{"componentconfig", written}});
  (void)config::frameworkProfiles(c);
  try {
    (void)extender::buildExtenders(c.extenders);
  } catch (const extender::ExtenderError&) {
  }

  // toYaml() decodes; written from v1 it loads back valid with the same toJson(). (From v1beta3
  // the default multiPoint list comes back with SchedulingGates first instead of last; a
  // converted one loads back to the same decisions but for plugins v1 no longer has. Neither
  // is compared here.)
  config::LoadResult back = config::decodeConfig(yaml, "written.yaml");
  fuzz::check(back.ok(), "toYaml() output does not decode");
  if (c.apiVersion == config::kApiVersionV1) {
    fuzz::check(validate(*back.config).empty(), "toYaml() output does not validate");
    const nlohmann::json reloaded = config::toJson(*back.config);
    if (reloaded != written) {
      std::fprintf(stderr, "%s\n", nlohmann::json::diff(written, reloaded).dump().c_str());
    }
    fuzz::check(reloaded == written, "toYaml() output loads back different");
  }
  return 0;
}
