// simulate --report: the section on pod groups (GenericWorkload), from the result document's
// "podGroups" (summary.h): each group's policy, pods placed, the nodes and topology domain its
// pods went to, and the group's message when pods were left out.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ksched::sim::report {

// The section's HTML (<section id="section-pod-groups">), "" when the result has no pod group.
[[nodiscard]] std::string podGroupsSection(const nlohmann::json& result);

}  // namespace ksched::sim::report
