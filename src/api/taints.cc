#include <algorithm>
#include <nlohmann/json.hpp>

#include <ksched/api/decode.h>
#include <ksched/api/taints.h>

namespace ksched::api {

bool Toleration::toleratesTaint(const Taint& taint) const noexcept {
  if (!effect.empty() && effect != taint.effect) return false;
  if (!key.empty() && key != taint.key) return false;
  if (operator_.empty() || operator_ == kTolerationOpEqual) return value == taint.value;
  return operator_ == kTolerationOpExists;
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

bool tolerationsTolerateTaint(std::span<const Toleration> tolerations,
                              const Taint& taint) noexcept {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const Toleration& t) { return t.toleratesTaint(taint); });
}

const Taint* findUntoleratedTaint(std::span<const Taint> taints,
                                  std::span<const Toleration> tolerations,
                                  const TaintFilter& filter) {
  for (const Taint& taint : taints) {
    if (filter && !filter(taint)) continue;
    if (!tolerationsTolerateTaint(tolerations, taint)) return &taint;
  }
  return nullptr;
}

bool isDoNotScheduleTaint(const Taint& taint) noexcept {
  return taint.effect == kTaintEffectNoSchedule || taint.effect == kTaintEffectNoExecute;
}

}  // namespace ksched::api
