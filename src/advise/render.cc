#include "advise/render.h"

#include <algorithm>
#include <cstdio>

namespace ksched::advise {
namespace {

using ojson = nlohmann::ordered_json;

ojson spreads(const std::map<std::string, Figures::Spread>& m) {
  ojson out = ojson::object();
  for (const auto& [r, s] : m) {
    out[r] = {{"mean", s.mean}, {"min", s.min}, {"max", s.max}, {"stddev", s.stddev}};
  }
  return out;
}

ojson figures(const Figures& f) {
  return {{"nodes", f.nodes},
          {"nodesUsed", f.nodesUsed},
          {"requestedPercent", f.requested},
          {"requestedPercentOfNodesUsed", f.requestedUsed},
          {"requestedPercentPerNode", spreads(f.perNode)}};
}

std::string fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// Columns padded to their widest cell, two spaces apart.
std::string columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    width.resize(std::max(width.size(), r.size()));
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

nlohmann::ordered_json planDocument(const Plan& plan) {
  ojson moves = ojson::array();
  for (const auto& m : plan.moves) {
    moves.push_back({{"pod", m.namespace_ + "/" + m.name},
                     {"from", m.from},
                     {"to", m.to},
                     {"tiedWith", m.tiedWith},
                     {"why", m.why}});
  }
  ojson notFreed = ojson::array();
  for (const auto& n : plan.notFreed) notFreed.push_back({{"node", n.node}, {"reason", n.reason}});
  ojson kept = ojson::array();
  for (const auto& k : plan.kept) {
    kept.push_back({{"pod", k.pod}, {"node", k.node}, {"reason", k.reason}});
  }
  ojson doc = {{"kind", "AdvicePlan"}, {"goal", plan.goal}};
  if (!plan.forPod.empty()) {
    doc["forPod"] = plan.forPod;
    doc["forPodNode"] = plan.forPodNode.empty() ? ojson(nullptr) : ojson(plan.forPodNode);
    if (!plan.forPodReason.empty()) doc["forPodReason"] = plan.forPodReason;
    if (!plan.uncordonAfter.empty()) doc["makeRoomOn"] = plan.uncordonAfter;
    if (!plan.forPodMembers.empty()) {
      ojson members = ojson::array();
      for (const auto& [pod, node] : plan.forPodMembers) {
        members.push_back({{"pod", pod}, {"node", node}});
      }
      doc["forPodGroupMembers"] = std::move(members);
    }
  }
  if (plan.balance) {
    doc["balance"] = {{"measure", plan.balance->measure},
                      {"deviation", plan.balance->deviation},
                      {"nodesOverBefore", plan.balance->overBefore},
                      {"nodesOverAfter", plan.balance->overAfter}};
    if (plan.balance->measure == "load") {
      doc["balance"]["usedPercentPerNodeBefore"] = spreads(plan.balance->usedBefore);
      doc["balance"]["usedPercentPerNodeAfter"] = spreads(plan.balance->usedAfter);
    }
  }
  if (plan.goal == "--spread") {
    ojson skews = ojson::array();
    for (const auto& k : plan.skews) {
      ojson one = {{"pods", k.group},      {"topologyKey", k.topologyKey},
                   {"maxSkew", k.maxSkew}, {"whenUnsatisfiable", k.whenUnsatisfiable},
                   {"before", k.before},   {"after", k.after}};
      if (k.defaulted) one["default"] = true;
      if (!k.note.empty()) one["note"] = k.note;
      skews.push_back(std::move(one));
    }
    doc["skews"] = std::move(skews);
  }
  ojson rest = {{"cordon", plan.cordon},
                {"moves", std::move(moves)},
                {"notFreed", std::move(notFreed)},
                {"kept", std::move(kept)},
                {"alreadyFree", plan.alreadyFree},
                {"before", figures(plan.before)},
                {"after", figures(plan.after)},
                {"lowerBoundNodes", plan.lowerBoundNodes},
                {"pendingLeftOut", plan.pendingLeftOut},
                {"schedulerRuns", plan.schedulerRuns},
                {"seconds", plan.seconds}};
  for (auto it = rest.begin(); it != rest.end(); ++it) doc[it.key()] = std::move(*it);
  return doc;
}

std::string planTable(const Plan& plan) {
  std::string out = "Goal: " + plan.goal + "\n";
  if (plan.goal == "--spread") {
    const size_t within = static_cast<size_t>(std::count_if(
        plan.skews.begin(), plan.skews.end(), [](const Skew& k) { return k.after <= k.maxSkew; }));
    out += "Plan: " + std::to_string(plan.moves.size()) + " move" +
           (plan.moves.size() == 1 ? "" : "s") + "; " + std::to_string(within) + " of " +
           std::to_string(plan.skews.size()) +
           " topology spread constraints within maxSkew after.\n";
  } else if (plan.balance) {
    const auto nodes = [](size_t n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); };
    out += "Plan: " + std::to_string(plan.moves.size()) + " move" +
           (plan.moves.size() == 1 ? "" : "s") + "; " + nodes(plan.balance->overBefore) +
           " more than " + fixed(plan.balance->deviation) + " points above the cluster's " +
           (plan.balance->measure == "load" ? "used share (NodeMetrics)" : "requested share") +
           " before, " + nodes(plan.balance->overAfter) + " after.\n";
  } else if (!plan.forPod.empty()) {
    if (plan.forPodNode.empty()) {
      out += "Plan: no room found for " + plan.forPod +
             ". It does not fit now: " + plan.forPodReason + "\n";
    } else if (plan.moves.empty()) {
      out += "Plan: nothing to move: " + plan.forPod + " fits now, on " + plan.forPodNode + ".\n";
    } else if (!plan.forPodMembers.empty()) {
      out += "Plan: " + std::to_string(plan.moves.size()) + " move" +
             (plan.moves.size() == 1 ? "" : "s") + ", then PodGroup " + plan.forPod + " fits, on " +
             plan.forPodNode + ".\n";
    } else {
      out += "Plan: " + std::to_string(plan.moves.size()) + " move" +
             (plan.moves.size() == 1 ? "" : "s") + " off " + joined(plan.uncordonAfter) +
             ", then " + plan.forPod + " fits, on " + plan.forPodNode + ".\n";
    }
  } else if (plan.cordon.empty()) {
    out += "Plan: no node can be freed.\n";
  } else {
    out += "Plan: free " + std::to_string(plan.cordon.size()) + " node" +
           (plan.cordon.size() == 1 ? "" : "s") + " (" + joined(plan.cordon) + ") with " +
           std::to_string(plan.moves.size()) + " move" + (plan.moves.size() == 1 ? "" : "s") +
           ", each placed by the scheduler.\n";
  }
  if (!plan.moves.empty()) {
    std::vector<std::vector<std::string>> rows{{"STEP", "POD", "FROM", "TO", "WHY"}};
    for (size_t i = 0; i < plan.moves.size(); ++i) {
      const Move& m = plan.moves[i];
      std::string to = m.to;
      if (!m.tiedWith.empty()) to += " (tied with " + std::to_string(m.tiedWith.size()) + ")";
      rows.push_back({std::to_string(i + 1), m.namespace_ + "/" + m.name, m.from, to, m.why});
    }
    out += "\n" + columns(rows);
  }
  // The first kListed of a list; -o json has them all.
  constexpr size_t kListed = 20;
  const auto more = [&](size_t n) {
    return n > kListed ? "  ... and " + std::to_string(n - kListed) + " more (-o json lists all)\n"
                       : std::string();
  };
  if (!plan.forPodMembers.empty()) {
    std::vector<std::vector<std::string>> rows{{"POD OF THE GROUP", "NODE"}};
    for (const auto& [pod, node] : plan.forPodMembers) rows.push_back({pod, node});
    out += "\n" + columns(rows);
    if (!plan.moves.empty()) {
      out += "Cordoned while the moves run (uncordoned after the last): " +
             joined(plan.uncordonAfter) + ".\n";
    }
  }
  if (!plan.skews.empty()) {
    std::vector<std::vector<std::string>> rows{
        {"PODS OF", "TOPOLOGY KEY", "MAXSKEW", "SKEW BEFORE", "AFTER", "NOTE"}};
    for (const auto& k : plan.skews) {
      rows.push_back({k.group, k.topologyKey + (k.defaulted ? " (default)" : ""),
                      std::to_string(k.maxSkew), std::to_string(k.before), std::to_string(k.after),
                      k.note});
    }
    out += "\n" + columns(rows);
  }
  if (!plan.notFreed.empty()) {
    out += plan.balance          ? "\nNodes left above the band:\n"
           : plan.forPod.empty() ? "\nNodes not freed:\n"
                                 : "\nNodes tried:\n";
    for (size_t i = 0; i < std::min(kListed, plan.notFreed.size()); ++i) {
      out += "  " + plan.notFreed[i].node + ": " + plan.notFreed[i].reason + "\n";
    }
    out += more(plan.notFreed.size());
  }
  if (!plan.kept.empty()) {
    out += "\nPods that keep their node:\n";
    for (size_t i = 0; i < std::min(kListed, plan.kept.size()); ++i) {
      const Kept& k = plan.kept[i];
      out += "  " + k.node + ": " + k.pod + ": " + k.reason + "\n";
    }
    out += more(plan.kept.size());
  }
  if (!plan.alreadyFree.empty()) {
    std::vector<std::string> first(
        plan.alreadyFree.begin(),
        plan.alreadyFree.begin() +
            static_cast<ptrdiff_t>(std::min(kListed, plan.alreadyFree.size())));
    out += "\nAlready free (nothing to move; cordoned too, so that no move lands there):\n  " +
           joined(first) + "\n" + more(plan.alreadyFree.size());
  }
  if (!plan.forPod.empty() || plan.goal == "--spread") {
    char line[96];
    std::snprintf(line, sizeof line, "Planned in %.2f s (%zu scheduler runs).\n", plan.seconds,
                  plan.schedulerRuns);
    return out + line;
  }
  std::vector<std::vector<std::string>> fig{{"", "BEFORE", "AFTER"}};
  if (plan.balance) {
    const auto rows = [&](const std::map<std::string, Figures::Spread>& before,
                          const std::map<std::string, Figures::Spread>& after,
                          const std::string& what) {
      for (const char* r : {"cpu", "memory"}) {
        const Figures::Spread& b = before.at(r);
        const Figures::Spread& a = after.at(r);
        fig.push_back(
            {std::string(r) + " " + what + ", cluster", fixed(b.mean) + "%", fixed(a.mean) + "%"});
        fig.push_back({std::string(r) + " " + what + ", lowest-highest node",
                       fixed(b.min) + "-" + fixed(b.max) + "%",
                       fixed(a.min) + "-" + fixed(a.max) + "%"});
        fig.push_back(
            {std::string(r) + (what == "used" ? " used," : "") + " standard deviation over nodes",
             fixed(b.stddev) + " points", fixed(a.stddev) + " points"});
      }
    };
    if (plan.balance->measure == "load") {
      rows(plan.balance->usedBefore, plan.balance->usedAfter, "used");
    }
    rows(plan.before.perNode, plan.after.perNode, "requested");
    out += "\n" + columns(fig);
    if (plan.pendingLeftOut > 0) {
      out += std::to_string(plan.pendingLeftOut) + " pending pods left out of the plan.\n";
    }
    char line[96];
    std::snprintf(line, sizeof line, "Planned in %.2f s (%zu scheduler runs).\n", plan.seconds,
                  plan.schedulerRuns);
    return out + line;
  }
  fig.push_back({"nodes used",
                 std::to_string(plan.before.nodesUsed) + " of " + std::to_string(plan.before.nodes),
                 std::to_string(plan.after.nodesUsed) + " of " + std::to_string(plan.after.nodes)});
  for (const char* r : {"cpu", "memory"}) {
    fig.push_back({std::string(r) + " requested, nodes used",
                   fixed(plan.before.requestedUsed.at(r)) + "%",
                   fixed(plan.after.requestedUsed.at(r)) + "%"});
  }
  out += "\n" + columns(fig);
  out += "Lower bound from requests: " + std::to_string(plan.lowerBoundNodes) + " nodes.\n";
  if (plan.pendingLeftOut > 0) {
    out += std::to_string(plan.pendingLeftOut) + " pending pods left out of the plan.\n";
  }
  char line[96];
  std::snprintf(line, sizeof line, "Planned in %.2f s (%zu scheduler runs).\n", plan.seconds,
                plan.schedulerRuns);
  out += line;
  return out;
}

}  // namespace ksched::advise
