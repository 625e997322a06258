#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <ksched/api/decode.h>

#include "informer/informer.h"

namespace ksched::informer {
namespace {

struct Thing {
  api::ObjectMeta metadata;
  int size = 0;
};

void from_json(const nlohmann::json& j, Thing& t) {
  api::readField(j, "metadata", t.metadata);
  api::readField(j, "size", t.size);
}

nlohmann::json thing(const std::string& name, const std::string& rv, nlohmann::json size = 1) {
  return {{"metadata",
           {{"name", name}, {"namespace", "ns"}, {"resourceVersion", rv}, {"uid", "u-" + name}}},
          {"size", size}};
}

struct Log {
  std::vector<std::string> events;
  Handlers<Thing> handlers() {
    return {[this](const auto& t) { events.push_back("add " + t->metadata.name); },
            [this](const auto& o, const auto& n) {
              events.push_back("update " + n->metadata.name + " " + o->metadata.resourceVersion +
                               "->" + n->metadata.resourceVersion);
            },
            [this](const auto& t) { events.push_back("delete " + t->metadata.name); }};
  }
};

class InformerStoreTest : public ::testing::Test {
 protected:
  client::Config cfg_{.server = "https://127.0.0.1:1"};
  client::RestClient rest_{cfg_};  // never used: the tests drive the sink directly
  Informer<Thing> inf_{rest_, {"Thing", "/things"}};
  Log log_;
  void SetUp() override { inf_.addHandlers(log_.handlers()); }
};

TEST_F(InformerStoreTest, ReplaceEmitsTheDifference) {
  std::vector<nlohmann::json> first{thing("a", "1"), thing("b", "2"), thing("c", "3")};
  inf_.replace(std::move(first), "3");
  log_.events.clear();
  std::vector<nlohmann::json> second{thing("a", "1"), thing("b", "7"), thing("d", "8")};
  inf_.replace(std::move(second), "8");
  EXPECT_EQ(log_.events, (std::vector<std::string>{"delete c", "add d", "update b 2->7"}));
  EXPECT_EQ(inf_.size(), 3u);
  EXPECT_EQ(inf_.get("ns/b")->metadata.resourceVersion, "7");
  EXPECT_EQ(inf_.get("ns/c"), nullptr);
}

// As client-go's DeltaFIFO: a LIST's objects reach the handlers in the order listed (the
// scheduling queue takes pods of equal priority in the order they arrive).
TEST_F(InformerStoreTest, ListedObjectsArriveInTheListsOrder) {
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back("p" + std::to_string(100 + i));
  std::vector<nlohmann::json> first;
  for (const auto& n : names) first.push_back(thing(n, "1"));
  inf_.beginList();
  inf_.listPage(std::vector<nlohmann::json>(first.begin(), first.begin() + 15));
  inf_.listPage(std::vector<nlohmann::json>(first.begin() + 15, first.end()));
  inf_.endList("1");
  std::vector<std::string> want;
  for (const auto& n : names) want.push_back("add " + n);
  EXPECT_EQ(log_.events, want);

  log_.events.clear();
  want.clear();
  std::vector<nlohmann::json> second;
  for (const auto& n : names) {
    second.push_back(thing(n, "2"));
    want.push_back("update " + n + " 1->2");
  }
  inf_.replace(std::move(second), "2");
  EXPECT_EQ(log_.events, want);
}

TEST_F(InformerStoreTest, WatchEventsUpdateStoreAndHandlers) {
  inf_.apply(client::WatchEventType::kAdded, thing("a", "1"));
  inf_.apply(client::WatchEventType::kModified, thing("a", "2", 5));
  inf_.apply(client::WatchEventType::kDeleted, thing("a", "3"));
  inf_.apply(client::WatchEventType::kDeleted, thing("never-seen", "4"));
  EXPECT_EQ(log_.events, (std::vector<std::string>{"add a", "update a 1->2", "delete a"}));
  EXPECT_EQ(inf_.size(), 0u);
}

// An object that does not decode is read again before it is believed (corrupted on the way,
// it decodes the second time); refused again at the same resourceVersion it is malformed: kept
// out of the store (the version held before goes, so nothing schedules it), counted and
// reported with the field, and the watch moves on.
TEST_F(InformerStoreTest, AnObjectThatDoesNotDecodeIsReadAgainThenKeptOut) {
  std::vector<std::string> refused;
  inf_.onRefused([&](const nlohmann::json&, const api::ObjectMeta& m, const std::string& error) {
    refused.push_back(m.key() + "@" + m.resourceVersion + ": " + error);
  });
  // Corrupted on the way: the watch is told to read it again, and the second read decodes.
  EXPECT_FALSE(inf_.apply(client::WatchEventType::kAdded, thing("a", "1", "not-a-number")));
  EXPECT_TRUE(inf_.apply(client::WatchEventType::kAdded, thing("a", "1")));
  EXPECT_EQ(inf_.rereads(), 1u);
  EXPECT_EQ(inf_.decodeErrors(), 0u);
  // Malformed for good: an update refused twice at resourceVersion 2 takes the object out.
  EXPECT_FALSE(inf_.apply(client::WatchEventType::kModified, thing("a", "2", "not-a-number")));
  EXPECT_TRUE(inf_.apply(client::WatchEventType::kModified, thing("a", "2", "not-a-number")));
  EXPECT_EQ(inf_.get("ns/a"), nullptr);
  EXPECT_EQ(inf_.decodeErrors(), 1u);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].substr(0, 8), "ns/a@2: ");
  EXPECT_NE(refused[0].find("size"), std::string::npos) << refused[0];
  // Its next version that decodes comes back as an add; its deletion then removes it.
  EXPECT_TRUE(inf_.apply(client::WatchEventType::kModified, thing("a", "3")));
  EXPECT_TRUE(inf_.apply(client::WatchEventType::kDeleted, thing("a", "4")));
  EXPECT_EQ(log_.events, (std::vector<std::string>{"add a", "delete a", "add a", "delete a"}));
}

// A LIST page with an object that does not decode is read again; one refused twice is left
// out, the others listed.
TEST_F(InformerStoreTest, AListPageIsReadAgainForAnObjectThatDoesNotDecode) {
  inf_.beginList();
  EXPECT_FALSE(inf_.listPage({thing("good", "2"), thing("bad", "3", nlohmann::json::array())}));
  EXPECT_TRUE(inf_.listPage({thing("good", "2"), thing("bad", "3", nlohmann::json::array())}));
  inf_.endList("3");
  EXPECT_EQ(inf_.decodeErrors(), 1u);
  EXPECT_EQ(inf_.size(), 1u);
  EXPECT_NE(inf_.get("ns/good"), nullptr);
  EXPECT_EQ(log_.events, (std::vector<std::string>{"add good"}));
}

TEST_F(InformerStoreTest, DeleteOfUndecodableFinalStateStillRemovesByKey) {
  inf_.apply(client::WatchEventType::kAdded, thing("a", "1"));
  inf_.apply(client::WatchEventType::kDeleted, thing("a", "2", "garbage"));
  EXPECT_EQ(inf_.size(), 0u);
  EXPECT_EQ(log_.events, (std::vector<std::string>{"add a", "delete a"}));
}

TEST(BuildQueryTest, EncodesAndSkipsEmpty) {
  EXPECT_EQ(
      client::buildQuery({{"labelSelector", "app in (a,b)"}, {"continue", ""}, {"limit", "5"}}),
      "?labelSelector=app%20in%20%28a%2Cb%29&limit=5");
  EXPECT_EQ(client::buildQuery({}), "");
}

}  // namespace
}  // namespace ksched::informer
