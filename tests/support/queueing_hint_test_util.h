// Table tests of a plugin's queueing hints: each case is an event the queue sees and the changed
// objects; the hint is asked through the registration that matches the event, as the queue asks
// it for a pod that only this plugin rejected.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ksched/cluster_event.h>
#include <ksched/plugin.h>

#include "tests/support/hint_test_util.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins::testutil {

// HintCase::want.
inline constexpr std::optional<QueueingHint> kWantQueue = QueueingHint::kQueue;
inline constexpr std::optional<QueueingHint> kWantSkip = QueueingHint::kSkip;
// The event matches none of the plugin's registrations.
inline constexpr std::optional<QueueingHint> kNotRegistered = std::nullopt;

struct HintCase {
  std::string name;
  ClusterEvent event;
  api::Pod pod;        // the pod the plugin rejected
  EventObject oldObj;  // empty for an add
  EventObject newObj;  // empty for a delete
  std::optional<QueueingHint> want;
};

inline EventObject obj(const NodeWrapper& node) { return node.ptr(); }
inline EventObject obj(const PodWrapper& pod) { return pod.ptr(); }
inline EventObject obj(const api::Pod& pod) { return std::make_shared<const api::Pod>(pod); }

// Each case's event must match exactly one of `plugin`'s registrations (none for
// kNotRegistered), and that registration's hint (kQueue when it has none) must say `want`.
inline void expectHints(const EnqueueExtensions& plugin, const std::vector<HintCase>& cases) {
  const std::vector<ClusterEventWithHint> regs = plugin.eventsToRegister();
  for (const HintCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<const ClusterEventWithHint*> matched;
    for (const ClusterEventWithHint& r : regs) {
      if (r.event.matches(c.event)) matched.push_back(&r);
    }
    if (!c.want) {
      EXPECT_TRUE(matched.empty()) << c.event.label() << " matches a registration";
      continue;
    }
    if (matched.size() != 1) {
      ADD_FAILURE() << c.event.label() << " matches " << matched.size() << " registrations";
      continue;
    }
    EXPECT_EQ(hintName(hintFor(plugin, c.event, c.pod, c.oldObj, c.newObj)), hintName(c.want));
  }
}

}  // namespace ksched::plugins::testutil
