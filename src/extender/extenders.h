// The configured extenders, called in order through the Extender interface
// (<ksched/extender.h>; the HTTP implementation is http_extender.h): the scheduling algorithm's
// filter and scores, the binding cycle's bind.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/extender.h>
#include <ksched/node_info.h>
#include <ksched/plugin.h>
#include <ksched/status.h>

namespace ksched::extender {

// Highest score an extender gives (extender/v1 MaxExtenderPriority).
inline constexpr int64_t kMaxExtenderPriority = 10;
// Upstream framework.MaxNodeScore.
inline constexpr int64_t kMaxNodeScore = 100;
// The name recorded among a pod's unschedulable plugins when extenders rejected nodes
// (upstream framework.ExtenderName): any cluster event retries the pod.
inline constexpr std::string_view kExtenderName = "Extender";

// An extender's score in the plugin score range: score × weight × (MaxNodeScore /
// MaxExtenderPriority), saturated at the int64 bounds (an extender may answer any integer).
[[nodiscard]] constexpr int64_t combinedScore(int64_t score, int64_t weight) {
  int64_t out = 0;
  if (__builtin_mul_overflow(score, weight, &out) ||
      __builtin_mul_overflow(out, kMaxNodeScore / kMaxExtenderPriority, &out)) {
    return (score < 0) != (weight < 0) ? INT64_MIN : INT64_MAX;
  }
  return out;
}

// a + b, saturated at the int64 bounds.
[[nodiscard]] constexpr int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return b < 0 ? INT64_MIN : INT64_MAX;
  return out;
}

// Upstream findNodesThatPassExtenders: each interested extender with a filterVerb, in order,
// filters the nodes the previous one kept; rejections are added to `statuses` (reasons of a
// node rejected several times are aggregated; failedAndUnresolvable wins). An error of a
// non-ignorable extender is returned; ignorable ones are skipped.
Status findNodesThatPassExtenders(const ExtenderList& extenders, const api::Pod& pod,
                                  std::vector<const NodeInfo*>& feasible, NodeToStatus& statuses);

// Upstream prioritizeNodes' extender part: the interested extenders with a prioritizeVerb run
// concurrently; each node's scores gain combinedScore(score, weight). Errors are logged and
// ignored (the extender gives no score). `scores` is parallel to `nodes`.
void addExtenderScores(const ExtenderList& extenders, const api::Pod& pod,
                       const std::vector<const NodeInfo*>& nodes, std::vector<int64_t>& scores);

// Upstream extendersBinding: the first interested binder extender binds the pod. Returns
// nullopt when none did (the Bind plugins then run); an ignorable binder's error passes on to
// the next.
[[nodiscard]] std::optional<Status> bindWithExtenders(const ExtenderList& extenders,
                                                      const api::Pod& pod, const std::string& node);

}  // namespace ksched::extender
