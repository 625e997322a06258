#include "label_preference.h"

#include <ksched/helper/args_json.h>
#include <ksched/helper/field_error.h>
#include <ksched/registry.h>
#include <nlohmann/json.hpp>

namespace example {

namespace helper = ksched::plugins::helper;

LabelPreferenceArgs decodeArgs(const nlohmann::json& j) {
  LabelPreferenceArgs a;
  if (j.is_null()) throw ksched::PluginArgsError("key: Required value: a label name is required");
  helper::expectObject(j, "", {helper::kApiVersionKey, helper::kKindKey, "key", "values", "score"});
  helper::readString(j, "key", "", a.key);
  std::vector<std::string> values;
  helper::readStringList(j, "values", "", values);
  a.values.insert(values.begin(), values.end());
  helper::readInt64(j, "score", "", a.score);

  std::vector<helper::FieldError> errs;
  if (a.key.empty()) {
    errs.push_back(helper::required("key", "a label name is required"));
  } else {
    for (auto& e : helper::validateLabelName(a.key, "key")) errs.push_back(std::move(e));
  }
  if (a.values.empty()) errs.push_back(helper::required("values", "at least one value"));
  if (a.score < 1 || a.score > ksched::kMaxNodeScore) {
    errs.push_back(helper::invalid("score", a.score, "must be in the range [1, 100]"));
  }
  helper::throwIfAny(errs);
  return a;
}

ksched::Status LabelPreference::score(const ksched::CycleState& /*state*/,
                                      const ksched::api::Pod& /*pod*/,
                                      const ksched::NodeInfo& nodeInfo, int64_t& score) const {
  score = 0;
  const ksched::api::Node* node = nodeInfo.node();
  if (node == nullptr) return ksched::Status::error("node not found");
  const auto it = node->metadata.labels.find(args_.key);
  if (it != node->metadata.labels.end() && args_.values.contains(it->second)) score = args_.score;
  return {};
}

ksched::PluginFactory labelPreferenceFactory() {
  return ksched::makePluginFactory<LabelPreference>(
      decodeArgs, [](const LabelPreferenceArgs& args, ksched::Handle& /*handle*/) {
        return std::make_unique<LabelPreference>(args);
      });
}

}  // namespace example
