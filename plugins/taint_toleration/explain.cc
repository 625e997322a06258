// TaintToleration's account of a rejection (FilterExplainer).
#include <ksched/api/taints.h>

#include "plugins/taint_toleration/taint_toleration.h"

namespace ksched::plugins {
namespace {

std::string taintText(const api::Taint& t) {
  return t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect;
}

// Why a Gt/Lt toleration of the pod that names the taint's key and effect does not tolerate
// it: the gate is off (`comparisonOperators`), or a value is not an integer; "" when none applies.
std::string comparisonNote(const api::Pod& pod, const api::Taint& t, bool comparisonOperators) {
  for (const auto& tol : pod.spec.tolerations) {
    if (tol.operator_ != api::kTolerationOpGt && tol.operator_ != api::kTolerationOpLt) continue;
    if ((!tol.key.empty() && tol.key != t.key) || (!tol.effect.empty() && tol.effect != t.effect)) {
      continue;
    }
    if (!comparisonOperators) {
      return " (toleration operator " + tol.operator_ +
             " needs the TaintTolerationComparisonOperators feature gate)";
    }
    const std::string text =
        (tol.key.empty() ? "" : tol.key + " ") + tol.operator_ + " " + tol.value;
    if (!api::parseTolerationInteger(t.value)) {
      return " (toleration " + text + " compares integers; the taint's value is not one)";
    }
    if (!api::parseTolerationInteger(tol.value)) {
      return " (toleration " + text + ": its value is not an integer)";
    }
  }
  return "";
}

}  // namespace

std::vector<std::string> TaintToleration::explainRejection(const CycleState& /*state*/,
                                                           const api::Pod& pod,
                                                           const NodeInfo& nodeInfo) const {
  std::vector<std::string> out;
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return out;
  for (const auto& t : node->spec.taints) {
    if (!api::isDoNotScheduleTaint(t)) continue;
    if (api::tolerationsTolerateTaint(pod.spec.tolerations, t, comparisonOperators_)) continue;
    out.push_back("taint " + taintText(t) + " not tolerated" +
                  comparisonNote(pod, t, comparisonOperators_));
  }
  return out;
}

}  // namespace ksched::plugins
