// simulate's loader (sim::loadText) over any text: the first byte's low bit picks LoadAs (0: the
// cluster, 1: work to schedule), the rest is a file's content. loadText promises to throw
// nothing: every problem is a Skipped entry. What was read then goes through checkCluster and
// its Skipped entries, custom objects and metadata are serialized.
#include <nlohmann/json.hpp>

#include "sim/load.h"
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
  return 0;
}
