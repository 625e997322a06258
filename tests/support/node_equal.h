// Whether two decoded Nodes hold the same values, field by field (api::Node's structs have no
// operator==): the fast decode's tests and fuzz target compare the two decoding paths with it.
// A field added to api::Node must be added here.
#pragma once

#include <ksched/api/node.h>

namespace ksched::testing {

inline bool sameNode(const api::Node& a, const api::Node& b) {
  if (!(a.metadata == b.metadata) || a.spec.unschedulable != b.spec.unschedulable ||
      a.spec.taints != b.spec.taints ||
      a.spec.disableResizePreemption != b.spec.disableResizePreemption ||
      a.status.capacity != b.status.capacity || a.status.allocatable != b.status.allocatable ||
      a.status.declaredFeatures != b.status.declaredFeatures ||
      a.status.images.size() != b.status.images.size() ||
      a.status.conditions.size() != b.status.conditions.size()) {
    return false;
  }
  for (size_t i = 0; i < a.status.images.size(); ++i) {
    if (a.status.images[i].names != b.status.images[i].names ||
        a.status.images[i].sizeBytes != b.status.images[i].sizeBytes) {
      return false;
    }
  }
  for (size_t i = 0; i < a.status.conditions.size(); ++i) {
    if (a.status.conditions[i].type != b.status.conditions[i].type ||
        a.status.conditions[i].status != b.status.conditions[i].status) {
      return false;
    }
  }
  return true;
}

}  // namespace ksched::testing
