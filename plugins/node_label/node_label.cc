#include "plugins/node_label/node_label.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include <ksched/helper/args_json.h>

namespace ksched::plugins {
namespace {

// Go's %+v of a []string: "[a b c]".
std::string goList(const std::vector<std::string>& list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) {
    if (i > 0) out += ' ';
    out += list[i];
  }
  return out + "]";
}

void checkNoConflict(const std::vector<std::string>& present,
                     const std::vector<std::string>& absent, const std::string& field,
                     std::vector<helper::FieldError>& errs) {
  const std::set<std::string, std::less<>> presentSet(present.begin(), present.end());
  for (const std::string& label : absent) {
    if (presentSet.contains(label)) {
      errs.push_back({field, "detecting at least one label (e.g., " + helper::quote(label) +
                                 ") that exist in both the present(" + goList(present) +
                                 ") and absent(" + goList(absent) + ") label list"});
      return;
    }
  }
}

}  // namespace

NodeLabelArgs NodeLabelArgs::fromJson(const nlohmann::json& j) {
  NodeLabelArgs args;
  if (j.is_null()) return args;
  helper::expectObject(j, "",
                       {helper::kApiVersionKey, helper::kKindKey, "presentLabels", "absentLabels",
                        "presentLabelsPreference", "absentLabelsPreference"});
  helper::readStringList(j, "presentLabels", "", args.presentLabels);
  helper::readStringList(j, "absentLabels", "", args.absentLabels);
  helper::readStringList(j, "presentLabelsPreference", "", args.presentLabelsPreference);
  helper::readStringList(j, "absentLabelsPreference", "", args.absentLabelsPreference);
  return args;
}

std::vector<helper::FieldError> NodeLabelArgs::validationErrors() const {
  std::vector<helper::FieldError> errs;
  checkNoConflict(presentLabels, absentLabels, "absentLabels", errs);
  if (errs.empty()) {
    checkNoConflict(presentLabelsPreference, absentLabelsPreference, "absentLabelsPreference",
                    errs);
  }
  return errs;
}

void NodeLabelArgs::validate() const { helper::throwIfAny(validationErrors()); }

bool NodeLabel::fits(const api::Node& node) const {
  const api::Labels& labels = node.metadata.labels;
  auto has = [&](const std::string& l) { return labels.contains(l); };
  return std::all_of(args_.presentLabels.begin(), args_.presentLabels.end(), has) &&
         std::none_of(args_.absentLabels.begin(), args_.absentLabels.end(), has);
}

Status NodeLabel::filter(const CycleState& /*state*/, const api::Pod& /*pod*/,
                         const NodeInfo& nodeInfo) const {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  if (fits(*node)) return {};
  return Status::unresolvable(std::string(kErrReason));
}

Status NodeLabel::score(const CycleState& /*state*/, const api::Pod& /*pod*/,
                        const NodeInfo& nodeInfo, int64_t& score) const {
  score = 0;
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  const api::Labels& labels = node->metadata.labels;
  for (const std::string& l : args_.presentLabelsPreference) {
    if (labels.contains(l)) score += kMaxNodeScore;
  }
  for (const std::string& l : args_.absentLabelsPreference) {
    if (!labels.contains(l)) score += kMaxNodeScore;
  }
  // The average over the labels keeps the score within kMaxNodeScore.
  const auto n = static_cast<int64_t>(args_.presentLabelsPreference.size() +
                                      args_.absentLabelsPreference.size());
  if (n > 0) score /= n;
  return {};
}

std::vector<ClusterEventWithHint> NodeLabel::eventsToRegister() const {
  return {{EventResource::kNode, kAdd | kUpdateNodeLabel,
           [this](const api::Pod& pod, const EventObject& oldObj, const EventObject& newObj) {
             return nodeChangeHint(pod, oldObj, newObj);
           }}};
}

QueueingHint NodeLabel::nodeChangeHint(const api::Pod& /*pod*/, const EventObject& oldObj,
                                       const EventObject& newObj) const {
  const api::Node* node = as<api::Node>(newObj);
  if (node == nullptr) return QueueingHint::kQueue;
  if (!fits(*node)) return QueueingHint::kSkip;
  const api::Node* old = as<api::Node>(oldObj);
  return old != nullptr && fits(*old) ? QueueingHint::kSkip : QueueingHint::kQueue;
}

PluginFactory nodeLabelFactory() {
  return makePluginFactory<NodeLabel>(
      decodeAndValidate<NodeLabelArgs>,
      [](const NodeLabelArgs& typed, Handle&) { return std::make_unique<NodeLabel>(typed); });
}

}  // namespace ksched::plugins
