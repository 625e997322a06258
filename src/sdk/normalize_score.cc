#include <ksched/helper/normalize_score.h>

namespace ksched::plugins::helper {

void defaultNormalizeScore(int64_t maxPriority, bool reverse, std::vector<NodeScore>& scores) {
  int64_t maxCount = 0;
  for (const NodeScore& s : scores) {
    if (s.score > maxCount) maxCount = s.score;
  }
  if (maxCount == 0) {
    if (reverse) {
      for (NodeScore& s : scores) s.score = maxPriority;
    }
    return;
  }
  for (NodeScore& s : scores) {
    int64_t score = maxPriority * s.score / maxCount;
    if (reverse) score = maxPriority - score;
    s.score = score;
  }
}

}  // namespace ksched::plugins::helper
