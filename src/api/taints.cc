#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include <ksched/api/decode.h>
#include <ksched/api/taints.h>

namespace ksched::api {

std::optional<int64_t> parseTolerationInteger(std::string_view s) noexcept {
  const size_t sign = !s.empty() && s.front() == '-' ? 1 : 0;
  if (s.size() == sign) return std::nullopt;
  if (s[sign] == '0' && s.size() > 1) return std::nullopt;  // "007", "-0"
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool Toleration::toleratesTaint(const Taint& taint, bool comparisonOperators) const noexcept {
  if (!effect.empty() && effect != taint.effect) return false;
  if (!key.empty() && key != taint.key) return false;
  if (operator_.empty() || operator_ == kTolerationOpEqual) return value == taint.value;
  if (operator_ == kTolerationOpExists) return true;
  const bool lt = operator_ == kTolerationOpLt;
  if (!lt && operator_ != kTolerationOpGt) return false;
  if (!comparisonOperators) return false;
  const auto mine = parseTolerationInteger(value);
  const auto theirs = parseTolerationInteger(taint.value);
  if (!mine || !theirs) return false;
  return lt ? *theirs < *mine : *theirs > *mine;
}

void from_json(const nlohmann::json& j, Taint& t) {
  readField(j, "key", t.key);
  readField(j, "value", t.value);
  readField(j, "effect", t.effect);
  readField(j, "timeAdded", t.timeAdded);
}

void from_json(const nlohmann::json& j, Toleration& t) {
  readField(j, "key", t.key);
  readField(j, "operator", t.operator_);
  readField(j, "value", t.value);
  readField(j, "effect", t.effect);
  readField(j, "tolerationSeconds", t.tolerationSeconds);
}

bool tolerationsTolerateTaint(std::span<const Toleration> tolerations, const Taint& taint,
                              bool comparisonOperators) noexcept {
  return std::any_of(tolerations.begin(), tolerations.end(), [&](const Toleration& t) {
    return t.toleratesTaint(taint, comparisonOperators);
  });
}

const Taint* findUntoleratedTaint(std::span<const Taint> taints,
                                  std::span<const Toleration> tolerations, bool comparisonOperators,
                                  const TaintFilter& filter) {
  for (const Taint& taint : taints) {
    if (filter && !filter(taint)) continue;
    if (!tolerationsTolerateTaint(tolerations, taint, comparisonOperators)) return &taint;
  }
  return nullptr;
}

bool isDoNotScheduleTaint(const Taint& taint) noexcept {
  return taint.effect == kTaintEffectNoSchedule || taint.effect == kTaintEffectNoExecute;
}

}  // namespace ksched::api
