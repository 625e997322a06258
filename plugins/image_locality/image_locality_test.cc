#include "plugins/image_locality/image_locality.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cache/snapshot.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using cache::Snapshot;

constexpr int64_t kMB = 1024 * 1024;

using testutil::SnapshotHandle;

struct Image {
  std::vector<std::string> names;
  int64_t sizeMB = 0;
};

NodePtr nodeWithImages(const std::string& name, const std::vector<Image>& images) {
  api::Node n = testutil::NodeWrapper(name).obj();
  for (const auto& img : images) n.status.images.push_back({img.names, img.sizeMB * kMB});
  return std::make_shared<const api::Node>(std::move(n));
}

api::Pod podWithImages(const std::vector<std::string>& images,
                       const std::vector<std::string>& initImages = {}) {
  api::Pod pod = testutil::PodWrapper().obj();
  for (const auto& image : images) {
    api::Container c;
    c.name = "c" + std::to_string(pod.spec.containers.size());
    c.image = image;
    pod.spec.containers.push_back(std::move(c));
  }
  for (const auto& image : initImages) {
    api::Container c;
    c.name = "init" + std::to_string(pod.spec.initContainers.size());
    c.image = image;
    pod.spec.initContainers.push_back(std::move(c));
  }
  return pod;
}

const std::vector<Image> kNode403002000 = {
    {{"gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"}, 40},
    {{"gcr.io/300:latest", "gcr.io/300:v1"}, 300},
    {{"gcr.io/2000:latest"}, 2000}};
const std::vector<Image> kNode25010 = {{{"gcr.io/250:latest"}, 250},
                                       {{"gcr.io/10:latest", "gcr.io/10:v1"}, 10}};
const std::vector<Image> kNode60040900 = {
    {{"gcr.io/600:latest"}, 600}, {{"gcr.io/40:latest"}, 40}, {{"gcr.io/900:latest"}, 900}};
const std::vector<Image> kNode300600900 = {
    {{"gcr.io/300:latest"}, 300}, {{"gcr.io/600:latest"}, 600}, {{"gcr.io/900:latest"}, 900}};
const std::vector<Image> kNode400030 = {{{"gcr.io/4000:latest"}, 4000}, {{"gcr.io/30:latest"}, 30}};
const std::vector<Image> kNode203040 = {
    {{"gcr.io/20:latest"}, 20}, {{"gcr.io/30:latest"}, 30}, {{"gcr.io/40:latest"}, 40}};

struct Case {
  std::string name;
  api::Pod pod;
  std::vector<Image> node1;
  std::vector<Image> node2;
  std::vector<int64_t> want;  // node1, node2
};

class ImageLocalityScoreTest : public ::testing::TestWithParam<Case> {};

TEST_P(ImageLocalityScoreTest, Score) {
  const Case& c = GetParam();
  SnapshotHandle h(Snapshot::fromForTest(
      {}, {nodeWithImages("node1", c.node1), nodeWithImages("node2", c.node2)}));
  auto plugin = makePlugin(imageLocalityFactory(), nullptr, h);
  auto& pl = dynamic_cast<ImageLocality&>(*plugin);
  EXPECT_FALSE(pl.hasNormalizeScore());
  CycleState state;
  std::vector<int64_t> got;
  for (const char* name : {"node1", "node2"}) {
    const NodeInfo* ni = h.snapshot().get(name);
    ASSERT_NE(ni, nullptr);
    int64_t score = -1;
    ASSERT_TRUE(pl.score(state, c.pod, *ni, score).ok());
    got.push_back(score);
  }
  EXPECT_EQ(got, c.want);
}

