#include <ksched/helper/shape_score.h>

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

}  // namespace ksched::plugins::helper
