// Piecewise-linear scoring functions (upstream framework/plugins/helper/shape_score.go).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include <ksched/helper/field_error.h>
#include <ksched/helper/resource_allocation.h>

namespace ksched::plugins::helper {

struct FunctionShapePoint {
  int64_t utilization = 0;  // x, increasing from point to point
  int64_t score = 0;        // y
};

// Upstream BuildBrokenLinearFunction: the polyline through `shape` (which must be non-empty and
// sorted by utilization), constant before the first point and after the last. Interpolation
// uses integer division, as upstream.
class BrokenLinearFunction {
 public:
  explicit BrokenLinearFunction(std::vector<FunctionShapePoint> shape) : shape_(std::move(shape)) {}

  [[nodiscard]] int64_t operator()(int64_t p) const;

 private:
  std::vector<FunctionShapePoint> shape_;
};

// A `shape` argument: a list of {utilization, score} objects at `path` (PluginArgsError naming
// the field when it is not one).
[[nodiscard]] std::vector<UtilizationShapePoint> readShape(const nlohmann::json& j,
                                                           const std::string& path);
// Upstream validateFunctionShape: at least one point, utilizations strictly increasing (the
// first violation only), utilization in [0, 100], score in [0, kMaxCustomPriorityScore].
[[nodiscard]] std::vector<FieldError> validateFunctionShape(
    const std::vector<UtilizationShapePoint>& shape, const std::string& path);

}  // namespace ksched::plugins::helper
