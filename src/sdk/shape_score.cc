#include <nlohmann/json.hpp>

#include <ksched/helper/args_json.h>
#include <ksched/helper/shape_score.h>
#include <ksched/registry.h>

namespace ksched::plugins::helper {

int64_t BrokenLinearFunction::operator()(int64_t p) const {
  for (size_t i = 0; i < shape_.size(); ++i) {
    if (p > shape_[i].utilization) continue;
    if (i == 0) return shape_[0].score;
    const FunctionShapePoint& a = shape_[i - 1];
    const FunctionShapePoint& b = shape_[i];
    return a.score + (b.score - a.score) * (p - a.utilization) / (b.utilization - a.utilization);
  }
  return shape_.empty() ? 0 : shape_.back().score;
}

std::vector<UtilizationShapePoint> readShape(const nlohmann::json& j, const std::string& path) {
  if (!j.is_array()) throw PluginArgsError(path + ": expected an array, got " + j.type_name());
  std::vector<UtilizationShapePoint> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string p = indexPath(path, i);
    expectObject(j[i], p, {"utilization", "score"});
    UtilizationShapePoint point;
    readInt32(j[i], "utilization", p, point.utilization);
    readInt32(j[i], "score", p, point.score);
    out.push_back(point);
  }
  return out;
}

std::vector<FieldError> validateFunctionShape(const std::vector<UtilizationShapePoint>& shape,
                                              const std::string& path) {
  constexpr int32_t kMinUtilization = 0;
  constexpr int32_t kMaxUtilization = 100;
  constexpr int32_t kMinScore = 0;
  constexpr int32_t kMaxScore = kMaxCustomPriorityScore;
  std::vector<FieldError> errs;
  if (shape.empty()) {
    errs.push_back(required(path, "at least one point must be specified"));
    return errs;
  }
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      errs.push_back(invalid(childPath(indexPath(path, i), "utilization"), shape[i].utilization,
                             "values must be sorted in increasing order"));
      break;
    }
  }
  const std::string utilizationRange = "not in valid range [" + std::to_string(kMinUtilization) +
                                       ", " + std::to_string(kMaxUtilization) + "]";
  const std::string scoreRange =
      "not in valid range [" + std::to_string(kMinScore) + ", " + std::to_string(kMaxScore) + "]";
  for (size_t i = 0; i < shape.size(); ++i) {
    const UtilizationShapePoint& p = shape[i];
    if (p.utilization < kMinUtilization || p.utilization > kMaxUtilization) {
      errs.push_back(
          invalid(childPath(indexPath(path, i), "utilization"), p.utilization, utilizationRange));
    }
    if (p.score < kMinScore || p.score > kMaxScore) {
      errs.push_back(invalid(childPath(indexPath(path, i), "score"), p.score, scoreRange));
    }
  }
  return errs;
}

}  // namespace ksched::plugins::helper
