// simulate's loader (sim::loadText) over any text: the first byte's low bit picks LoadAs (0: the
// cluster, 1: work to schedule), the rest is a file's content. loadText promises to throw
// nothing: every problem is a Skipped entry. What was read then goes through checkCluster and
// its Skipped entries, custom objects and metadata are serialized, and the metrics.k8s.io
// readings among them are read and every bound pod evicted from them (sim/metrics_usage.h).
#include <nlohmann/json.hpp>

#include "sim/load.h"
#include "sim/metrics_usage.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ksched;
  const fuzz::Split in = fuzz::split(data, size);
  const sim::LoadAs as = (in.selector & 1) != 0 ? sim::LoadAs::kWork : sim::LoadAs::kCluster;
  sim::Cluster cluster;
  sim::loadText(in.rest, "fuzz.yaml", as, cluster);
  sim::checkCluster(cluster);
  for (const sim::Skipped& s : cluster.skipped) {
    fuzz::check(!s.message.empty(), "a Skipped entry says what is wrong");
    fuzz::dump(nlohmann::json{
        {"source", s.source}, {"object", s.object}, {"field", s.field}, {"message", s.message}});
  }
  for (const auto& [key, objects] : cluster.others) {
    for (const UnstructuredPtr& o : objects) fuzz::dump(o->object);
  }
  for (const PodPtr& p : cluster.pods) {
    fuzz::check(!p->metadata.name.empty() && !p->metadata.uid.empty(), "pods have name and uid");
    if (as == sim::LoadAs::kWork) fuzz::check(p->spec.nodeName.empty(), "work is not bound");
    fuzz::dump(nlohmann::json(p->metadata));
  }
  for (const NodePtr& n : cluster.nodes) fuzz::dump(nlohmann::json(n->metadata));
  const auto before = sim::nodeUsages(cluster);
  (void)sim::podUsages(cluster);
  sim::releaseUsage(cluster, cluster.pods);
  for (const auto& [node, u] : sim::nodeUsages(cluster)) {
    fuzz::check(u.milliCPU >= 0 && u.memory >= 0, "a reading never goes below zero");
    fuzz::check(before.contains(node), "no reading is made up");
  }
  const auto left = sim::podUsages(cluster);
  for (const PodPtr& p : cluster.pods) {
    fuzz::check(p->spec.nodeName.empty() || !left.contains(sim::usageKey(p->metadata)),
                "an evicted pod's PodMetrics are gone");
  }
  return 0;
}
