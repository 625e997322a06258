#include "app/simulate_capacity.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "sim/load.h"
#include "sim/summary.h"

namespace ksched::app {
namespace {

using ojson = nlohmann::ordered_json;

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int singlePodCapacity(const sim::Cluster& one, const std::string& output,
                      sim::Simulator& simulator) {
  const auto start = std::chrono::steady_clock::now();
  auto c = simulator.capacity(*one.pods[0]);
  const double seconds = secondsSince(start);
  const std::string name = one.pods[0]->metadata.namespace_ + "/" + one.pods[0]->metadata.name;
  if (output == "json") {
    ojson j = {{"kind", "CapacityResult"}, {"pod", name}, {"fits", c.fits}, {"seconds", seconds}};
    if (c.next) {
      j["next"] = {{"reason", c.next->reason},
                   {"diagnosis", c.next->diagnosis.empty()
                                     ? ojson(nullptr)
                                     : ojson::parse(c.next->diagnosis, nullptr, false)}};
    }
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%d more copies of %s fit.\n", c.fits, name.c_str());
    if (c.next) {
      std::printf("The next one does not: %s\n", c.next->reason.c_str());
      auto d = ojson::parse(c.next->diagnosis, nullptr, false);
      if (!d.is_discarded()) std::fputs(sim::diagnosisText(d, "  ").c_str(), stdout);
    } else {
      std::printf("(stopped at the limit)\n");
    }
  }
  return 0;
}

// "gang minCount 8" or "basic".
std::string capacityPolicy(const sim::PodGroupResult& g) {
  return g.gang ? "gang minCount " + std::to_string(g.minCount) : std::string("basic");
}

int groupCapacity(const UnstructuredObject& podGroup, const sim::Cluster& file,
                  const std::string& output, sim::Simulator& simulator) {
  const auto start = std::chrono::steady_clock::now();
  const auto c = simulator.groupCapacity(podGroup, file.pods);
  const double seconds = secondsSince(start);
  const std::string ns =
      podGroup.metadata.namespace_.empty() ? "default" : podGroup.metadata.namespace_;
  const std::string name = ns + "/" + podGroup.metadata.name;
  const std::string policy = c.next ? capacityPolicy(*c.next) : "";
  if (output == "json") {
    ojson j = {{"kind", "CapacityResult"}, {"podGroup", name}, {"pods", file.pods.size()}};
    if (c.next) {
      j["policy"] = c.next->gang ? "gang" : "basic";
      if (c.next->gang) j["minCount"] = c.next->minCount;
    }
    j["fits"] = c.fits;
    j["seconds"] = seconds;
    if (c.next) {
      ojson pods = ojson::array();
      for (size_t i = 0; i < c.nextPods.size(); ++i) {
        const sim::PodResult& p = c.nextPods[i];
        ojson pj = {{"name", p.name}, {"node", p.node ? ojson(*p.node) : ojson(nullptr)}};
        if (!p.node) pj["reason"] = p.reason;
        pods.push_back(std::move(pj));
      }
      ojson next = {{"podGroup", c.next->namespace_ + "/" + c.next->name},
                    {"reason", c.next->message},
                    {"pods", std::move(pods)}};
      if (!c.next->placements.empty()) {
        ojson tried = ojson::array();
        for (const auto& p : c.next->placements) {
          ojson t = {{"name", p.name}, {"nodes", p.nodes}, {"feasible", p.feasible}};
          if (!p.feasible) t["message"] = p.message;
          tried.push_back(std::move(t));
        }
        if (!c.next->topologyKey.empty()) next["topologyKey"] = c.next->topologyKey;
        next["placements"] = std::move(tried);
      }
      j["next"] = std::move(next);
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%d more gangs of %s (%zu pods%s%s) fit.\n", c.fits, name.c_str(), file.pods.size(),
              policy.empty() ? "" : ", ", policy.c_str());
  if (!c.next) {
    std::printf("(stopped at the limit)\n");
    return 0;
  }
  std::printf("The next one (%s/%s) does not: %s\n", c.next->namespace_.c_str(),
              c.next->name.c_str(), c.next->message.c_str());
  // Its pods by reason, in the order first seen.
  std::vector<std::pair<std::string, int>> reasons;
  for (const auto& p : c.nextPods) {
    if (p.node) continue;
    auto it = std::find_if(reasons.begin(), reasons.end(),
                           [&](const auto& r) { return r.first == p.reason; });
    if (it == reasons.end()) {
      reasons.emplace_back(p.reason, 1);
    } else {
      ++it->second;
    }
  }
  for (const auto& [reason, n] : reasons) {
    std::printf("  %d pod%s: %s\n", n, n == 1 ? "" : "s", reason.c_str());
  }
  if (!c.next->placements.empty()) {
    std::printf("Placements tried%s%s%s:\n", c.next->topologyKey.empty() ? "" : " (",
                c.next->topologyKey.c_str(), c.next->topologyKey.empty() ? "" : ")");
    for (const auto& p : c.next->placements) {
      std::printf("  %s (%zu nodes): %s\n", p.name.c_str(), p.nodes,
                  p.feasible ? "feasible" : p.message.c_str());
    }
  }
  return 0;
}

}  // namespace

int printCapacity(const std::string& path, const std::string& output, sim::Simulator& simulator) {
  sim::Cluster file;
  sim::loadFile(path, sim::LoadAs::kWork, file);
  std::vector<UnstructuredPtr> groups;
  for (const auto& [kind, objects] : file.others) {
    if (kind.starts_with("scheduling.k8s.io/") && kind.ends_with("/PodGroup")) {
      groups.insert(groups.end(), objects.begin(), objects.end());
    }
  }
  if (groups.empty()) {
    if (file.pods.size() != 1) {
      throw std::runtime_error(path + ": --capacity needs exactly one pod, found " +
                               std::to_string(file.pods.size()));
    }
    return singlePodCapacity(file, output, simulator);
  }
  if (groups.size() != 1 || file.pods.empty()) {
    throw std::runtime_error(path + ": --capacity needs one PodGroup and its pods, found " +
                             std::to_string(groups.size()) + " PodGroups and " +
                             std::to_string(file.pods.size()) + " pods");
  }
  const UnstructuredObject& pg = *groups.front();
  for (const auto& p : file.pods) {
    const std::string* group = p->spec.podGroupName();
    if (group == nullptr || *group != pg.metadata.name ||
        p->metadata.namespace_ != pg.metadata.namespace_) {
      throw std::runtime_error(path + ": --capacity: pod " + p->metadata.namespace_ + "/" +
                               p->metadata.name + " is not of PodGroup " + pg.metadata.namespace_ +
                               "/" + pg.metadata.name + " (spec.schedulingGroup.podGroupName)");
    }
  }
  if (!simulator.options().features.enabled(features::Feature::kGenericWorkload)) {
    throw std::runtime_error(path +
                             ": --capacity of a PodGroup needs --feature-gates "
                             "GenericWorkload=true");
  }
  return groupCapacity(pg, file, output, simulator);
}

}  // namespace ksched::app
