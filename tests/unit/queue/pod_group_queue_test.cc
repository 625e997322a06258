// The queue's part in the pod-group cycle (GenericWorkload): a new member lets its siblings held
// at PreEnqueue in once the group is complete, and popping one member takes the group's other
// queued pods with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "queue/scheduling_queue.h"

namespace ksched::queue {
namespace {

using std::chrono::milliseconds;
using Kind = SchedulingQueue::QueueKind;
using Keys = std::vector<std::string>;

constexpr char kGang[] = "GangScheduling";
constexpr char kFit[] = "NodeResourcesFit";
constexpr char kProfile[] = "default-scheduler";

PodPtr member(const std::string& name, const std::string& group) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "ns";
  p->metadata.uid = "uid-" + name;
  p->spec.schedulerName = kProfile;
  if (!group.empty()) p->spec.schedulingGroup = api::PodSchedulingGroup{group};
  return p;
}

// A stand-in for GangScheduling: a pod of group "g" is held until `minCount` pods of "g" were
// added; it counts the PreEnqueue runs.
struct Gang {
  size_t minCount = 3;
  size_t added = 0;
  int runs = 0;
  Status preEnqueue(const api::Pod& pod) {
    ++runs;
    if (pod.spec.podGroupName() == nullptr || added >= minCount) return {};
    return Status::unresolvable(
               "waiting for minCount pods from a gang to appear in scheduling "
               "queue")
        .withPlugin(kGang);
  }
};

std::unique_ptr<SchedulingQueue> queueFor(Gang& gang) {
  // Upstream's hint: any pod added to the same group.
  auto sameGroup = [](const api::Pod& pod, const EventObject&, const EventObject& added) {
    const api::Pod* a = as<api::Pod>(added);
    return a != nullptr && a->spec.podGroupName() != nullptr &&
                   pod.spec.podGroupName() != nullptr &&
                   *a->spec.podGroupName() == *pod.spec.podGroupName()
               ? QueueingHint::kQueue
               : QueueingHint::kSkip;
  };
  QueueingHintMap hints{
      {kProfile,
       {{kGang, {ClusterEventWithHint(EventResource::kUnscheduledPod, kAdd, sameGroup)}},
        {kFit, {ClusterEventWithHint(events::kNodeAdd)}}}}};
  Options o;
  // Every pod a later timestamp than the one before: pop order is add order.
  o.clock = [t = std::make_shared<int64_t>(0)] {
    return std::chrono::steady_clock::time_point{} + std::chrono::hours(1) + milliseconds(++*t);
  };
  return std::make_unique<SchedulingQueue>(
      std::move(o), nullptr, [&gang](const api::Pod& p) { return gang.preEnqueue(p); },
      std::move(hints));
}

void add(SchedulingQueue& q, Gang& gang, const PodPtr& pod) {
  if (pod->spec.podGroupName() != nullptr) {
    ++gang.added;  // the plugin's pod handler runs before the queue's add
    q.addGroupMember(pod, {*pod->spec.podGroupName()});
  } else {
    q.add(pod);
  }
}

TEST(PodGroupQueueTest, TheMemberThatCompletesTheGangLetsItsSiblingsIn) {
  Gang gang;
  auto q = queueFor(gang);
  add(*q, gang, member("a", "g"));
  add(*q, gang, member("b", "g"));
  EXPECT_EQ(q->pendingPodKeysForTest(Kind::kGated), (Keys{"ns/a", "ns/b"}));
  EXPECT_TRUE(q->pendingPodKeysForTest(Kind::kActive).empty());
  // b was held as a was: a was not asked again.
  EXPECT_EQ(gang.runs, 2);

  add(*q, gang, member("c", "g"));
  Keys active = q->pendingPodKeysForTest(Kind::kActive);
  std::ranges::sort(active);
  EXPECT_EQ(active, (Keys{"ns/a", "ns/b", "ns/c"}));
  EXPECT_TRUE(q->pendingPodKeysForTest(Kind::kGated).empty());
}

TEST(PodGroupQueueTest, PoppingOneMemberTakesTheGroupsOtherQueuedPodsAlong) {
  Gang gang;
  gang.minCount = 1;
  auto q = queueFor(gang);
  add(*q, gang, member("a", "g"));
  add(*q, gang, member("b", "g"));
  add(*q, gang, member("other", "h"));
  add(*q, gang, member("solo", ""));
  add(*q, gang, member("c", "g"));

  auto first = q->popFor({}, milliseconds(0));
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(*first->pod().spec.podGroupName(), "g");
  const int64_t cycle = q->schedulingCycle();
  auto rest =
      q->popGroupMembers(first->pod().metadata.namespace_, {*first->pod().spec.podGroupName()});
  std::vector<std::string> names;
  for (const auto& r : rest) {
    names.push_back(r->pod().metadata.name);
    EXPECT_EQ(r->attempts, 1);
  }
  std::ranges::sort(names);
  std::vector<std::string> want = {"a", "b", "c"};
  std::erase(want, first->pod().metadata.name);
  EXPECT_EQ(names, want);
  // Each member gets a cycle number of its own.
  EXPECT_EQ(q->schedulingCycle(), cycle + 2);
  Keys left = q->pendingPodKeysForTest(Kind::kActive);
  std::ranges::sort(left);
  EXPECT_EQ(left, (Keys{"ns/other", "ns/solo"}));

  // Handed back, they can be taken together again, wherever they wait.
  for (auto& r : rest) {
    r->unschedulablePlugins = {kFit};
    ASSERT_TRUE(q->addUnschedulableIfNotPresent(std::move(r), cycle));
  }
  first->unschedulablePlugins = {kFit};
  ASSERT_TRUE(q->addUnschedulableIfNotPresent(std::move(first), cycle));
  auto again = q->popGroupMembers(member("a", "g")->metadata.namespace_, {"g"});
  EXPECT_EQ(again.size(), 3u);
}

TEST(PodGroupQueueTest, MembersHeldAtPreEnqueueAreNotTakenAlong) {
  Gang gang;
  gang.minCount = 5;
  auto q = queueFor(gang);
  add(*q, gang, member("a", "g"));
  add(*q, gang, member("b", "g"));
  EXPECT_TRUE(q->popGroupMembers(member("x", "g")->metadata.namespace_, {"g"}).empty());
  EXPECT_EQ(q->pendingPodKeysForTest(Kind::kGated), (Keys{"ns/a", "ns/b"}));
}

}  // namespace
}  // namespace ksched::queue
