#include <algorithm>
#include <array>
#include <charconv>
#include <nlohmann/json.hpp>
#include <utility>

#include <ksched/api/decode.h>
#include <ksched/api/node.h>
#include <ksched/api/selectors.h>

namespace ksched::api {
namespace {

using Op = SelectorOperator;

constexpr std::array<std::pair<std::string_view, Op>, 6> kOperators = {{
    {"In", Op::kIn},
    {"NotIn", Op::kNotIn},
    {"Exists", Op::kExists},
    {"DoesNotExist", Op::kDoesNotExist},
    {"Gt", Op::kGt},
    {"Lt", Op::kLt},
}};

// strconv.ParseInt(s, 10, 64): optional sign, decimal digits, no spaces.
std::optional<int64_t> parseInt64(std::string_view s) noexcept {
  if (!s.empty() && s[0] == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s[0] == '-') return std::nullopt;
  }
  int64_t v = 0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || res.ec != std::errc{} || res.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

bool validRequirement(Op op, const std::vector<std::string>& values) noexcept {
  switch (op) {
    case Op::kIn:
    case Op::kNotIn:
      return !values.empty();
    case Op::kExists:
    case Op::kDoesNotExist:
      return values.empty();
    case Op::kGt:
    case Op::kLt:
      return values.size() == 1 && parseInt64(values[0]).has_value();
  }
  return false;
}

std::string requirementError(std::string_view key, Op op, const std::vector<std::string>& values) {
  if (validRequirement(op, values)) return {};
  std::string what = "key \"" + std::string(key) + "\": operator " + std::string(toString(op));
  switch (op) {
    case Op::kIn:
    case Op::kNotIn:
      return what + " needs at least one value";
    case Op::kExists:
    case Op::kDoesNotExist:
      return what + " takes no values";
    case Op::kGt:
    case Op::kLt:
      return what + " needs exactly one integer value";
  }
  return what + " is invalid";
}

bool isLabelSelectorOperator(Op op) { return op != Op::kGt && op != Op::kLt; }

// Assumes validRequirement(op, values).
bool requirementMatches(const std::string& key, Op op, const std::vector<std::string>& values,
                        const Labels& labels) noexcept {
  const auto it = labels.find(key);
  const bool has = it != labels.end();
  switch (op) {
    case Op::kIn:
      return has && std::find(values.begin(), values.end(), it->second) != values.end();
    case Op::kNotIn:
      return !has || std::find(values.begin(), values.end(), it->second) == values.end();
    case Op::kExists:
      return has;
    case Op::kDoesNotExist:
      return !has;
    case Op::kGt:
    case Op::kLt: {
      if (!has) return false;
      const auto lhs = parseInt64(it->second);
      const auto rhs = parseInt64(values[0]);
      if (!lhs || !rhs) return false;
      return op == Op::kGt ? *lhs > *rhs : *lhs < *rhs;
    }
  }
  return false;
}

bool validFieldRequirement(const NodeSelectorRequirement& r) noexcept {
  return r.key == kNodeFieldName && (r.operator_ == Op::kIn || r.operator_ == Op::kNotIn) &&
         r.values.size() == 1;
}

Op readOperator(const nlohmann::json& j, std::string_view kind) {
  std::string s;
  readField(j, "operator", s);
  const auto op = parseSelectorOperator(s);
  if (!op) {
    throw DecodeError("operator: unknown " + std::string(kind) + " operator \"" + s + "\"");
  }
  return *op;
}

}  // namespace

std::string_view toString(SelectorOperator op) noexcept {
  for (const auto& [name, o] : kOperators) {
    if (o == op) return name;
  }
  return "?";
}

std::optional<SelectorOperator> parseSelectorOperator(std::string_view s) noexcept {
  for (const auto& [name, o] : kOperators) {
    if (name == s) return o;
  }
  return std::nullopt;
}

std::string labelSelectorError(const LabelSelector& s) {
  for (const auto& r : s.matchExpressions) {
    if (!isLabelSelectorOperator(r.operator_)) {
      return "key \"" + r.key + "\": operator " + std::string(toString(r.operator_)) +
             " is not allowed in a label selector";
    }
    std::string err = requirementError(r.key, r.operator_, r.values);
    if (!err.empty()) return err;
  }
  return {};
}

void from_json(const nlohmann::json& j, LabelSelectorRequirement& r) {
  readField(j, "key", r.key);
  readField(j, "values", r.values);
  r.operator_ = readOperator(j, "label selector");
  if (!isLabelSelectorOperator(r.operator_)) {
    throw DecodeError("operator: operator " + std::string(toString(r.operator_)) +
                      " is not allowed in a label selector");
  }
  std::string err = requirementError(r.key, r.operator_, r.values);
  if (!err.empty()) throw DecodeError("values: " + err);
}

void from_json(const nlohmann::json& j, LabelSelector& s) {
  readField(j, "matchLabels", s.matchLabels);
  readField(j, "matchExpressions", s.matchExpressions);
}

void to_json(nlohmann::json& j, const LabelSelector& s) {
  j = nlohmann::json::object();
  if (!s.matchLabels.empty()) j["matchLabels"] = s.matchLabels;
  if (!s.matchExpressions.empty()) {
    auto& exprs = j["matchExpressions"] = nlohmann::json::array();
    for (const auto& r : s.matchExpressions) {
      nlohmann::json e = {{"key", r.key}, {"operator", toString(r.operator_)}};
      if (!r.values.empty()) e["values"] = r.values;
      exprs.push_back(std::move(e));
    }
  }
}

Selector Selector::everything() {
  Selector s;
  s.nothing_ = false;
  return s;
}

Selector Selector::nothing() { return {}; }

Selector Selector::compile(const LabelSelector& ls) {
  if (!labelSelectorError(ls).empty()) return nothing();
  Selector s = everything();
  for (const auto& [key, value] : ls.matchLabels) s.add(key, Op::kIn, {value});
  for (const auto& r : ls.matchExpressions) s.add(r.key, r.operator_, r.values);
  return s;
}

Selector Selector::compile(const std::optional<LabelSelector>& ls) {
  return ls ? compile(*ls) : nothing();
}

Selector Selector::fromSet(const Labels& set) {
  Selector s = everything();
  for (const auto& [key, value] : set) s.add(key, Op::kIn, {value});
  return s;
}

Selector& Selector::add(std::string key, SelectorOperator op, std::vector<std::string> values) {
  if (nothing_) return *this;
  if (!validRequirement(op, values)) {
    requirements_.clear();
    nothing_ = true;
    return *this;
  }
  Requirement r{std::move(key), op, std::move(values), 0};
  if (op == Op::kGt || op == Op::kLt) r.bound = *parseInt64(r.values[0]);
  std::sort(r.values.begin(), r.values.end());
  r.values.erase(std::unique(r.values.begin(), r.values.end()), r.values.end());
  auto pos = std::upper_bound(requirements_.begin(), requirements_.end(), r.key,
                              [](const std::string& k, const Requirement& x) { return k < x.key; });
  requirements_.insert(pos, std::move(r));
  return *this;
}

bool Selector::matches(const Labels& labels) const noexcept {
  if (nothing_) return false;
  for (const auto& r : requirements_) {
    const auto it = labels.find(r.key);
    const bool has = it != labels.end();
    switch (r.op) {
      case Op::kIn:
        if (!has || !std::binary_search(r.values.begin(), r.values.end(), it->second)) {
          return false;
        }
        break;
      case Op::kNotIn:
        if (has && std::binary_search(r.values.begin(), r.values.end(), it->second)) return false;
        break;
      case Op::kExists:
        if (!has) return false;
        break;
      case Op::kDoesNotExist:
        if (has) return false;
        break;
      case Op::kGt:
      case Op::kLt: {
        if (!has) return false;
        const auto v = parseInt64(it->second);
        if (!v || (r.op == Op::kGt ? *v <= r.bound : *v >= r.bound)) return false;
        break;
      }
    }
  }
  return true;
}

std::string Selector::toString() const {
  if (nothing_) return "<nothing>";
  std::string out;
  for (const auto& r : requirements_) {
    if (!out.empty()) out += ',';
    switch (r.op) {
      case Op::kIn:
      case Op::kNotIn: {
        out += r.key + (r.op == Op::kIn ? " in (" : " notin (");
        for (size_t i = 0; i < r.values.size(); ++i) out += (i ? "," : "") + r.values[i];
        out += ')';
        break;
      }
      case Op::kExists:
        out += r.key;
        break;
      case Op::kDoesNotExist:
        out += '!' + r.key;
        break;
      case Op::kGt:
        out += r.key + '>' + r.values[0];
        break;
      case Op::kLt:
        out += r.key + '<' + r.values[0];
        break;
    }
  }
  return out;
}

bool NodeSelectorTerm::matches(const Labels& nodeLabels, std::string_view nodeName) const noexcept {
  if (empty()) return false;
  for (const auto& r : matchExpressions) {
    if (!validRequirement(r.operator_, r.values)) return false;
  }
  for (const auto& r : matchFields) {
    if (!validFieldRequirement(r)) return false;
  }
  for (const auto& r : matchExpressions) {
    if (!requirementMatches(r.key, r.operator_, r.values, nodeLabels)) return false;
  }
  if (nodeName.empty()) return true;
  for (const auto& r : matchFields) {
    const bool equal = nodeName == r.values[0];
    if (r.operator_ == Op::kIn ? !equal : equal) return false;
  }
  return true;
}

bool NodeSelectorTerm::matches(const Node& node) const noexcept {
  return matches(node.metadata.labels, node.metadata.name);
}

bool NodeSelector::matches(const Labels& nodeLabels, std::string_view nodeName) const noexcept {
  return std::any_of(nodeSelectorTerms.begin(), nodeSelectorTerms.end(),
                     [&](const NodeSelectorTerm& t) { return t.matches(nodeLabels, nodeName); });
}

bool NodeSelector::matches(const Node& node) const noexcept {
  return matches(node.metadata.labels, node.metadata.name);
}

void from_json(const nlohmann::json& j, NodeSelectorRequirement& r) {
  readField(j, "key", r.key);
  readField(j, "values", r.values);
  r.operator_ = readOperator(j, "node selector");
}

void from_json(const nlohmann::json& j, NodeSelectorTerm& t) {
  readField(j, "matchExpressions", t.matchExpressions);
  readField(j, "matchFields", t.matchFields);
}

void from_json(const nlohmann::json& j, NodeSelector& s) {
  readField(j, "nodeSelectorTerms", s.nodeSelectorTerms);
}

bool TopologySelectorTerm::matches(const Labels& labels) const noexcept {
  if (matchLabelExpressions.empty()) return false;
  for (const auto& r : matchLabelExpressions) {
    const auto it = labels.find(r.key);
    if (it == labels.end() ||
        std::find(r.values.begin(), r.values.end(), it->second) == r.values.end()) {
      return false;
    }
  }
  return true;
}

bool matchTopologySelectorTerms(const std::vector<TopologySelectorTerm>& terms,
                                const Labels& labels) noexcept {
  if (terms.empty()) return true;
  return std::any_of(terms.begin(), terms.end(),
                     [&](const TopologySelectorTerm& t) { return t.matches(labels); });
}

void from_json(const nlohmann::json& j, TopologySelectorLabelRequirement& r) {
  readField(j, "key", r.key);
  readField(j, "values", r.values);
}

void from_json(const nlohmann::json& j, TopologySelectorTerm& t) {
  readField(j, "matchLabelExpressions", t.matchLabelExpressions);
}

}  // namespace ksched::api
