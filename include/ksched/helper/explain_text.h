// Selector text for the rejection details Filter plugins explain themselves with
// (FilterExplainer in <ksched/plugin.h>): NodeAffinity names the requirement a node fails,
// InterPodAffinity the term whose selector finds (or misses) a pod. One spelling for both, so
// explain's output reads the same whichever plugin speaks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <ksched/api/selectors.h>

namespace ksched::plugins::helper {

// "zone In [a,b]", "gpu Exists": the values are left out for Exists and DoesNotExist.
[[nodiscard]] std::string requirementText(const std::string& key, api::SelectorOperator op,
                                          const std::vector<std::string>& values);

// "app=web", "app=web,tier In [a,b]" (matchLabels first, then matchExpressions); "{}" for the
// empty selector, which selects every pod; "<no selector>" for none, which selects no pod.
[[nodiscard]] std::string selectorText(const std::optional<api::LabelSelector>& selector);

}  // namespace ksched::plugins::helper
