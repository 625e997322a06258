// The load-aware plugins' readings (plugins/load_aware/load_source.h): a Prometheus
// /api/v1/query answer body as Prometheus sends it (parsePrometheusVector, which never throws),
// and a NodeMetricsList as the apiserver's metrics.k8s.io answers it, once the client has parsed
// its JSON (parseNodeMetricsList, which skips malformed items and never throws). The selector
// byte picks the node label. Every value read is a finite number; every node a non-empty name.
#include <cmath>

#include "plugins/load_aware/load_source.h"
#include "tests/fuzz/fuzz_util.h"

using namespace ksched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto in = fuzz::split(data, size);
  static const std::string kLabels[] = {"instance", "node", "kubernetes_node", ""};
  const std::string& label = kLabels[in.selector % 4];
  std::string error;
  if (auto v = plugins::load::parsePrometheusVector(in.rest, label, error)) {
    for (const auto& [node, value] : *v) {
      fuzz::check(std::isfinite(value), "a Prometheus value is not finite");
      fuzz::dump(node);
    }
  } else {
    fuzz::check(!error.empty(), "a refused Prometheus answer has no error");
    fuzz::dump(error);
  }
  const nlohmann::json list = nlohmann::json::parse(in.rest, nullptr, false);
  size_t skipped = 0;
  for (const auto& [node, load] : plugins::load::parseNodeMetricsList(list, skipped)) {
    fuzz::check(!node.empty(), "a NodeMetrics item without a name");
    fuzz::check(std::isfinite(load.cpu) && std::isfinite(load.memory),
                "a NodeMetrics usage is not finite");
    fuzz::dump(node);
  }
  return 0;
}
