// Test plugins and fixtures shared by the framework's and the scheduling algorithm's unit tests
// (tests/unit/framework/, tests/unit/scheduler/): a QueueSort, a Bind, a Filter+Score plugin
// that reads its args, a Permit+PostFilter plugin that waits, a PreBind plugin with a chosen
// preBindPreFlight, their registry, a profile builder,
// services without a cluster, and nodes.
#pragma once

#include <chrono>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <ksched/registry.h>

#include "cache/snapshot.h"
#include "config/profile.h"
#include "framework/framework.h"
#include "framework/parallelizer.h"

namespace ksched::frameworktest {

using framework::Framework;
using framework::FrameworkError;

class NullRecorder final : public EventRecorder {
 public:
  void event(const api::Pod&, std::string_view, std::string_view, std::string_view,
             std::string) override {}
};

// A sort plugin, a binder, and configurable filter/score plugins.
class Sort final : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "Sort"; }
  bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
    return a.timestamp < b.timestamp;
  }
};

// Binds, or fails with args.fail (the message) and args.httpCode.
class Binder final : public BindPlugin {
 public:
  explicit Binder(nlohmann::json args) : args_(std::move(args)) {}
  std::string_view name() const override { return "Binder"; }
  Status bind(CycleState&, const api::Pod&, const std::string&) override {
    if (!args_.is_object() || !args_.contains("fail")) return {};
    return Status::error(args_["fail"].get<std::string>()).withHttpCode(args_.value("httpCode", 0));
  }

 private:
  nlohmann::json args_;
};

// Rejects nodes whose name is listed in args.reject (reason args.reason), scores nodes by
// args.scores[name].
class Fake final : public FilterPlugin, public ScorePlugin, public EnqueueExtensions {
 public:
  Fake(std::string name, nlohmann::json args) : name_(std::move(name)), args_(std::move(args)) {}
  std::string_view name() const override { return name_; }
  Status filter(const CycleState&, const api::Pod&, const NodeInfo& n) const override {
    if (args_.contains("reject")) {
      for (const auto& r : args_["reject"]) {
        if (r == n.name()) {
          return Status(args_.value("unresolvable", false) ? Code::kUnschedulableAndUnresolvable
                                                           : Code::kUnschedulable,
                        {args_.value("reason", std::string("rejected"))});
        }
      }
    }
    return {};
  }
  Status score(const CycleState&, const api::Pod&, const NodeInfo& n, int64_t& s) const override {
    s = args_.contains("scores") ? args_["scores"].value(n.name(), 0) : 0;
    return {};
  }
  std::vector<ClusterEventWithHint> eventsToRegister() const override {
    return {ClusterEvent{EventResource::kNode, kAdd, {}}};
  }

 private:
  std::string name_;
  nlohmann::json args_;
};

// Permit: Wait with args.waitMs (0: allow); PostFilter: Unschedulable with args.postFilter
// reasons (absent: no reasons).
class Waiter final : public PermitPlugin, public PostFilterPlugin {
 public:
  Waiter(std::string name, nlohmann::json args) : name_(std::move(name)), args_(std::move(args)) {}
  std::string_view name() const override { return name_; }
  Status permit(CycleState&, const api::Pod&, const std::string&,
                std::chrono::milliseconds& timeout) override {
    const int ms = args_.value("waitMs", 0);
    if (ms == 0) return {};
    timeout = std::chrono::milliseconds(ms);
    return Status::wait();
  }
  std::pair<PostFilterResult, Status> postFilter(CycleState&, const api::Pod&,
                                                 const NodeToStatus&) override {
    std::vector<std::string> reasons;
    for (const auto& r : args_.value("postFilter", nlohmann::json::array())) reasons.push_back(r);
    return {{}, Status(Code::kUnschedulable, reasons)};
  }

 private:
  std::string name_;
  nlohmann::json args_;
};

// PreBind: preBindPreFlight answers args.preFlight ("Success", "Skip", "Error" with args.message,
// "Unschedulable"); absent: the SDK's default. preBind does nothing.
class PreBinder final : public PreBindPlugin {
 public:
  PreBinder(std::string name, nlohmann::json args)
      : name_(std::move(name)), args_(std::move(args)) {}
  std::string_view name() const override { return name_; }
  Status preBindPreFlight(const CycleState& state, const api::Pod& pod,
                          const std::string& node) override {
    const std::string answer = args_.is_object() ? args_.value("preFlight", "") : "";
    if (answer.empty()) return PreBindPlugin::preBindPreFlight(state, pod, node);
    if (answer == "Success") return {};
    if (answer == "Skip") return Status::skip();
    if (answer == "Error") return Status::error(args_.value("message", ""));
    return Status::unschedulable(answer);
  }
  Status preBind(CycleState&, const api::Pod&, const std::string&) override { return {}; }

