// Piecewise-linear scoring functions (upstream framework/plugins/helper/shape_score.go).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

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

}  // namespace ksched::plugins::helper