// Upstream TestImageLocalityPriority's pods and nodes. Scores follow upstream's formula: each
// image contributes size * (nodes having it / 2).
INSTANTIATE_TEST_SUITE_P(
    Table, ImageLocalityScoreTest,
    ::testing::Values(
        // node1: 40MB/2 = 20MB < 23MB -> 0; node2: 250MB/2 = 125MB -> 100*102/1977 = 5.
        Case{"preferLargerImage",
             podWithImages({"gcr.io/40", "gcr.io/250"}),
             kNode403002000,
             kNode25010,
             {0, 5}},
        // node1: (40 + 300)/2 = 170MB -> 100*147/1977 = 7.
        Case{"twoImagesOnOneNode",
             podWithImages({"gcr.io/40", "gcr.io/300"}),
             kNode403002000,
             kNode25010,
             {7, 0}},
        // node1: 4000MB/2 = 2000MB, the maximum for 2 containers -> 100.
        Case{"exceedingLimitUsesLimit",
             podWithImages({"gcr.io/10", "gcr.io/4000"}),
             kNode400030,
             kNode25010,
             {100, 0}},
        // 600 and 900 are on both nodes (spread 1): node1 1500MB -> 100*1477/2977 = 49;
        // node2 300/2 + 1500 = 1650MB -> 100*1627/2977 = 54.
        Case{"multipleLargeImages",
             podWithImages({"gcr.io/300", "gcr.io/600", "gcr.io/900"}),
             kNode60040900,
             kNode300600900,
             {49, 54}},
        // node1: 30MB -> 100*7/1977 = 0; node2: 30 + 40/2 = 50MB -> 100*27/1977 = 1.
        Case{"multipleSmallImages",
             podWithImages({"gcr.io/30", "gcr.io/40"}),
             kNode400030,
             kNode203040,
             {0, 1}},
        // Init containers count: node1 300/2 = 150MB, 2 containers -> 100*127/1977 = 6.
        Case{"initContainerImage",
             podWithImages({"gcr.io/30"}, {"gcr.io/300"}),
             kNode403002000,
             kNode203040,
             {6, 0}},
        // Tagged names match as they are: 300MB/2 = 150MB, 1 container -> 100*127/977 = 12.
        Case{"taggedImage", podWithImages({"gcr.io/300:v1"}), kNode403002000, kNode25010, {12, 0}},
        Case{"unknownTag", podWithImages({"gcr.io/300:v2"}), kNode403002000, kNode25010, {0, 0}},
        Case{"noContainers", podWithImages({}), kNode403002000, kNode25010, {0, 0}}),
    [](const auto& info) { return info.param.name; });

TEST(ImageLocalityTest, NormalizedImageName) {
  EXPECT_EQ(ImageLocality::normalizedImageName("nginx"), "nginx:latest");
  EXPECT_EQ(ImageLocality::normalizedImageName("nginx:1.25"), "nginx:1.25");
  EXPECT_EQ(ImageLocality::normalizedImageName("gcr.io/a/b"), "gcr.io/a/b:latest");
  EXPECT_EQ(ImageLocality::normalizedImageName("localhost:5000/nginx"),
            "localhost:5000/nginx:latest");
  EXPECT_EQ(ImageLocality::normalizedImageName("localhost:5000/nginx:1"), "localhost:5000/nginx:1");
  EXPECT_EQ(ImageLocality::normalizedImageName("repo/nginx@sha256:abcd"), "repo/nginx@sha256:abcd");
}

TEST(ImageLocalityTest, CalculatePriority) {
  EXPECT_EQ(ImageLocality::calculatePriority(0, 1), 0);
  EXPECT_EQ(ImageLocality::calculatePriority(23 * kMB, 1), 0);
  EXPECT_EQ(ImageLocality::calculatePriority(1000 * kMB, 1), 100);
  EXPECT_EQ(ImageLocality::calculatePriority(5000 * kMB, 1), 100);
  EXPECT_EQ(ImageLocality::calculatePriority(500 * kMB, 1), 100 * 477 / 977);
  EXPECT_EQ(ImageLocality::calculatePriority(0, 0), 0);
}

}  // namespace
}  // namespace ksched::plugins
