#include <ksched/helper/explain_text.h>

namespace ksched::plugins::helper {

std::string requirementText(const std::string& key, api::SelectorOperator op,
                            const std::vector<std::string>& values) {
  std::string out = key + " " + std::string(api::toString(op));
  if (op == api::SelectorOperator::kExists || op == api::SelectorOperator::kDoesNotExist) {
    return out;
  }
  out += " [";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + values[i];
  return out + "]";
}

std::string selectorText(const std::optional<api::LabelSelector>& selector) {
  if (!selector) return "<no selector>";
  if (selector->empty()) return "{}";
  std::string out;
  for (const auto& [k, v] : selector->matchLabels) out += (out.empty() ? "" : ",") + k + "=" + v;
  for (const auto& r : selector->matchExpressions) {
    out += (out.empty() ? "" : ",") + requirementText(r.key, r.operator_, r.values);
  }
  return out;
}

}  // namespace ksched::plugins::helper
