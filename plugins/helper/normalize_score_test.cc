#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <ksched/helper/normalize_score.h>

namespace ksched::plugins::helper {
namespace {

struct NormalizeCase {
  std::string name;
  bool reverse = false;
  std::vector<int64_t> scores;
  std::vector<int64_t> want;
};

class DefaultNormalizeScoreTest : public ::testing::TestWithParam<NormalizeCase> {};

TEST_P(DefaultNormalizeScoreTest, Normalizes) {
  const NormalizeCase& c = GetParam();
  std::vector<NodeScore> scores;
  for (size_t i = 0; i < c.scores.size(); ++i) {
    scores.push_back({"node" + std::to_string(i), c.scores[i]});
  }
  defaultNormalizeScore(kMaxNodeScore, c.reverse, scores);
  std::vector<int64_t> got;
  got.reserve(scores.size());
  for (const auto& s : scores) got.push_back(s.score);
  EXPECT_EQ(got, c.want);
}

// The cases of upstream helper/normalize_score_test.go.
INSTANTIATE_TEST_SUITE_P(
    Table, DefaultNormalizeScoreTest,
    ::testing::Values(NormalizeCase{"scales", false, {1, 2, 3, 4, 5}, {20, 40, 60, 80, 100}},
                      NormalizeCase{"scalesReversed", true, {1, 2, 3, 4, 5}, {80, 60, 40, 20, 0}},
                      NormalizeCase{"integerDivision", false, {1000, 10, 20, 30}, {100, 1, 2, 3}},
                      NormalizeCase{
                          "integerDivisionReversed", true, {1000, 10, 20, 30}, {0, 99, 98, 97}},
                      NormalizeCase{"singleNonZero", false, {1, 1, 1, 1}, {100, 100, 100, 100}},
                      NormalizeCase{"singleNonZeroReversed", true, {1, 1, 1, 1}, {0, 0, 0, 0}},
                      NormalizeCase{"allZero", false, {0, 0, 0, 0}, {0, 0, 0, 0}},
                      NormalizeCase{"allZeroReversed", true, {0, 0, 0, 0}, {100, 100, 100, 100}},
                      NormalizeCase{"empty", true, {}, {}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ksched::plugins::helper
