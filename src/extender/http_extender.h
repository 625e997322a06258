// HttpExtender: the Extender (<ksched/extender.h>) over HTTP (upstream HTTPExtender, extender/v1
// wire types), one per entry of KubeSchedulerConfiguration's `extenders`. The scheduler calls
// them through the interface (extenders.h: Filter after the Filter plugins, Prioritize added to
// the plugin scores, Bind instead of the Bind plugins), and DefaultPreemption
// (ProcessPreemption on its candidates).
//
// An HttpExtender is built once from its configuration and is immutable: every call opens its own
// HTTP(S) connection, so calls from several threads run concurrently. Calls do network I/O and
// return a Status: Error with upstream's message when the extender cannot be reached, answers
// other than 200, returns malformed JSON or reports an error itself.
//
// Wire format (JSON field names of extender/v1; answers are also matched case-insensitively, as
// Go's decoder does, so extenders written against the untagged v1.20 types work):
//   filter/prioritize  ExtenderArgs {"pod", "nodes": NodeList} or {"pod", "nodenames": [...]}
//                      (nodeCacheCapable) -> ExtenderFilterResult {"nodes" | "nodenames",
//                      "failedNodes", "failedAndUnresolvableNodes", "error"} / HostPriorityList
//                      [{"host", "score"}]
//   bind               ExtenderBindingArgs {"podName", "podNamespace", "podUID", "node"} ->
//                      ExtenderBindingResult {"error"}
//   preempt            ExtenderPreemptionArgs {"pod", "nodeNameToVictims": {node: {"pods":
//                      [Pod], "numPDBViolations"}}} or {"pod", "nodeNameToMetaVictims": {node:
//                      {"pods": [{"uid"}], "numPDBViolations"}}} (nodeCacheCapable) ->
//                      ExtenderPreemptionResult {"nodeNameToMetaVictims"}
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/extender.h>
#include <ksched/node_info.h>
#include <ksched/plugin.h>
#include <ksched/status.h>

#include "config/scheduler_config.h"

namespace ksched::extender {

// httpTimeout when the configuration leaves it 0 (upstream DefaultExtenderTimeout).
inline constexpr std::chrono::seconds kDefaultHTTPTimeout{5};

struct FilterResult {
  // The nodes that passed: "nodes".items' names and "nodenames" (read when nodeCacheCapable);
  // nullopt when absent or null. When the one that counts is absent no node passed.
  std::optional<std::vector<std::string>> nodes;
  std::optional<std::vector<std::string>> nodeNames;
  FailedNodesMap failedNodes;
  FailedNodesMap failedAndUnresolvableNodes;
  std::string error;
};

// FailedNodesMap, HostPriority and the scheduler's side of Victims are public
// (<ksched/extender.h>).
using Victims = ExtenderVictims;

// extender/v1 MetaVictims: pod uids only.
struct MetaVictims {
  std::vector<std::string> podUIDs;
  int64_t numPDBViolations = 0;
  friend bool operator==(const MetaVictims&, const MetaVictims&) = default;
};

// ---- wire encoding (pure; decoders throw std::runtime_error on a malformed answer) ----

// ExtenderArgs: "nodenames" when nodeCacheCapable, else "nodes" as a v1 NodeList.
[[nodiscard]] nlohmann::json encodeArgs(const api::Pod& pod,
                                        const std::vector<const NodeInfo*>& nodes,
                                        bool nodeCacheCapable);
[[nodiscard]] FilterResult decodeFilterResult(const nlohmann::json& j);
[[nodiscard]] std::vector<HostPriority> decodeHostPriorityList(const nlohmann::json& j);
[[nodiscard]] nlohmann::json encodeBindingArgs(const api::Pod& pod, const std::string& node);
// The "error" of an ExtenderBindingResult ("" when none).
[[nodiscard]] std::string decodeBindingResult(const nlohmann::json& j);
[[nodiscard]] nlohmann::json encodePreemptionArgs(const api::Pod& pod,
                                                  const std::map<std::string, Victims>& victims,
                                                  bool nodeCacheCapable);
[[nodiscard]] std::map<std::string, MetaVictims> decodePreemptionResult(const nlohmann::json& j);

// Invalid extender configuration (URL, TLS files or data).
class ExtenderError : public std::runtime_error {
 public:
  explicit ExtenderError(const std::string& what) : std::runtime_error(what) {}
};

// An HTTP extender (upstream HTTPExtender): the public Extender over extender/v1's wire format.
class HttpExtender final : public Extender {
 public:
  // Throws ExtenderError when the URL or the TLS material cannot be used.
  explicit HttpExtender(const config::Extender& config);

  // The URL prefix (upstream Name()).
  [[nodiscard]] const std::string& name() const override { return config_.urlPrefix; }
  [[nodiscard]] const config::Extender& config() const { return config_; }
  [[nodiscard]] bool isIgnorable() const override { return config_.ignorable; }
  [[nodiscard]] bool isBinder() const override { return !config_.bindVerb.empty(); }
  [[nodiscard]] int64_t weight() const override { return config_.weight; }
  [[nodiscard]] bool supportsPreemption() const override { return !config_.preemptVerb.empty(); }
  [[nodiscard]] bool supportsFilter() const override { return !config_.filterVerb.empty(); }
  [[nodiscard]] bool supportsPrioritize() const override { return !config_.prioritizeVerb.empty(); }
  [[nodiscard]] std::chrono::nanoseconds timeout() const { return timeout_; }

  // managedResources is empty, or a container or init container requests or limits one of them.
  [[nodiscard]] bool isInterested(const api::Pod& pod) const override;

  // Keeps in `nodes` those the extender accepts (in the extender's order); fills the rejected
  // ones' reasons. Without a filterVerb every node passes.
  Status filter(const api::Pod& pod, std::vector<const NodeInfo*>& nodes, FailedNodesMap& failed,
                FailedNodesMap& failedAndUnresolvable) const override;
  // Without a prioritizeVerb every node scores 0.
  Status prioritize(const api::Pod& pod, const std::vector<const NodeInfo*>& nodes,
                    std::vector<HostPriority>& scores) const override;
  Status bind(const api::Pod& pod, const std::string& node) const override;
  // Replaces `victims` with the extender's choice; pods are resolved by uid on the nodes of
  // `snapshot`.
  Status processPreemption(const api::Pod& pod, std::map<std::string, Victims>& victims,
                           const NodeInfoLister& snapshot) const override;

  // POST <urlPrefix>/<verb> with `args`; `result` is the decoded answer.
  Status send(const std::string& verb, const nlohmann::json& args, nlohmann::json& result) const;

 private:
  const config::Extender config_;
  std::chrono::nanoseconds timeout_;
  bool https_ = false;
  std::string host_;
  int port_ = 0;
  std::string basePath_;     // path of urlPrefix without trailing '/'
  std::string baseUrl_;      // urlPrefix without trailing '/'
  std::string schemeError_;  // set when urlPrefix is neither http:// nor https://
  std::string serverName_;   // TLS server name when it differs from the URL's host
  // TLS material, PEM.
  std::string caPem_;
  std::string certPem_;
  std::string keyPem_;
  bool insecure_ = false;
};

// Builds every configured extender (throws ExtenderError naming "extenders[i]").
[[nodiscard]] ExtenderList buildExtenders(const std::vector<config::Extender>& configs);

}  // namespace ksched::extender
