#include "sim/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <ksched/api/pod_resources.h>

namespace ksched::sim {
namespace {

using ojson = nlohmann::ordered_json;

const std::vector<std::string> kResources = {"cpu", "memory", "pods"};

std::string zoneOf(const api::Node& n) {
  for (const char* key :
       {"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}) {
    if (auto it = n.metadata.labels.find(key); it != n.metadata.labels.end()) return it->second;
  }
  return "";
}

int64_t amount(const std::string& resource, const api::Quantity& q) {
  return resource == "cpu" ? q.milliValue() : q.value();
}

struct Usage {
  std::map<std::string, int64_t> requested;  // by kResources
  int64_t pods = 0;
};

// Requests of the pods bound to each node (pods that hold resources: not finished).
std::unordered_map<std::string, Usage> usageByNode(const Cluster& c, const features::Gates& gates) {
  std::unordered_map<std::string, Usage> out;
  for (const auto& p : c.pods) {
    if (p->spec.nodeName.empty() || p->status.phase == "Succeeded" || p->status.phase == "Failed") {
      continue;
    }
    Usage& u = out[p->spec.nodeName];
    ++u.pods;
    for (const auto& [name, q] : api::effectiveRequests(*p, api::PodResourcesOptions(gates))) {
      if (name == "cpu" || name == "memory") u.requested[name] += amount(name, q);
    }
  }
  return out;
}

double ratio(int64_t a, int64_t b) { return b <= 0 ? 0.0 : static_cast<double>(a) / b; }

std::string percent(double v) { return fmt::format("{:.1f} %", v * 100); }

// What the group's last pod-group cycle says (Result::podGroups): its policy, its topology
// domain, the nodes its pods went to and, with pods left out (`short_`), its message.
void addGroupCycle(const Result& r, const std::string& key, bool short_, ojson& g) {
  auto it = std::find_if(r.podGroups.begin(), r.podGroups.end(), [&](const PodGroupResult& c) {
    return c.namespace_ + "/" + c.name == key;
  });
  if (it == r.podGroups.end()) {
    // No cycle ran: its pods were held (at PreEnqueue, e.g. fewer than minCount exist).
    if (short_) {
      for (const auto& p : r.pods) {
        if (!p.node && p.namespace_ + "/" + p.podGroup == key) {
          g["reason"] = p.reason;
          break;
        }
      }
    }
    return;
  }
  g["policy"] = it->gang ? "gang" : "basic";
  if (it->gang) g["minCount"] = it->minCount;
  std::set<std::string> nodes;
  for (const auto& m : it->members) {
    if (m.placed) nodes.insert(m.node);
  }
  g["nodes"] = nodes;
  if (!it->topologyKey.empty()) {
    g["topologyKey"] = it->topologyKey;
    g["placement"] = it->chosen.empty() ? ojson(nullptr) : ojson(it->chosen);
  }
  if (!short_) return;
  std::string reason = it->message;
  for (const auto& m : it->members) {
    if (reason.empty() && !m.placed) reason = m.reason;
  }
  g["reason"] = reason;
}

}  // namespace

ojson resultDocument(const SummaryInput& in) {
  const Result& r = *in.result;
  ojson doc;
  doc["kind"] = "SimulationResult";
  doc["profile"] = in.profile;
  doc["seed"] = in.seed;

  // Pods and the reasons of those not placed.
  ojson pods = ojson::array();
  std::map<std::pair<std::string, std::string>, int64_t> byReason;
  for (const auto& p : r.pods) {
    ojson j;
    j["namespace"] = p.namespace_;
    j["name"] = p.name;
    j["node"] = p.node ? ojson(*p.node) : ojson(nullptr);
    j["tiedWith"] = p.tiedWith;
    j["ties"] = p.ties;
    j["reason"] = p.reason;
    j["attempts"] = p.attempts;
    j["origin"] = p.origin;
    if (!p.podGroup.empty()) j["podGroup"] = p.podGroup;
    if (!p.devices.empty()) j["devices"] = p.devices;
    ojson diagnosis = nullptr;
    if (!p.diagnosis.empty()) {
      diagnosis = ojson::parse(p.diagnosis, nullptr, false);
      if (diagnosis.is_discarded()) diagnosis = nullptr;
    }
    if (!p.node) {
      bool counted = false;
      if (diagnosis.is_object() && diagnosis.contains("reasons") &&
          diagnosis["reasons"].is_array()) {
        for (const auto& reason : diagnosis["reasons"]) {
          if (!reason.is_object()) continue;
          byReason[{reason.value("plugin", ""), reason.value("reason", "")}] += 1;
          counted = true;
        }
      }
      if (!counted) byReason[{"", p.reason}] += 1;
    }
    j["diagnosis"] = std::move(diagnosis);
    pods.push_back(std::move(j));
  }
  doc["pods"] = std::move(pods);
  // Pod groups (GenericWorkload): how many of each group's pods were placed.
  std::map<std::string, std::pair<int64_t, int64_t>> groups;  // "<ns>/<name>" -> (pods, placed)
  for (const auto& p : r.pods) {
    if (p.podGroup.empty()) continue;
    auto& [total, placed] = groups[p.namespace_ + "/" + p.podGroup];
    ++total;
    if (p.node) ++placed;
  }
  if (!groups.empty()) {
    ojson gs = ojson::array();
    for (const auto& [key, counts] : groups) {
      ojson g = {{"podGroup", key}, {"pods", counts.first}, {"placed", counts.second}};
      addGroupCycle(r, key, counts.first > counts.second, g);
      gs.push_back(std::move(g));
    }
    doc["podGroups"] = std::move(gs);
  }
  ojson victims = ojson::array();
  for (const auto& v : r.victims) {
    victims.push_back({{"namespace", v.namespace_},
                       {"name", v.name},
                       {"node", v.node},
                       {"preemptor", v.preemptor}});
  }
  doc["victims"] = std::move(victims);
  doc["stats"] = {
      {"scheduled", r.scheduled},
      {"unschedulable", r.unschedulable},
      {"preempted", r.victims.size()},
      {"attempts", r.attempts},
      {"seconds", r.seconds},
      {"podsPerSecond", r.seconds > 0 ? static_cast<double>(r.scheduled) / r.seconds : 0.0}};
  std::vector<std::pair<std::pair<std::string, std::string>, int64_t>> reasons(byReason.begin(),
                                                                               byReason.end());
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  ojson rs = ojson::array();
  for (const auto& [key, n] : reasons) {
    rs.push_back({{"plugin", key.first}, {"reason", key.second}, {"pods", n}});
  }
  doc["unschedulableByReason"] = std::move(rs);
  doc["resources"] = kResources;

  // Nodes, utilization, zones.
  const auto before = usageByNode(*in.before, in.features);
  const auto after = usageByNode(*in.after, in.features);
  std::map<std::string, int64_t> allocTotal, beforeTotal, afterTotal;
  struct Zone {
    int64_t before = 0, after = 0;
  };
  std::map<std::string, Zone> zones;
  int64_t usedBefore = 0, usedAfter = 0;
  ojson nodes = ojson::array();
  for (const auto& n : in.after->nodes) {
    const std::string& name = n->metadata.name;
    const Usage none;
    const auto b = before.find(name);
    const auto a = after.find(name);
    const Usage& ub = b == before.end() ? none : b->second;
    const Usage& ua = a == after.end() ? none : a->second;
    ojson alloc, rb, ra;
    for (const auto& res : kResources) {
      auto q = n->status.allocatable.find(res);
      const int64_t al = q == n->status.allocatable.end() ? 0 : amount(res, q->second);
      const int64_t vb =
          res == "pods" ? ub.pods : (ub.requested.contains(res) ? ub.requested.at(res) : 0);
      const int64_t va =
          res == "pods" ? ua.pods : (ua.requested.contains(res) ? ua.requested.at(res) : 0);
      alloc[res] = al;
      rb[res] = vb;
      ra[res] = va;
      allocTotal[res] += al;
      beforeTotal[res] += vb;
      afterTotal[res] += va;
    }
    const std::string zone = zoneOf(*n);
    zones[zone].before += ub.pods;
    zones[zone].after += ua.pods;
    usedBefore += ub.pods > 0 ? 1 : 0;
    usedAfter += ua.pods > 0 ? 1 : 0;
    nodes.push_back({{"name", name},
                     {"zone", zone},
                     {"placed", ua.pods - ub.pods},
                     {"allocatable", std::move(alloc)},
                     {"requestedBefore", std::move(rb)},
                     {"requestedAfter", std::move(ra)}});
  }
  doc["nodes"] = std::move(nodes);
  ojson util;
  for (const auto& res : kResources) {
    util[res] = {{"before", ratio(beforeTotal[res], allocTotal[res])},
                 {"after", ratio(afterTotal[res], allocTotal[res])}};
  }
  doc["utilization"] = std::move(util);
  ojson zs = ojson::array();
  for (const auto& [zone, z] : zones) {
    if (zone.empty() && zones.size() == 1) break;  // no zones at all
    zs.push_back({{"zone", zone},
                  {"podsBefore", z.before},
                  {"podsAfter", z.after},
                  {"placed", z.after - z.before}});
  }
  doc["zones"] = std::move(zs);
  doc["nodesUsed"] = {{"before", usedBefore}, {"after", usedAfter}};
  ojson skipped = ojson::array();
  for (const auto& s : in.after->skipped) {
    skipped.push_back(
        {{"source", s.source}, {"object", s.object}, {"field", s.field}, {"message", s.message}});
  }
  for (const auto& [kind, n] : r.unreadKinds) {
    skipped.push_back({{"source", ""},
                       {"object", fmt::format("{} ({} object{})", kind, n, n == 1 ? "" : "s")},
                       {"field", ""},
                       {"message", "no plugin of this configuration reads this kind"}});
  }
  doc["skipped"] = std::move(skipped);
  return doc;
}

void addComparison(ojson& doc, const std::string& configName, ojson other) {
  std::unordered_map<std::string, ojson> there;
  for (const auto& p : other["pods"]) {
    there[p["namespace"].get<std::string>() + "/" + p["name"].get<std::string>()] = p["node"];
  }
  ojson moved = ojson::array();
  for (const auto& p : doc["pods"]) {
    const std::string key = p["namespace"].get<std::string>() + "/" + p["name"].get<std::string>();
    auto it = there.find(key);
    const ojson otherNode = it == there.end() ? ojson(nullptr) : it->second;
    if (otherNode == p["node"]) continue;
    moved.push_back({{"namespace", p["namespace"]},
                     {"name", p["name"]},
                     {"node", p["node"]},
                     {"otherNode", otherNode}});
  }
  doc["comparison"] = {
      {"config", configName}, {"result", std::move(other)}, {"moved", std::move(moved)}};
}

namespace {

std::string nodeText(const ojson& v) { return v.is_string() ? v.get<std::string>() : "-"; }

std::string duration(double seconds) {
  return seconds < 1 ? fmt::format("{:.1f} ms", seconds * 1000) : fmt::format("{:.2f} s", seconds);
}

void headline(std::string& out, const ojson& doc, const std::string& label) {
  const auto& s = doc["stats"];
  out += fmt::format(
      "{}scheduled {} of {} pods in {} ({:.0f} pods/s); unschedulable {}; "
      "preempted {}\n",
      label, s["scheduled"].get<int64_t>(), doc["pods"].size(),
      duration(s["seconds"].get<double>()), s["podsPerSecond"].get<double>(),
      s["unschedulable"].get<int64_t>(), s["preempted"].get<int64_t>());
}

}  // namespace

std::string diagnosisText(const ojson& diagnosis, const std::string& indent) {
  std::string out;
  if (!diagnosis.is_object()) return out;
  if (auto rs = diagnosis.find("reasons"); rs != diagnosis.end() && rs->is_array()) {
    for (const auto& r : *rs) {
      if (!r.is_object()) continue;
      std::string examples;
      if (auto ex = r.find("examples"); ex != r.end() && ex->is_array()) {
        for (const auto& e : *ex) {
          if (e.is_string()) examples += (examples.empty() ? "" : ", ") + e.get<std::string>();
        }
      }
      out += fmt::format("{}{}: {} - {} node(s){}\n", indent, r.value("plugin", ""),
                         r.value("reason", ""), r.value("count", 0),
                         examples.empty() ? "" : " (" + examples + ")");
      if (auto d = r.find("details"); d != r.end() && d->is_object()) {
        for (const auto& [node, text] : d->items()) {
          if (text.is_string())
            out += fmt::format("{}  {}: {}\n", indent, node, text.get<std::string>());
        }
      }
    }
  }
  if (auto cs = diagnosis.find("closest");
      cs != diagnosis.end() && cs->is_array() && !cs->empty()) {
    out += indent + "closest nodes:\n";
    for (const auto& c : *cs) {
      if (!c.is_object()) continue;
      out += fmt::format("{}  {}: {}\n", indent, c.value("node", ""), c.value("shortfall", ""));
    }
  }
  return out;
}

std::string resultTable(const ojson& doc, size_t maxPods) {
  std::string out;
  out += fmt::format("Profile {}, seed {}, {} nodes\n", doc["profile"].get<std::string>(),
                     doc["seed"].get<uint64_t>(), doc["nodes"].size());
  headline(out, doc, "");
  out += fmt::format("Nodes used: {} -> {}\n", doc["nodesUsed"]["before"].get<int64_t>(),
                     doc["nodesUsed"]["after"].get<int64_t>());

  out += "\nUtilization (requested / allocatable)   before    after\n";
  for (const auto& res : kResources) {
    const auto& u = doc["utilization"][res];
    out += fmt::format("  {:<38}{:>7}  {:>7}\n", res, percent(u["before"].get<double>()),
                       percent(u["after"].get<double>()));
  }
  if (doc["nodes"].size() <= 30) {
    out += fmt::format("\n  {:<12} {:<10} {:>6}   {:^20}   {:^20}\n", "Node", "Zone", "placed",
                       "cpu before -> after", "memory before -> after");
    for (const auto& n : doc["nodes"]) {
      auto share = [&](const char* res, const char* when) {
        const int64_t alloc = n["allocatable"][res].get<int64_t>();
        return percent(alloc <= 0 ? 0.0 : static_cast<double>(n[when][res].get<int64_t>()) / alloc);
      };
      out += fmt::format("  {:<12} {:<10} {:>6}   {:>8} -> {:<8}   {:>8} -> {}\n",
                         n["name"].get<std::string>(), n["zone"].get<std::string>(),
                         n["placed"].get<int64_t>(), share("cpu", "requestedBefore"),
                         share("cpu", "requestedAfter"), share("memory", "requestedBefore"),
                         share("memory", "requestedAfter"));
    }
  }
  {
    size_t shown = 0, total = 0;
    std::string lines;
    for (const auto& p : doc["pods"]) {
      if (p["node"].is_null()) continue;
      ++total;
      if (shown >= maxPods) continue;
      ++shown;
      const int64_t ties = p.value("ties", 0);
      lines += fmt::format(
          "  {}/{} -> {}{}{}\n", p["namespace"].get<std::string>(), p["name"].get<std::string>(),
          p["node"].get<std::string>(),
          ties > 0 ? fmt::format(" (tied with {} other node{})", ties, ties == 1 ? "" : "s") : "",
          p["origin"] == "work" ? "" : " [" + p["origin"].get<std::string>() + "]");
      if (p.contains("devices")) {
        for (const auto& d : p["devices"]) lines += "      " + d.get<std::string>() + "\n";
      }
    }
    if (total > 0) {
      out += "\nPlaced\n" + lines;
      if (total > shown) {
        out += fmt::format("  ... and {} more (-o json lists every pod)\n", total - shown);
      }
    }
  }
  if (!doc["zones"].empty()) {
    out += "\nPods per zone      before    after   placed\n";
    for (const auto& z : doc["zones"]) {
      const std::string zone = z["zone"].get<std::string>();
      out += fmt::format("  {:<15}{:>7}  {:>7}  {:>7}\n", zone.empty() ? "(none)" : zone,
                         z["podsBefore"].get<int64_t>(), z["podsAfter"].get<int64_t>(),
                         z["placed"].get<int64_t>());
    }
  }
  if (doc.contains("podGroups")) {
    out += "\nPod groups          pods   placed\n";
    for (const auto& g : doc["podGroups"]) {
      out += fmt::format("  {:<16}{:>7}  {:>7}\n", g["podGroup"].get<std::string>(),
                         g["pods"].get<int64_t>(), g["placed"].get<int64_t>());
    }
  }
  if (!doc["unschedulableByReason"].empty()) {
    out += "\nUnschedulable pods by reason\n";
    for (const auto& r : doc["unschedulableByReason"]) {
      const std::string plugin = r["plugin"].get<std::string>();
      out += fmt::format("  {:>6}  {}{}\n", r["pods"].get<int64_t>(),
                         plugin.empty() ? "" : plugin + ": ", r["reason"].get<std::string>());
    }
    out += "\nUnschedulable pods\n";
    size_t shown = 0, total = 0;
    for (const auto& p : doc["pods"]) {
      if (!p["node"].is_null()) continue;
      ++total;
      if (shown >= maxPods) continue;
      ++shown;
      out += fmt::format("  {}/{}: {}\n", p["namespace"].get<std::string>(),
                         p["name"].get<std::string>(), p["reason"].get<std::string>());
      // The first ones in full: every reason with its nodes, and the closest nodes.
      if (shown <= 3) out += diagnosisText(p["diagnosis"], "      ");
    }
    if (total > shown)
      out += fmt::format("  ... and {} more (-o json lists every pod)\n", total - shown);
  }
  if (!doc["victims"].empty()) {
    out += "\nPreempted\n";
    for (const auto& v : doc["victims"]) {
      out += fmt::format("  {}/{} on {}, for {}\n", v["namespace"].get<std::string>(),
                         v["name"].get<std::string>(), v["node"].get<std::string>(),
                         v["preemptor"].get<std::string>());
    }
  }
  if (!doc["skipped"].empty()) {
    out += fmt::format("\nSkipped {} objects\n", doc["skipped"].size());
    size_t n = 0;
    for (const auto& s : doc["skipped"]) {
      if (++n > maxPods) {
        out += fmt::format("  ... and {} more\n", doc["skipped"].size() - maxPods);
        break;
      }
      std::string where = s["source"].get<std::string>();
      const std::string object = s["object"].get<std::string>();
      const std::string field = s["field"].get<std::string>();
      if (!object.empty()) where += (where.empty() ? "" : ": ") + object;
      out += fmt::format("  {}{}: {}\n", where, field.empty() ? "" : " " + field,
                         s["message"].get<std::string>());
    }
  }
  if (doc.contains("comparison")) {
    const auto& c = doc["comparison"];
    out += fmt::format("\nWith {}:\n", c["config"].get<std::string>());
    headline(out, c["result"], "  ");
    out +=
        fmt::format("  Nodes used: {} -> {}\n", c["result"]["nodesUsed"]["before"].get<int64_t>(),
                    c["result"]["nodesUsed"]["after"].get<int64_t>());
    for (const auto& res : kResources) {
      const auto& u = c["result"]["utilization"][res];
      out += fmt::format("  {} utilization after: {} (here {})\n", res,
                         percent(u["after"].get<double>()),
                         percent(doc["utilization"][res]["after"].get<double>()));
    }
    out += fmt::format("  {} pods placed differently\n", c["moved"].size());
    size_t n = 0;
    for (const auto& m : c["moved"]) {
      if (++n > maxPods) {
        out += fmt::format("  ... and {} more\n", c["moved"].size() - maxPods);
        break;
      }
      out +=
          fmt::format("    {}/{}: {} -> {}\n", m["namespace"].get<std::string>(),
                      m["name"].get<std::string>(), nodeText(m["node"]), nodeText(m["otherNode"]));
    }
  }
  return out;
}

}  // namespace ksched::sim
