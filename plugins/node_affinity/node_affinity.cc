#include "plugins/node_affinity/node_affinity.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include <ksched/api/node.h>
#include <ksched/api/selectors.h>
#include <ksched/helper/args_json.h>
#include <ksched/helper/node_affinity.h>
#include <ksched/helper/normalize_score.h>
#include <ksched/registry.h>

namespace ksched::plugins {
namespace {

using api::SelectorOperator;
using helper::childPath;
using helper::FieldError;
using helper::indexPath;

// ---- args decoding ------------------------------------------------------------------------

const nlohmann::json* arrayMember(const nlohmann::json& j, std::string_view key,
                                  const std::string& path) {
  const nlohmann::json* v = helper::member(j, key);
  if (v != nullptr && !v->is_array()) {
    throw PluginArgsError(childPath(path, key) + ": expected an array, got " + v->type_name());
  }
  return v;
}

const std::vector<std::string>& selectorOperatorNames() {
  static const std::vector<std::string> kNames{"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  return kNames;
}

api::NodeSelectorRequirement decodeRequirement(const nlohmann::json& j, const std::string& path,
                                               bool field) {
  helper::expectObject(j, path, {"key", "operator", "values"});
  api::NodeSelectorRequirement r;
  helper::readString(j, "key", path, r.key);
  std::string op;
  helper::readString(j, "operator", path, op);
  helper::readStringList(j, "values", path, r.values);
  const auto parsed = api::parseSelectorOperator(op);
  if (!parsed) {
    const std::string opPath = childPath(path, "operator");
    FieldError e = field ? helper::invalid(opPath, op, "not a valid selector operator")
                         : helper::notSupported(opPath, op, selectorOperatorNames());
    throw PluginArgsError(e.toString());
  }
  r.operator_ = *parsed;
  return r;
}

std::vector<api::NodeSelectorRequirement> decodeRequirements(const nlohmann::json& j,
                                                             std::string_view key,
                                                             const std::string& path, bool field) {
  std::vector<api::NodeSelectorRequirement> out;
  const nlohmann::json* arr = arrayMember(j, key, path);
  if (arr == nullptr) return out;
  const std::string p = childPath(path, key);
  for (size_t i = 0; i < arr->size(); ++i) {
    out.push_back(decodeRequirement((*arr)[i], indexPath(p, i), field));
  }
  return out;
}

api::NodeSelectorTerm decodeTerm(const nlohmann::json& j, const std::string& path) {
  helper::expectObject(j, path, {"matchExpressions", "matchFields"});
  api::NodeSelectorTerm t;
  t.matchExpressions = decodeRequirements(j, "matchExpressions", path, false);
  t.matchFields = decodeRequirements(j, "matchFields", path, true);
  return t;
}

api::NodeAffinity decodeAffinity(const nlohmann::json& j, const std::string& path) {
  constexpr std::string_view kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
  constexpr std::string_view kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";
  helper::expectObject(j, path, {kRequired, kPreferred});
  api::NodeAffinity a;
  if (const nlohmann::json* req = helper::member(j, kRequired)) {
    const std::string reqPath = childPath(path, kRequired);
    helper::expectObject(*req, reqPath, {"nodeSelectorTerms"});
    api::NodeSelector ns;
    if (const nlohmann::json* terms = arrayMember(*req, "nodeSelectorTerms", reqPath)) {
      const std::string termsPath = childPath(reqPath, "nodeSelectorTerms");
      for (size_t i = 0; i < terms->size(); ++i) {
        ns.nodeSelectorTerms.push_back(decodeTerm((*terms)[i], indexPath(termsPath, i)));
      }
    }
    a.requiredDuringSchedulingIgnoredDuringExecution = std::move(ns);
  }
  if (const nlohmann::json* pref = arrayMember(j, kPreferred, path)) {
    const std::string prefPath = childPath(path, kPreferred);
    for (size_t i = 0; i < pref->size(); ++i) {
      const std::string p = indexPath(prefPath, i);
      helper::expectObject((*pref)[i], p, {"weight", "preference"});
      api::PreferredSchedulingTerm t;
      helper::readInt32((*pref)[i], "weight", p, t.weight);
      if (const nlohmann::json* preference = helper::member((*pref)[i], "preference")) {
        t.preference = decodeTerm(*preference, childPath(p, "preference"));
      }
      a.preferredDuringSchedulingIgnoredDuringExecution.push_back(std::move(t));
    }
  }
  return a;
}

// ---- args validation (upstream nodeaffinity.NewNodeSelector / labels.NewRequirement) -------

// Go's %#v of a []string.
std::string goStringSlice(const std::vector<std::string>& values) {
  if (values.empty()) return "[]string(nil)";
  std::string out = "[]string{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += helper::quote(values[i]);
  }
  return out + "}";
}

FieldError invalidSlice(std::string field, const std::vector<std::string>& values,
                        std::string_view detail) {
  return {std::move(field), "Invalid value: " + goStringSlice(values) + ": " + std::string(detail)};
}

bool isInteger(const std::string& s) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size() || s.size() - i > 19) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  try {
    (void)std::stoll(s);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

void validateLabelRequirement(const api::NodeSelectorRequirement& r, const std::string& path,
                              std::vector<FieldError>& errs) {
  // The key (labels.validateLabelKey joins IsQualifiedName's messages with "; ").
  const std::string keyPath = childPath(path, "key");
  const std::vector<FieldError> keyErrs = helper::validateLabelName(r.key, keyPath);
  if (!keyErrs.empty()) {
    const std::string prefix = "Invalid value: " + helper::quote(r.key) + ": ";
    std::string body = keyErrs.front().body;
    for (size_t i = 1; i < keyErrs.size(); ++i) {
      const std::string& b = keyErrs[i].body;
      body += "; " + (b.starts_with(prefix) ? b.substr(prefix.size()) : b);
    }
    errs.push_back({keyPath, std::move(body)});
  }
  const std::string valuesPath = childPath(path, "values");
  switch (r.operator_) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn:
      if (r.values.empty()) {
        errs.push_back(invalidSlice(valuesPath, r.values,
                                    "for 'in', 'notin' operators, values set can't be empty"));
      }
      break;
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      if (!r.values.empty()) {
        errs.push_back(
            {valuesPath, "Forbidden: values set must be empty for exists and does not exist"});
      }
      break;
    case SelectorOperator::kGt:
    case SelectorOperator::kLt:
      if (r.values.size() != 1) {
        errs.push_back(invalidSlice(valuesPath, r.values,
                                    "for 'Gt', 'Lt' operators, exactly one value is required"));
      }
      for (size_t i = 0; i < r.values.size(); ++i) {
        if (!isInteger(r.values[i])) {
          errs.push_back(helper::invalid(indexPath(valuesPath, i), r.values[i],
                                         "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      }
      break;
  }
  for (size_t i = 0; i < r.values.size(); ++i) {
    const std::vector<std::string> valueErrs = helper::labelValueErrors(r.values[i]);
    if (valueErrs.empty()) continue;
    std::string detail;
    for (size_t k = 0; k < valueErrs.size(); ++k) {
      if (k > 0) detail += "; ";
      detail += valueErrs[k];
    }
    errs.push_back(
        helper::invalid(indexPath(valuesPath, i) + "[" + r.key + "]", r.values[i], detail));
  }
}

void validateFieldRequirement(const api::NodeSelectorRequirement& r, const std::string& path,
                              std::vector<FieldError>& errs) {
  if (r.values.size() != 1) {
    errs.push_back(invalidSlice(childPath(path, "values"), r.values, "must have one element"));
    return;
  }
  if (r.operator_ != SelectorOperator::kIn && r.operator_ != SelectorOperator::kNotIn) {
    errs.push_back(helper::invalid(childPath(path, "operator"), api::toString(r.operator_),
                                   "not a valid selector operator"));
  }
}

void validateTerm(const api::NodeSelectorTerm& t, const std::string& path,
                  std::vector<FieldError>& errs) {
  const std::string exprPath = childPath(path, "matchExpressions");
  for (size_t i = 0; i < t.matchExpressions.size(); ++i) {
    validateLabelRequirement(t.matchExpressions[i], indexPath(exprPath, i), errs);
  }
  const std::string fieldsPath = childPath(path, "matchFields");
  for (size_t i = 0; i < t.matchFields.size(); ++i) {
    validateFieldRequirement(t.matchFields[i], indexPath(fieldsPath, i), errs);
  }
}

// ---- matching ------------------------------------------------------------------------------

const std::vector<api::PreferredSchedulingTerm>* preferredAffinity(const api::Pod& pod) {
  const auto& a = pod.spec.affinity;
  if (!a || !a->nodeAffinity ||
      a->nodeAffinity->preferredDuringSchedulingIgnoredDuringExecution.empty()) {
    return nullptr;
  }
  return &a->nodeAffinity->preferredDuringSchedulingIgnoredDuringExecution;
}

// Upstream PreferredSchedulingTerms.Score: terms with weight 0 or no requirements count not.
int64_t preferredScore(const std::vector<api::PreferredSchedulingTerm>& terms,
                       const api::Node& node) {
  int64_t score = 0;
  for (const auto& t : terms) {
    if (t.weight == 0 || t.preference.empty()) continue;
    if (t.preference.matches(node)) score += t.weight;
  }
  return score;
}

struct PreFilterState final : StateData {
  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

struct PreScoreState final : StateData {
  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

constexpr StateKey<PreFilterState> kPreFilterKey{NodeAffinity::kPreFilterStateKey};
constexpr StateKey<PreScoreState> kPreScoreKey{NodeAffinity::kPreScoreStateKey};

}  // namespace

NodeAffinityArgs NodeAffinityArgs::fromJson(const nlohmann::json& j) {
  NodeAffinityArgs args;
  if (j.is_null()) return args;
  helper::expectObject(j, "", {helper::kApiVersionKey, helper::kKindKey, "addedAffinity"});
  if (const nlohmann::json* a = helper::member(j, "addedAffinity")) {
    args.addedAffinity = decodeAffinity(*a, "addedAffinity");
  }
  return args;
}

std::vector<FieldError> NodeAffinityArgs::validationErrors() const {
  std::vector<FieldError> errs;
  if (!addedAffinity) return errs;
  if (const auto& ns = addedAffinity->requiredDuringSchedulingIgnoredDuringExecution) {
    const std::string path =
        "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
    for (size_t i = 0; i < ns->nodeSelectorTerms.size(); ++i) {
      validateTerm(ns->nodeSelectorTerms[i], indexPath(path, i), errs);
    }
  }
  const auto& pref = addedAffinity->preferredDuringSchedulingIgnoredDuringExecution;
  for (size_t i = 0; i < pref.size(); ++i) {
    // Upstream skips (does not parse) terms with weight 0 or without requirements.
    if (pref[i].weight == 0 || pref[i].preference.empty()) continue;
    validateTerm(
        pref[i].preference,
        childPath(indexPath("addedAffinity.preferredDuringSchedulingIgnoredDuringExecution", i),
                  "preference"),
        errs);
  }
  return errs;
}

void NodeAffinityArgs::validate() const { helper::throwIfAny(validationErrors()); }

NodeAffinity::NodeAffinity(const NodeAffinityArgs& args)
    : addedNodeSelector_(args.addedAffinity
                             ? args.addedAffinity->requiredDuringSchedulingIgnoredDuringExecution
                             : std::nullopt),
      addedPrefSchedTerms_(args.addedAffinity
                               ? args.addedAffinity->preferredDuringSchedulingIgnoredDuringExecution
                               : std::vector<api::PreferredSchedulingTerm>{}) {}

Status NodeAffinity::preFilter(CycleState& state, const api::Pod& pod,
                               const NodeInfoLister& /*nodes*/, PreFilterResult& result) {
  const api::NodeSelector* required = helper::requiredNodeAffinity(pod);
  if (required == nullptr && !addedNodeSelector_ && pod.spec.nodeSelector.empty()) {
    return Status::skip();
  }
  state.write(kPreFilterKey, std::make_unique<PreFilterState>());
  if (required == nullptr || required->nodeSelectorTerms.empty()) return {};

  // Affinity to specific nodes: metadata.name In [...] in every term.
  std::set<std::string, std::less<>> nodeNames;
  for (const api::NodeSelectorTerm& t : required->nodeSelectorTerms) {
    std::optional<std::set<std::string, std::less<>>> termNames;
    for (const api::NodeSelectorRequirement& r : t.matchFields) {
      if (r.key != api::kNodeFieldName || r.operator_ != SelectorOperator::kIn) continue;
      std::set<std::string, std::less<>> s(r.values.begin(), r.values.end());
      if (!termNames) {
        termNames = std::move(s);
      } else {
        std::set<std::string, std::less<>> both;
        std::set_intersection(termNames->begin(), termNames->end(), s.begin(), s.end(),
                              std::inserter(both, both.end()));
        termNames = std::move(both);
      }
    }
    // A term without a node-name requirement admits every node (terms are ORed).
    if (!termNames) return {};
    nodeNames.insert(termNames->begin(), termNames->end());
  }
  if (nodeNames.empty()) return Status::unresolvable(std::string(kErrReasonConflict));
  result.nodeNames = std::move(nodeNames);
  return {};
}

bool NodeAffinity::matches(const api::Pod& pod, const api::Node& node) const {
  return (!addedNodeSelector_ || addedNodeSelector_->matches(node)) &&
         helper::podMatchesNodeSelectorAndAffinityTerms(pod, node);
}

Status NodeAffinity::filter(const CycleState& /*state*/, const api::Pod& pod,
                            const NodeInfo& nodeInfo) const {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  if (addedNodeSelector_ && !addedNodeSelector_->matches(*node)) {
    return Status::unresolvable(std::string(kErrReasonEnforced));
  }
  if (!helper::podMatchesNodeSelectorAndAffinityTerms(pod, *node)) {
    return Status::unresolvable(std::string(kErrReasonPod));
  }
  return {};
}

Status NodeAffinity::preScore(CycleState& state, const api::Pod& pod,
                              const std::vector<const NodeInfo*>& nodes) {
  if (nodes.empty()) return {};
  if (preferredAffinity(pod) == nullptr && addedPrefSchedTerms_.empty()) return Status::skip();
  state.write(kPreScoreKey, std::make_unique<PreScoreState>());
  return {};
}

Status NodeAffinity::score(const CycleState& /*state*/, const api::Pod& pod,
                           const NodeInfo& nodeInfo, int64_t& score) const {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  int64_t count = preferredScore(addedPrefSchedTerms_, *node);
  if (const auto* terms = preferredAffinity(pod)) count += preferredScore(*terms, *node);
  score = count;
  return {};
}

Status NodeAffinity::normalizeScore(const CycleState& /*state*/, const api::Pod& /*pod*/,
                                    std::vector<NodeScore>& scores) const {
  helper::defaultNormalizeScore(kMaxNodeScore, false, scores);
  return {};
}

std::vector<ClusterEventWithHint> NodeAffinity::eventsToRegister() const {
  return {{EventResource::kNode, kAdd | kUpdateNodeLabel,
           std::bind_front(&NodeAffinity::isSchedulableAfterNodeChange, this)}};
}

QueueingHint NodeAffinity::isSchedulableAfterNodeChange(const api::Pod& pod,
                                                        const EventObject& oldObj,
                                                        const EventObject& newObj) const {
  const api::Node* modified = as<api::Node>(newObj);
  if (modified == nullptr) return QueueingHint::kQueue;
  if (!matches(pod, *modified)) return QueueingHint::kSkip;
  // Added, or updated from a node that did not match: the Filter's verdict changed.
  const api::Node* original = as<api::Node>(oldObj);
  if (original != nullptr && matches(pod, *original)) return QueueingHint::kSkip;
  return QueueingHint::kQueue;
}

PluginFactory nodeAffinityFactory() {
  return makePluginFactory<NodeAffinity>(
      decodeAndValidate<NodeAffinityArgs>,
      [](const NodeAffinityArgs& typed, Handle&) { return std::make_unique<NodeAffinity>(typed); });
}

}  // namespace ksched::plugins
