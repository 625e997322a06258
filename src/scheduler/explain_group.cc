#include "scheduler/explain_group.h"

#include <algorithm>
#include <sstream>

namespace ksched::scheduler {
namespace {

using json = nlohmann::ordered_json;

// Members of the cycle that found a node (placed, or taken back with the group).
int32_t membersWithNode(const PodGroupTrace& t) {
  return static_cast<int32_t>(std::count_if(t.members.begin(), t.members.end(),
                                            [](const auto& m) { return !m.node.empty(); }));
}

// "gang, minCount 8" or "basic".
std::string policyText(const GroupExplanation& g) {
  return g.gang ? "gang, minCount " + std::to_string(g.minCount) : std::string("basic");
}

// Rows as columns padded to the widest cell, each line indented by `indent`.
std::string groupColumns(const std::vector<std::vector<std::string>>& rows,
                         const std::string& indent) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace

int32_t placedMembers(const GroupExplanation& g) {
  return static_cast<int32_t>(std::count_if(g.members.begin(), g.members.end(), [](const auto& m) {
    return m.state == "bound" || m.state == "assumed";
  }));
}

json toJson(const GroupExplanation& g) {
  json j;
  j["name"] = g.podGroup;
  j["found"] = g.found;
  j["policy"] = g.gang ? "gang" : "basic";
  if (g.gang) j["minCount"] = g.minCount;
  if (!g.topologyKey.empty()) j["topologyKey"] = g.topologyKey;
  json members = json::array();
  for (const auto& m : g.members) {
    json mj = {{"pod", m.pod}, {"state", m.state}};
    if (!m.node.empty()) mj["node"] = m.node;
    if (!m.detail.empty()) mj["detail"] = m.detail;
    members.push_back(std::move(mj));
  }
  j["members"] = std::move(members);
  j["boundOrAssumed"] = placedMembers(g);
  if (!g.noCycle.empty()) j["noCycle"] = g.noCycle;
  if (!g.cycle) return j;
  const PodGroupTrace& t = *g.cycle;
  json c;
  c["scheduled"] = t.scheduled;
  if (!t.scheduled) c["message"] = t.message;
  const int32_t found = membersWithNode(t);
  c["membersWithNode"] = found;
  if (g.gang) c["minCountShort"] = std::max(0, g.minCount - placedMembers(g) - found);
  json cm = json::array();
  for (const auto& m : t.members) {
    json mj = {{"pod", m.pod},
               {"node", m.node.empty() ? json(nullptr) : json(m.node)},
               {"placed", m.placed},
               {"tried", m.tried}};
    if (!m.placed) mj["reason"] = m.reason;
    cm.push_back(std::move(mj));
  }
  c["members"] = std::move(cm);
  if (!t.placements.empty()) {
    json tried = json::array();
    for (const auto& p : t.placements) {
      json pj = {{"name", p.name}, {"nodes", p.nodes}, {"feasible", p.feasible}};
      if (!p.feasible) pj["message"] = p.message;
      if (p.score) pj["score"] = *p.score;
      json proposed = json::object();
      for (const auto& [pod, node] : p.proposed) proposed[pod] = node;
      pj["proposed"] = std::move(proposed);
      tried.push_back(std::move(pj));
    }
    c["placements"] = std::move(tried);
    c["chosen"] = t.chosen.empty() ? json(nullptr) : json(t.chosen);
  }
  j["cycle"] = std::move(c);
  return j;
}

std::string toTable(const GroupExplanation& g) {
  std::ostringstream out;
  out << "\nPod group " << g.podGroup << " (" << policyText(g);
  if (!g.topologyKey.empty()) out << ", topology " << g.topologyKey;
  out << ")\n";
  if (!g.found) {
    out << "  The PodGroup is not in the scheduler's cache: its pods wait for it.\n";
  }
  int counts[4] = {0, 0, 0, 0};
  static constexpr const char* kStates[4] = {"bound", "assumed", "queued", "gated"};
  std::vector<std::vector<std::string>> rows{{"MEMBER", "STATE", "NODE", "HELD BY"}};
  for (const auto& m : g.members) {
    for (int i = 0; i < 4; ++i) counts[i] += m.state == kStates[i] ? 1 : 0;
    rows.push_back({m.pod, m.state, m.node.empty() ? "-" : m.node, m.detail});
  }
  out << "  " << g.members.size() << " member(s): " << counts[0] << " bound, " << counts[1]
      << " assumed, " << counts[2] << " queued, " << counts[3] << " gated\n";
  out << groupColumns(rows, "  ");
  if (!g.noCycle.empty()) out << "\nNo pod-group cycle would run now: " << g.noCycle << "\n";
  if (!g.cycle) return out.str();
  const PodGroupTrace& t = *g.cycle;
  const int32_t found = membersWithNode(t);
  out << "\nThe pod-group cycle now (run on a copy of the cluster; nothing was bound):\n";
  if (t.scheduled) {
    int32_t placed = 0;
    for (const auto& m : t.members) placed += m.placed ? 1 : 0;
    out << "  would place the group: " << placed << " of " << t.members.size()
        << " pending member(s)";
  } else {
    out << "  would not place the group: " << t.message << "\n";
    out << "  " << found << " of " << t.members.size()
        << " pending member(s) found a node before the group was taken back";
    const auto untried =
        std::count_if(t.members.begin(), t.members.end(), [](const auto& m) { return !m.tried; });
    if (t.placements.empty() && untried > 0) {
      out << " (" << untried << " not tried: the group could no longer reach minCount)";
    }
  }
  if (g.gang) {
    const int32_t already = placedMembers(g);
    const int32_t shortBy = std::max(0, g.minCount - already - found);
    out << "; minCount " << g.minCount << " = " << already << " bound or assumed + " << found;
    out << (shortBy > 0 ? ", " + std::to_string(shortBy) + " more needed" : ", met");
  }
  out << "\n";
  std::vector<std::vector<std::string>> crows{{"MEMBER", "NODE", "REASON"}};
  for (const auto& m : t.members) {
    std::string node = m.node.empty() ? "-" : m.node;
    if (!m.placed && !m.node.empty()) node += " (taken back)";
    if (m.node.empty() && !m.tried && t.placements.empty()) node = "(not tried)";
    crows.push_back({m.pod, node, m.placed ? "" : m.reason});
  }
  out << groupColumns(crows, "  ");
  if (!t.placements.empty()) {
    out << "\n  Placements tried";
    if (!t.topologyKey.empty()) out << " (" << t.topologyKey << ")";
    out << ":\n";
    for (const auto& p : t.placements) {
      out << "    " << p.name << " (" << p.nodes << " node" << (p.nodes == 1 ? "" : "s") << "): ";
      if (p.feasible) {
        out << "feasible";
        if (p.score) out << ", score " << *p.score;
      } else {
        out << p.message;
      }
      if (!p.proposed.empty()) {
        out << " [";
        for (size_t i = 0; i < p.proposed.size(); ++i) {
          out << (i ? ", " : "") << p.proposed[i].first << "->" << p.proposed[i].second;
        }
        out << "]";
      }
      out << "\n";
    }
    out << "  " << (t.chosen.empty() ? "No placement was chosen." : "Chosen: " + t.chosen) << "\n";
  }
  return out.str();
}

}  // namespace ksched::scheduler