 private:
  std::string name_;
  nlohmann::json args_;
};

// Score and Reserve (what it reserves is state its score reads, as the load-aware plugins keep).
class Keeper final : public ScorePlugin, public ReservePlugin {
 public:
  std::string_view name() const override { return "Keeper"; }
  Status score(const CycleState&, const api::Pod&, const NodeInfo&, int64_t& s) const override {
    s = 0;
    return {};
  }
  Status reserve(CycleState&, const api::Pod&, const std::string&) override { return {}; }
  void unreserve(CycleState&, const api::Pod&, const std::string&) override {}
};

// Scores every node 10; NormalizeScore gives the nodes named in args.prefer 100 and the others
// 0 (only with names, which it says it reads unless args.readsNames is false) and records the
// names it was handed.
class Namer final : public ScorePlugin {
 public:
  explicit Namer(nlohmann::json args) : args_(std::move(args)) {}
  std::string_view name() const override { return "Namer"; }
  Status score(const CycleState&, const api::Pod&, const NodeInfo&, int64_t& s) const override {
    s = 10;
    return {};
  }
  bool hasNormalizeScore() const override { return true; }
  bool normalizeScoreReadsNames(const CycleState&) const override {
    return args_.value("readsNames", true);
  }
  Status normalizeScore(const CycleState&, const api::Pod&,
                        std::vector<NodeScore>& scores) const override {
    std::lock_guard lock(mu_);
    seen_.clear();
    for (NodeScore& ns : scores) {
      seen_.push_back(ns.name);
      bool preferred = false;
      for (const auto& p : args_.value("prefer", nlohmann::json::array()))
        preferred |= p == ns.name;
      ns.score = preferred ? 100 : 0;
    }
    return {};
  }
  std::vector<std::string> seen() const {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  nlohmann::json args_;
  mutable std::mutex mu_;
  mutable std::vector<std::string> seen_;
};

// The args as written, for test plugins that read their JSON.
inline constexpr auto kRawArgs = [](const nlohmann::json& args) { return args; };

inline Registry testRegistry() {
  Registry r;
  for (const char* n : {"W1", "W2"}) {
    r.add(n, kRawArgs,
          [n](const nlohmann::json& args, Handle&) { return std::make_unique<Waiter>(n, args); });
  }
  for (const char* n : {"P1", "P2"}) {
    r.add(n, kRawArgs, [n](const nlohmann::json& args, Handle&) {
      return std::make_unique<PreBinder>(n, args);
    });
  }
  r.add("Sort", [](Handle&) { return std::make_unique<Sort>(); });
  r.add("Keeper", [](Handle&) { return std::make_unique<Keeper>(); });
  r.add("Namer", kRawArgs,
        [](const nlohmann::json& args, Handle&) { return std::make_unique<Namer>(args); });
  r.add("Binder", kRawArgs,
        [](const nlohmann::json& args, Handle&) { return std::make_unique<Binder>(args); });
  for (const char* n : {"A", "B", "C"}) {
    r.add(
        n,
        [](const nlohmann::json& args) {
          if (args.is_object() && args.contains("bad"))
            throw PluginArgsError("bad: must not be set");
          return args;
        },
        [n](const nlohmann::json& args, Handle&) { return std::make_unique<Fake>(n, args); });
  }
  return r;
}

inline config::Profile profile(std::vector<config::PluginRef> multiPoint) {
  config::Profile p;
  p.plugins.multiPoint.enabled = std::move(multiPoint);
  return p;
}

struct Env {
  NullRecorder rec;
  framework::ThreadPoolParallelizer par{4};
  framework::Services services() {
    framework::Services s;
    s.events = &rec;
    s.parallelizer = &par;
    return s;
  }
};

inline std::string wiringError(const config::Profile& p) {
  Env env;
  try {
    Framework f(p, testRegistry(), env.services());
  } catch (const FrameworkError& e) {
    return e.what();
  }
  return "";
}

inline api::Node node(const std::string& name) {
  api::Node n;
  n.metadata.name = name;
  n.metadata.uid = "uid-" + name;
  n.status.allocatable["cpu"] = api::Quantity::parse("4");
  n.status.allocatable["pods"] = api::Quantity::parse("110");
  return n;
}

inline cache::Snapshot snapshotOf(std::initializer_list<const char*> names) {
  std::vector<NodePtr> nodes;
  for (const char* n : names) nodes.push_back(std::make_shared<api::Node>(node(n)));
  return cache::Snapshot::fromForTest({}, nodes);
}

}  // namespace ksched::frameworktest
