// The runners of the extension points (upstream frameworkImpl.Run*Plugins): each calls its
// plugins in order, times the point and, in sampled cycles, each plugin (instrumentation.h), and
// words errors as upstream does.
#include <algorithm>
#include <set>
#include <utility>

#include <ksched/api/pod_resources.h>

#include "framework/framework.h"
#include "framework/plugin_status.h"

namespace ksched::framework {
namespace {

constexpr std::chrono::minutes kMaxPermitTimeout{15};

}  // namespace

Status Framework::runPreEnqueuePlugins(const api::Pod& pod) {
  for (auto* p : plugins<ExtensionPoint::kPreEnqueue>()) {
    Status s = p->preEnqueue(pod);
    if (!s.ok()) return withPlugin(std::move(s), p->name());
  }
  return {};
}

Status Framework::runPreFilterPlugins(CycleState& state, const api::Pod& pod,
                                      PreFilterResult& result,
                                      std::set<std::string, std::less<>>* pluginsWithNodes) {
  std::set<std::string, std::less<>> restricting;
  if (pluginsWithNodes == nullptr) pluginsWithNodes = &restricting;
  // A pod whose in-place resize waits (KEP 5836): only the filters that take such pods run.
  const bool resizeDeferred =
      !pod.spec.nodeName.empty() &&
      services_.features.enabled(
          features::Feature::kInPlacePodVerticalScalingSchedulerPreemption) &&
      api::isPodResizeDeferred(pod);
  if (resizeDeferred) {
    for (auto* p : plugins<ExtensionPoint::kFilter>()) {
      if (!p->filtersResizeDeferredPods()) state.skipFilterPlugins.emplace(p->name());
    }
  }
  return timed(ExtensionPoint::kPreFilter, [&]() -> Status {
    for (auto* p : plugins<ExtensionPoint::kPreFilter>()) {
      if (resizeDeferred && !p->filtersResizeDeferredPods()) {
        state.skipFilterPlugins.emplace(p->name());
        continue;
      }
      PreFilterResult r;
      Status s = timedPlugin(p, ExtensionPoint::kPreFilter,
                             [&] { return p->preFilter(state, pod, snapshot(), r); });
      if (s.isSkip()) {
        state.skipFilterPlugins.emplace(p->name());
        continue;
      }
      if (!s.ok()) {
        if (s.isError()) {
          return Status::error("running PreFilter plugin \"" + std::string(p->name()) +
                               "\": " + s.message())
              .withPlugin(p->name());
        }
        return withPlugin(std::move(s), p->name());
      }
      if (r.nodeNames) {
        pluginsWithNodes->emplace(p->name());
        if (!result.nodeNames) {
          result.nodeNames = std::move(r.nodeNames);
        } else {
          std::set<std::string, std::less<>> both;
          for (const auto& n : *result.nodeNames) {
            if (r.nodeNames->contains(n)) both.insert(n);
          }
          result.nodeNames = std::move(both);
        }
        if (result.nodeNames->empty()) {
          std::string msg;
          if (pluginsWithNodes->size() == 1) {
            msg = "node(s) didn't satisfy plugin " + *pluginsWithNodes->begin();
          } else {
            msg = "node(s) didn't satisfy plugin(s) [";
            for (const auto& name : *pluginsWithNodes) {
              msg += (msg.back() == '[' ? "" : " ") + name;
            }
            msg += "] simultaneously";
          }
          return Status::unresolvable(msg).withPlugin(p->name());
        }
      }
    }
    state.skippedFilters_.reset();
    if (plugins<ExtensionPoint::kFilter>().size() <= 64) {
      uint64_t mask = 0;
      for (size_t i = 0; i < plugins<ExtensionPoint::kFilter>().size(); ++i) {
        if (state.skipFilterPlugins.contains(plugins<ExtensionPoint::kFilter>()[i]->name()))
          mask |= uint64_t{1} << i;
      }
      state.skippedFilters_ = mask;
    }
    return {};
  });
}

Status Framework::runPreFilterExtensionAddPod(CycleState& state, const api::Pod& pod,
                                              const PodInfo& toAdd, const NodeInfo& node) const {
  for (auto* p : plugins<ExtensionPoint::kPreFilter>()) {
    if (const auto* ext = p->preFilterExtensions()) {
      if (state.skipFilterPlugins.contains(p->name())) continue;
      Status s = ext->addPod(state, pod, toAdd, node);
      if (!s.ok()) return withPlugin(std::move(s), p->name());
    }
  }
  return {};
}

Status Framework::runPreFilterExtensionRemovePod(CycleState& state, const api::Pod& pod,
                                                 const PodInfo& toRemove,
                                                 const NodeInfo& node) const {
  for (auto* p : plugins<ExtensionPoint::kPreFilter>()) {
    if (const auto* ext = p->preFilterExtensions()) {
      if (state.skipFilterPlugins.contains(p->name())) continue;
      Status s = ext->removePod(state, pod, toRemove, node);
      if (!s.ok()) return withPlugin(std::move(s), p->name());
    }
  }
  return {};
}

Status Framework::runFilterPlugins(const CycleState& state, const api::Pod& pod,
                                   const NodeInfo& node, std::vector<Status>* all) const {
  std::optional<Status> first;
  const std::optional<uint64_t> skipped =
      state.skipFilterPlugins.empty() ? std::optional<uint64_t>(0) : state.skippedFilters_;
  for (size_t i = 0; i < plugins<ExtensionPoint::kFilter>().size(); ++i) {
    auto* p = plugins<ExtensionPoint::kFilter>()[i];
    if (skipped ? (i < 64 && (*skipped >> i & 1U) != 0)
                : state.skipFilterPlugins.contains(p->name())) {
      continue;
    }
    Status s = timedPlugin(p, ExtensionPoint::kFilter, [&] { return p->filter(state, pod, node); });
    if (!s.ok()) {
      if (s.isError()) {
        return Status::error("running \"" + std::string(p->name()) +
                             "\" filter plugin: " + s.message())
            .withPlugin(p->name());
      }
      s = withPlugin(std::move(s), p->name());
      if (all == nullptr) return s;
      all->push_back(s);
      if (!first) first = std::move(s);
    }
  }
  return first ? std::move(*first) : Status{};
}

Status Framework::runFilterPluginsMasked(const CycleState& state, const api::Pod& pod,
                                         const NodeInfo& node, uint64_t run) const {
  const auto& filters = plugins<ExtensionPoint::kFilter>();
  for (; run != 0; run &= run - 1) {
    const auto i = static_cast<size_t>(std::countr_zero(run));
    if (i >= filters.size()) break;
    auto* p = filters[i];
    Status s = timedPlugin(p, ExtensionPoint::kFilter, [&] { return p->filter(state, pod, node); });
    if (s.ok()) continue;
    if (s.isError()) {
      return Status::error("running \"" + std::string(p->name()) +
                           "\" filter plugin: " + s.message())
          .withPlugin(p->name());
    }
    return withPlugin(std::move(s), p->name());
  }
  return {};
}

uint64_t Framework::skippedFilterMask(const CycleState& state) const {
  if (state.skipFilterPlugins.empty()) return 0;
  if (state.skippedFilters_) return *state.skippedFilters_;
  uint64_t mask = 0;
  const auto& filters = plugins<ExtensionPoint::kFilter>();
  for (size_t i = 0; i < filters.size() && i < 64; ++i) {
    if (state.skipFilterPlugins.contains(filters[i]->name())) mask |= uint64_t{1} << i;
  }
  return mask;
}

std::vector<PodInfoPtr> Framework::nominatedPodsThatCount(const api::Pod& pod,
                                                          const NodeInfo& node) const {
  std::vector<PodInfoPtr> out;
  if (!services_.nominatedPodsForNode) return out;
  const int32_t prio = api::podPriority(pod);
  for (auto& pi : services_.nominatedPodsForNode(node.name())) {
    if (pi->pod->metadata.uid != pod.metadata.uid && api::podPriority(*pi->pod) >= prio) {
      out.push_back(std::move(pi));
    }
  }
  return out;
}

bool Framework::hasNominatedPodsFor(const api::Pod& pod, const NodeInfo& node) const {
  return !nominatedPodsThatCount(pod, node).empty();
}

Status Framework::runFilterPluginsWithNominatedPods(const CycleState& state, const api::Pod& pod,
                                                    const NodeInfo& node) const {
  return filterWithNominatedPods(state, pod, node, nullptr);
}

Status Framework::runAllFilterPluginsWithNominatedPods(const CycleState& state, const api::Pod& pod,
                                                       const NodeInfo& node,
                                                       std::vector<Status>& all) const {
  return filterWithNominatedPods(state, pod, node, &all);
}

Status Framework::filterWithNominatedPods(const CycleState& state, const api::Pod& pod,
                                          const NodeInfo& node, std::vector<Status>* all) const {
  const std::vector<PodInfoPtr> nominated = nominatedPodsThatCount(pod, node);
  if (nominated.empty()) return runFilterPlugins(state, pod, node, all);
  // First pass: as if the nominated pods were already running there.
  CycleState withNominated = state.clone();
  auto nodeWith = node.clone();
  for (const auto& pi : nominated) {
    nodeWith->addPod(pi);
    Status s = runPreFilterExtensionAddPod(withNominated, pod, *pi, *nodeWith);
    if (!s.ok()) return s;
  }
  Status s = runFilterPlugins(withNominated, pod, *nodeWith, all);
  if (!s.ok()) return s;
  // Second pass: without them (they may never arrive; pod affinity must not rely on them).
  return runFilterPlugins(state, pod, node, all);
}

Status Framework::dryRunPostFilterPlugins(const CycleState& state, const api::Pod& pod,
                                          const NodeToStatus& statuses, std::string& plugin,
                                          PostFilterPlugin::Proposal& proposal) {
  Status last = Status::skip();
  for (auto* p : plugins<ExtensionPoint::kPostFilter>()) {
    PostFilterPlugin::Proposal pr;
    Status s = p->dryRunPostFilter(state, pod, statuses, pr);
    if (s.isSkip()) continue;
    plugin = std::string(p->name());
    if (s.ok()) {
      proposal = std::move(pr);
      return s;
    }
    if (!s.isRejected()) return withPlugin(std::move(s), p->name());
    last = withPlugin(std::move(s), p->name());
  }
  return last;
}

std::pair<PostFilterResult, Status> Framework::runPostFilterPlugins(CycleState& state,
                                                                    const api::Pod& pod,
                                                                    const NodeToStatus& statuses) {
  std::pair<PostFilterResult, Status> out;
  (void)timed(ExtensionPoint::kPostFilter, [&]() -> Status {
    out = [&]() -> std::pair<PostFilterResult, Status> {
      // As upstream: the first success wins; an unresolvable rejection ends the run; otherwise
      // the rejections' reasons add up and the first rejecting plugin is named.
      PostFilterResult lastResult;  // the last rejection's result that asks for a change
      std::vector<std::string> reasons;
      std::string rejector;
      for (auto* p : plugins<ExtensionPoint::kPostFilter>()) {
        auto [result, s] = p->postFilter(state, pod, statuses);
        if (s.ok()) return {std::move(result), std::move(s)};
        if (s.code() == Code::kUnschedulableAndUnresolvable) {
          return {std::move(result), withPlugin(std::move(s), p->name())};
        }
        if (!s.isRejected()) return {PostFilterResult{}, withPlugin(std::move(s), p->name())};
        if (result.nominatedNodeName) lastResult = std::move(result);
        reasons.insert(reasons.end(), s.reasons().begin(), s.reasons().end());
        if (rejector.empty()) rejector = p->name();
      }
      if (rejector.empty()) {
        return {PostFilterResult{},
                Status::unschedulable("no PostFilter plugin made the pod schedulable")};
      }
      Status last(Code::kUnschedulable, std::move(reasons));
      last.withPlugin(rejector);
      return {std::move(lastResult), std::move(last)};
    }();
    return out.second;
  });
  return out;
}

Status Framework::runReservePluginsReserve(CycleState& state, const api::Pod& pod,
                                           const std::string& node) {
  return timed(ExtensionPoint::kReserve, [&]() -> Status {
    for (auto* p : plugins<ExtensionPoint::kReserve>()) {
      Status s =
          timedPlugin(p, ExtensionPoint::kReserve, [&] { return p->reserve(state, pod, node); });
      if (!s.ok()) {
        return Status::error("running Reserve plugin \"" + std::string(p->name()) +
                             "\": " + s.message())
            .withPlugin(p->name());
      }
    }
    return {};
  });
}

void Framework::runReservePluginsUnreserve(CycleState& state, const api::Pod& pod,
                                           const std::string& node) {
  (void)timed(TimedPoint::unreserve(), [&]() -> Status {
    for (auto it = plugins<ExtensionPoint::kReserve>().rbegin();
         it != plugins<ExtensionPoint::kReserve>().rend(); ++it)
      (*it)->unreserve(state, pod, node);
    return {};
  });
}

Status Framework::runPermitPlugins(CycleState& state, const api::Pod& pod,
                                   const std::string& node) {
  return timed(ExtensionPoint::kPermit, [&]() -> Status {
    std::map<std::string, std::chrono::milliseconds> pending;
    for (auto* p : plugins<ExtensionPoint::kPermit>()) {
      std::chrono::milliseconds timeout{0};
      Status s = timedPlugin(p, ExtensionPoint::kPermit,
                             [&] { return p->permit(state, pod, node, timeout); });
      if (s.ok()) continue;
      if (s.isWait()) {
        pending[std::string(p->name())] =
            std::min<std::chrono::milliseconds>(timeout, kMaxPermitTimeout);
        continue;
      }
      if (s.isRejected()) return withPlugin(std::move(s), p->name());
      return Status::error("running Permit plugin \"" + std::string(p->name()) +
                           "\": " + s.message())
          .withPlugin(p->name());
    }
    if (pending.empty()) return {};
    waiting_.add(pod, std::move(pending));
    return Status::wait();
  });
}

Status Framework::runPreBindPreFlights(const CycleState& state, const api::Pod& pod,
                                       const std::string& node) {
  Status result = Status::skip();
  for (auto* p : plugins<ExtensionPoint::kPreBind>()) {
    Status s = p->preBindPreFlight(state, pod, node);
    if (s.ok()) {
      result = Status::success();
    } else if (s.isError()) {
      return Status::error("running PreBindPreFlight \"" + std::string(p->name()) +
                           "\": " + s.message())
          .withPlugin(p->name());
    } else if (!s.isSkip()) {
      return Status::error("PreBindPreFlight " + std::string(p->name()) + " returned \"" +
                           std::string(codeName(s.code())) +
                           "\", which is unsupported. It is supposed to return Success, Skip, "
                           "or Error status")
          .withPlugin(p->name());
    }
  }
  return result;
}

Status Framework::runPreBindPlugins(CycleState& state, const api::Pod& pod, const std::string& node,
                                    size_t* from, std::optional<PreBindPlugin::Resume> resume) {
  return timed(ExtensionPoint::kPreBind, [&]() -> Status {
    const auto& all = plugins<ExtensionPoint::kPreBind>();
    for (size_t i = from != nullptr ? *from : 0; i < all.size(); ++i) {
      PreBindPlugin* p = all[i];
      Status s =
          resume ? p->preBindResume(state, pod, node, *resume) : p->preBind(state, pod, node);
      resume.reset();  // the plugins after the one that waited run as usual
      if (s.isWait()) {
        if (from == nullptr) {
          return Status::error("running PreBind plugin \"" + std::string(p->name()) +
                               "\": it waits, and nothing here can resume it")
              .withPlugin(p->name());
        }
        *from = i;
        return withPlugin(std::move(s), p->name());
      }
      if (!s.ok()) {
        if (s.isRejected()) return withPlugin(std::move(s), p->name());
        return Status::error("running PreBind plugin \"" + std::string(p->name()) +
                             "\": " + s.message())
            .withPlugin(p->name());
      }
    }
    return {};
  });
}

PreBindPlugin::Wait Framework::preBindWait(size_t index, const CycleState& state,
                                           const api::Pod& pod) const {
  const auto& all = plugins<ExtensionPoint::kPreBind>();
  return index < all.size() ? all[index]->preBindWait(state, pod) : PreBindPlugin::Wait{};
}

Status Framework::runBindPlugins(CycleState& state, const api::Pod& pod, const std::string& node) {
  return timed(ExtensionPoint::kBind, [&]() -> Status {
    Status last = Status::skip();
    for (auto* p : plugins<ExtensionPoint::kBind>()) {
      last = p->bind(state, pod, node);
      if (last.isSkip()) continue;
      if (!last.ok()) {
        // The HTTP code goes with it: the scheduler tells a binding the apiserver refused (409
        // bound already, 404 gone) from one worth retrying.
        return Status::error("running Bind plugin \"" + std::string(p->name()) +
                             "\": " + last.message())
            .withPlugin(p->name())
            .withHttpCode(last.httpCode());
      }
      return last;
    }
    return last;
  });
}

void Framework::runPostBindPlugins(CycleState& state, const api::Pod& pod,
                                   const std::string& node) {
  (void)timed(ExtensionPoint::kPostBind, [&]() -> Status {
    for (auto* p : plugins<ExtensionPoint::kPostBind>()) p->postBind(state, pod, node);
    return {};
  });
}

}  // namespace ksched::framework
