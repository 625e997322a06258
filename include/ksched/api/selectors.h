// Label selectors (metav1.LabelSelector) and node selectors (core/v1 NodeSelector).
//
// LabelSelector is the decoded API shape. Decoding validates it the way upstream
// LabelSelectorAsSelector would: operators In/NotIn/Exists/DoesNotExist only, In/NotIn need at
// least one value, Exists/DoesNotExist take none; anything else throws DecodeError. Key and value
// syntax are not re-validated (the apiserver did). Selector is the compiled matcher:
//   - nil selector (std::nullopt)            -> matches nothing
//   - empty selector ({})                    -> matches everything
//   - otherwise every requirement must hold (matchLabels are "key In (value)").
//
// NodeSelector follows upstream's node-affinity matcher: terms are ORed, the requirements of a
// term ANDed, a term with no requirements matches nothing. Requirements that upstream would fail
// to parse (In/NotIn without values, Exists/DoesNotExist with values, Gt/Lt without exactly one
// integer value, a matchFields key other than metadata.name or an operator there other than
// In/NotIn with one value) make their term match nothing instead of failing the whole selector.
// Unknown operator strings in either kind throw DecodeError at decode time.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/meta.h>

namespace ksched::api {

struct Node;

enum class SelectorOperator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

// "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt".
[[nodiscard]] std::string_view toString(SelectorOperator op) noexcept;
[[nodiscard]] std::optional<SelectorOperator> parseSelectorOperator(std::string_view s) noexcept;

struct LabelSelectorRequirement {
  std::string key;
  SelectorOperator operator_ = SelectorOperator::kIn;  // "operator" in JSON
  std::vector<std::string> values;

  friend bool operator==(const LabelSelectorRequirement&,
                         const LabelSelectorRequirement&) = default;
};

struct LabelSelector {
  Labels matchLabels;
  std::vector<LabelSelectorRequirement> matchExpressions;

  // No matchLabels and no matchExpressions: selects everything.
  [[nodiscard]] bool empty() const noexcept {
    return matchLabels.empty() && matchExpressions.empty();
  }

  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;
};

// Empty when the selector is valid, else why (e.g. `key "app": operator In needs values`).
[[nodiscard]] std::string labelSelectorError(const LabelSelector& s);

void from_json(const nlohmann::json& j, LabelSelectorRequirement& r);
void from_json(const nlohmann::json& j, LabelSelector& s);
void to_json(nlohmann::json& j, const LabelSelector& s);

// A compiled label selector: a conjunction of requirements with sorted values.
class Selector {
 public:
  // Matches nothing (like a nil LabelSelector); see everything().
  Selector() = default;

  [[nodiscard]] static Selector everything();
  [[nodiscard]] static Selector nothing();
  // An invalid selector (see labelSelectorError; only possible when built in code, decoding
  // rejects them) compiles to nothing().
  [[nodiscard]] static Selector compile(const LabelSelector& s);
  // nullopt -> nothing().
  [[nodiscard]] static Selector compile(const std::optional<LabelSelector>& s);
  // Upstream SelectorFromSet: key=value for each entry; an empty set selects everything.
  [[nodiscard]] static Selector fromSet(const Labels& set);

  // ANDs one more requirement (any operator, Gt/Lt with one integer value). An invalid
  // requirement turns the selector into nothing(). Adding to nothing() keeps nothing().
  Selector& add(std::string key, SelectorOperator op, std::vector<std::string> values = {});

  [[nodiscard]] bool matches(const Labels& labels) const noexcept;
  // No requirements and not nothing(): upstream Selector.Empty().
  [[nodiscard]] bool isEverything() const noexcept { return !nothing_ && requirements_.empty(); }
  [[nodiscard]] bool isNothing() const noexcept { return nothing_; }
  // Upstream-like text for logs: "app in (web),!legacy,tier notin (a,b)"; "" for everything(),
  // "<nothing>" for nothing().
  [[nodiscard]] std::string toString() const;

  // The same requirements in the same order (equal selectors match the same labels; the
  // converse does not hold).
  friend bool operator==(const Selector&, const Selector&) = default;

 private:
  struct Requirement {
    std::string key;
    SelectorOperator op = SelectorOperator::kIn;
    std::vector<std::string> values;  // sorted, unique
    int64_t bound = 0;                // Gt/Lt

    friend bool operator==(const Requirement&, const Requirement&) = default;
  };

  std::vector<Requirement> requirements_;
  bool nothing_ = true;
};

// The field matchFields may select on.
inline constexpr std::string_view kNodeFieldName = "metadata.name";

struct NodeSelectorRequirement {
  std::string key;
  SelectorOperator operator_ = SelectorOperator::kIn;  // "operator" in JSON
  std::vector<std::string> values;

  friend bool operator==(const NodeSelectorRequirement&, const NodeSelectorRequirement&) = default;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> matchExpressions;  // on node labels
  std::vector<NodeSelectorRequirement> matchFields;       // on metadata.name

  [[nodiscard]] bool empty() const noexcept {
    return matchExpressions.empty() && matchFields.empty();
  }
  // matchFields are skipped when nodeName is empty (upstream).
  [[nodiscard]] bool matches(const Labels& nodeLabels, std::string_view nodeName) const noexcept;
  [[nodiscard]] bool matches(const Node& node) const noexcept;

  friend bool operator==(const NodeSelectorTerm&, const NodeSelectorTerm&) = default;
};

struct NodeSelector {
  std::vector<NodeSelectorTerm> nodeSelectorTerms;

  // Any term matches. No terms: matches nothing.
  [[nodiscard]] bool matches(const Labels& nodeLabels, std::string_view nodeName) const noexcept;
  [[nodiscard]] bool matches(const Node& node) const noexcept;

  friend bool operator==(const NodeSelector&, const NodeSelector&) = default;
};

void from_json(const nlohmann::json& j, NodeSelectorRequirement& r);
void from_json(const nlohmann::json& j, NodeSelectorTerm& t);
void from_json(const nlohmann::json& j, NodeSelector& s);

// core/v1 TopologySelectorTerm (StorageClass.allowedTopologies): every expression needs the
// label present with one of its values. A term without expressions, or an expression without
// values, matches nothing.
struct TopologySelectorLabelRequirement {
  std::string key;
  std::vector<std::string> values;

  friend bool operator==(const TopologySelectorLabelRequirement&,
                         const TopologySelectorLabelRequirement&) = default;
};

struct TopologySelectorTerm {
  std::vector<TopologySelectorLabelRequirement> matchLabelExpressions;

  [[nodiscard]] bool matches(const Labels& labels) const noexcept;
  friend bool operator==(const TopologySelectorTerm&, const TopologySelectorTerm&) = default;
};

// Upstream MatchTopologySelectorTerms: no terms match everything, else any term must match.
[[nodiscard]] bool matchTopologySelectorTerms(const std::vector<TopologySelectorTerm>& terms,
                                              const Labels& labels) noexcept;

void from_json(const nlohmann::json& j, TopologySelectorLabelRequirement& r);
void from_json(const nlohmann::json& j, TopologySelectorTerm& t);

}  // namespace ksched::api
