#include "scheduler/explain.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>

#include <ksched/api/pod_resources.h>

#include "framework/fit_error.h"
#include "scheduler/algorithm.h"

namespace ksched::scheduler {
namespace {

using json = nlohmann::ordered_json;

int64_t amount(const api::Resource& r, const std::string& name) {
  if (name == "cpu") return r.milliCPU;
  if (name == "memory") return r.memory;
  if (name == "ephemeral-storage") return r.ephemeralStorage;
  if (name == "pods") return r.allowedPodNumber;
  auto it = r.scalar.find(name);
  return it == r.scalar.end() ? 0 : it->second;
}

constexpr std::string_view kInsufficient = "Insufficient ";

// Whether a reason of `s` names a resource the node has too little of: a shortfall, not a cause
// a plugin explains.
bool hasShortfall(const Status& s) {
  return std::any_of(s.reasons().begin(), s.reasons().end(),
                     [](const std::string& r) { return r.starts_with(kInsufficient); });
}

// "Insufficient cpu" -> the pod's request (from its effective `requests`), the node's
// allocatable and what is in use there.
std::vector<Explanation::Rejection::Shortfall> shortfalls(const Status& s,
                                                          const api::Resource& requests,
                                                          const NodeInfo& node) {
  std::vector<Explanation::Rejection::Shortfall> out;
  for (const auto& reason : s.reasons()) {
    if (!reason.starts_with(kInsufficient)) continue;
    const std::string resource = reason.substr(kInsufficient.size());
    Explanation::Rejection::Shortfall f;
    f.resource = resource;
    f.requested = resource == "pods" ? 1 : amount(requests, resource);
    f.allocatable = amount(node.allocatable(), resource);
    f.inUse = resource == "pods" ? static_cast<int64_t>(node.pods().size())
                                 : amount(node.requested(), resource);
    out.push_back(std::move(f));
  }
  return out;
}

// What explainPod needs to say why a node is rejected.
struct Context {
  const framework::Framework& fwk;
  const CycleState& state;
  const api::Pod& pod;
  api::Resource requests;
};

// A rejection that names resources the node lacks gets their shortfalls; any other, the details
// its plugin gives (Framework::explainRejection).
Explanation::Rejection rejection(const Status& s, const Context& c, const NodeInfo& node) {
  Explanation::Rejection r;
  r.plugin = s.plugin();
  r.code = std::string(codeName(s.code()));
  r.reasons = s.reasons();
  if (hasShortfall(s)) {
    r.shortfalls = shortfalls(s, c.requests, node);
  } else {
    r.details = c.fwk.explainRejection(c.state, s, c.pod, node);
  }
  return r;
}

std::string joined(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? std::string(sep) : "") + parts[i];
  return out;
}

// A detail in the annotation is cut at this many bytes (on a UTF-8 boundary), "..." added.
constexpr size_t kMaxDetailBytes = 320;  // a DRA reason names claim, request, class and cause

std::string truncated(std::string s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  return s + "...";
}

std::string trimZeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

std::string formatQuantity(const std::string& resource, int64_t value) {
  if (resource == "cpu") {
    if (value % 1000 == 0) return std::to_string(value / 1000);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(value) / 1000.0);
    return trimZeros(buf);
  }
  if (resource == "memory" || resource == "ephemeral-storage") {
    for (const auto& [unit, size] :
         {std::pair{"Gi", int64_t{1} << 30}, std::pair{"Mi", int64_t{1} << 20},
          std::pair{"Ki", int64_t{1} << 10}}) {
      if (value != 0 && value % size == 0) return std::to_string(value / size) + unit;
    }
  }
  return std::to_string(value);
}

SnapshotWithoutPod::SnapshotWithoutPod(const NodeInfoLister& base, const std::string& node,
                                       const std::string& uid)
    : base_(base) {
  original_ = base.get(node);
  if (original_ != nullptr) {
    replaced_ = original_->clone();
    replaced_->removePod(uid);
  }
  auto swap = [this](const std::vector<const NodeInfo*>& from, std::vector<const NodeInfo*>& to) {
    to = from;
    for (auto& n : to) {
      if (n == original_) n = replaced_.get();
    }
  };
  swap(base.list(), list_);
  swap(base.havePodsWithAffinityList(), affinity_);
  swap(base.havePodsWithRequiredAntiAffinityList(), antiAffinity_);
}

const NodeInfo* SnapshotWithoutPod::get(std::string_view nodeName) const {
  const NodeInfo* n = base_.get(nodeName);
  return n != nullptr && n == original_ ? replaced_.get() : n;
}

Explanation explainPod(framework::Framework& fwk, const api::Pod& pod,
                       const NodeInfoLister& snapshot, int32_t percentage,
                       const std::string& onlyNode) {
  Explanation e;
  e.pod = pod.metadata.namespace_ + "/" + pod.metadata.name;
  e.profile = fwk.profileName();
  e.boundTo = pod.spec.nodeName;
  const auto& all = snapshot.list();
  e.numNodes = static_cast<int>(all.size());
  e.cycleStopsAfterFeasible = numFeasibleNodesToFind(
      fwk.percentageOfNodesToScore().value_or(percentage), static_cast<int>(all.size()));
  if (!onlyNode.empty() && snapshot.get(onlyNode) == nullptr) {
    throw ExplainError(404, "node \"" + onlyNode + "\" is not in the scheduler's cache");
  }

  framework::FitError fit;
  fit.numAllNodes = e.numNodes;
  CycleState state;
  const Context ctx{fwk, state, pod, api::schedulingRequestsResource(pod, fwk.features())};
  PreFilterResult pre;
  std::set<std::string, std::less<>> pluginsWithNodes;
  Status s = fwk.runPreFilterPlugins(state, pod, pre, &pluginsWithNodes);
  if (s.isError()) throw ExplainError(500, s.message());
  std::string restricting;
  for (const auto& p : pluginsWithNodes) restricting += (restricting.empty() ? "" : " ") + p;
  std::vector<const NodeInfo*> candidates;
  if (!s.ok()) {
    e.preFilterRejection = s.plugin().empty() ? s.message() : s.plugin() + ": " + s.message();
    fit.diagnosis.preFilterMsg = s.message();
    for (const NodeInfo* n : all) {
      if (!onlyNode.empty() && n->name() != onlyNode) continue;
      e.filtered.push_back({n->name(), {rejection(s, ctx, *n)}});
      fit.diagnosis.nodeToStatus.emplace(n->name(), s);
    }
  } else {
    if (pre.nodeNames) {
      e.preFilterNodes.emplace(pre.nodeNames->begin(), pre.nodeNames->end());
    }
    for (const NodeInfo* n : all) {
      if (n->node() == nullptr || (!onlyNode.empty() && n->name() != onlyNode)) continue;
      if (pre.nodeNames && !pre.nodeNames->contains(n->name())) {
        Status out = Status::unresolvable("node(s) didn't satisfy plugin(s) [" + restricting + "]");
        e.filtered.push_back({n->name(), {rejection(out, ctx, *n)}});
        continue;
      }
      candidates.push_back(n);
    }
    // Filter on every candidate, every plugin (the pool, as in a cycle).
    std::vector<std::vector<Status>> rejections(candidates.size());
    std::vector<char> fits(candidates.size(), 0);
    std::mutex mu;
    std::optional<Status> firstError;
    fwk.parallelizer().until(
        static_cast<int>(candidates.size()),
        [&](int i) {
          Status fs =
              fwk.runAllFilterPluginsWithNominatedPods(state, pod, *candidates[i], rejections[i]);
          if (fs.isError()) {
            std::lock_guard lock(mu);
            if (!firstError) firstError = std::move(fs);
            return;
          }
          fits[i] = fs.ok() ? 1 : 0;
        },
        [] { return false; });
    if (firstError) throw ExplainError(500, firstError->message());
    std::vector<const NodeInfo*> feasible;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (fits[i]) {
        feasible.push_back(candidates[i]);
        continue;
      }
      Explanation::FilteredNode f{candidates[i]->name(), {}};
      for (const auto& r : rejections[i]) f.rejections.push_back(rejection(r, ctx, *candidates[i]));
      if (!rejections[i].empty()) {
        const Status& first = rejections[i].front();
        fit.diagnosis.nodeToStatus.emplace(candidates[i]->name(), first);
        if (!first.plugin().empty()) fit.diagnosis.unschedulablePlugins.insert(first.plugin());
      }
      e.filtered.push_back(std::move(f));
    }
    if (!feasible.empty()) {
      s = fwk.runPreScorePlugins(state, pod, feasible);
      if (!s.ok() && !s.isSkip()) throw ExplainError(500, s.message());
      std::vector<int64_t> totals(feasible.size(), 1);
      framework::Framework::ScoreBreakdown b;
      if (fwk.hasScorePlugins()) {
        s = fwk.runScorePlugins(state, pod, feasible, totals, &b);
        if (!s.ok()) throw ExplainError(500, s.message());
      }
      for (size_t i = 0; i < feasible.size(); ++i) {
        Explanation::ScoredNode n{feasible[i]->name(), totals[i], {}};
        for (size_t k = 0; k < b.plugins.size(); ++k) {
          std::string detail;
          if (const auto* x = dynamic_cast<const ScoreExplainer*>(fwk.scorePlugin(b.plugins[k]))) {
            detail = x->explainScore(state, pod, *feasible[i]);
          }
          n.scores.push_back(
              {b.plugins[k], b.raw[k][i], b.normalized[k][i], b.weights[k], std::move(detail)});
        }
        e.feasible.push_back(std::move(n));
      }
      std::sort(e.feasible.begin(), e.feasible.end(), [](const auto& a, const auto& b) {
        return a.total != b.total ? a.total > b.total : a.node < b.node;
      });
      // With one node asked about, no pick is made: a cycle would weigh every node.
      for (const auto& n : e.feasible) {
        if (onlyNode.empty() && n.total == e.feasible.front().total) e.selected.push_back(n.node);
      }
    }
  }
  if (e.feasible.empty() && onlyNode.empty() && fwk.hasPostFilterPlugins()) {
    Explanation::Preemption p;
    PostFilterPlugin::Proposal proposal;
    Status ps =
        fwk.dryRunPostFilterPlugins(state, pod, fit.diagnosis.nodeToStatus, p.plugin, proposal);
    if (ps.isError()) throw ExplainError(500, ps.message());
    if (ps.ok()) {
      p.node = std::move(proposal.node);
      p.victims = std::move(proposal.victims);
      e.preemption = std::move(p);
    } else if (ps.isRejected()) {
      p.message = ps.message();
      fit.diagnosis.postFilterMsg = ps.message();
      e.preemption = std::move(p);
    }
  }
  std::sort(e.filtered.begin(), e.filtered.end(),
            [](const auto& a, const auto& b) { return a.node < b.node; });
  if (e.feasible.empty() && onlyNode.empty()) e.fitError = fit.message();
  return e;
}

json toJson(const Explanation& e) {
  json j;
  j["pod"] = e.pod;
  j["profile"] = e.profile;
  if (!e.boundTo.empty()) j["boundTo"] = e.boundTo;
  j["nodes"] = e.numNodes;
  j["cycleStopsAfterFeasible"] = e.cycleStopsAfterFeasible;
  if (!e.fitError.empty()) j["fitError"] = e.fitError;
  if (!e.preFilterRejection.empty()) j["preFilterRejection"] = e.preFilterRejection;
  if (e.preFilterNodes) j["preFilterNodes"] = *e.preFilterNodes;
  j["selected"] = e.selected;
  if (e.preemption) {
    json p = {{"plugin", e.preemption->plugin}};
    if (!e.preemption->node.empty()) {
      p["node"] = e.preemption->node;
      p["victims"] = e.preemption->victims;
    } else {
      p["message"] = e.preemption->message;
    }
    j["preemption"] = std::move(p);
  }
  json feasible = json::array();
  for (const auto& n : e.feasible) {
    json scores = json::array();
    for (const auto& s : n.scores) {
      scores.push_back({{"plugin", s.plugin},
                        {"raw", s.raw},
                        {"normalized", s.normalized},
                        {"weight", s.weight},
                        {"weighted", s.normalized * s.weight}});
      if (!s.detail.empty()) scores.back()["detail"] = s.detail;
    }
    feasible.push_back({{"node", n.node}, {"total", n.total}, {"scores", std::move(scores)}});
  }
  j["feasible"] = std::move(feasible);
  json filtered = json::array();
  for (const auto& n : e.filtered) {
    json rejections = json::array();
    for (const auto& r : n.rejections) {
      json rj = {{"plugin", r.plugin}, {"code", r.code}, {"reasons", r.reasons}};
      if (!r.shortfalls.empty()) {
        json sf = json::array();
        for (const auto& f : r.shortfalls) {
          sf.push_back({{"resource", f.resource},
                        {"requested", formatQuantity(f.resource, f.requested)},
                        {"allocatable", formatQuantity(f.resource, f.allocatable)},
                        {"inUse", formatQuantity(f.resource, f.inUse)},
                        {"free", formatQuantity(f.resource,
                                                std::max<int64_t>(0, f.allocatable - f.inUse))}});
        }
        rj["shortfall"] = std::move(sf);
      }
      if (!r.details.empty()) rj["details"] = r.details;
      rejections.push_back(std::move(rj));
    }
    filtered.push_back({{"node", n.node}, {"rejections", std::move(rejections)}});
  }
  j["filtered"] = std::move(filtered);
  if (e.group) j["podGroup"] = toJson(*e.group);
  return j;
}

std::string toTable(const Explanation& e, size_t maxRows) {
  std::ostringstream out;
  out << "Pod " << e.pod << " (profile " << e.profile << ")";
  if (!e.boundTo.empty()) out << ", bound to " << e.boundTo;
  out << "\n";
  if (!e.fitError.empty()) out << e.fitError << "\n";
  const size_t evaluated = e.feasible.size() + e.filtered.size();
  out << e.feasible.size() << " of " << evaluated << " nodes fit";
  if (evaluated < static_cast<size_t>(e.numNodes)) out << " (" << e.numNodes << " in the cache)";
  if (e.cycleStopsAfterFeasible < e.numNodes) {
    out << " (a scheduling cycle stops after " << e.cycleStopsAfterFeasible << " feasible)";
  }
  out << "\n";
  if (!e.preFilterRejection.empty())
    out << "PreFilter rejected every node: " << e.preFilterRejection << "\n";

  // Reasons with counts and a few example nodes each.
  // Under each reason, the details of its example nodes.
  using Rejected = std::pair<const std::string*, const Explanation::Rejection*>;
  std::map<std::string, std::vector<Rejected>> byReason;
  for (const auto& n : e.filtered) {
    for (const auto& r : n.rejections) {
      for (const auto& reason : r.reasons)
        byReason[r.plugin + ": " + reason].push_back({&n.node, &r});
    }
  }
  if (!byReason.empty()) {
    out << "\nRejections (plugin: reason - nodes):\n";
    for (const auto& [reason, nodes] : byReason) {
      out << "  " << reason << " - " << nodes.size() << " (";
      for (size_t i = 0; i < nodes.size() && i < 3; ++i) out << (i ? ", " : "") << *nodes[i].first;
      out << (nodes.size() > 3 ? ", ...)" : ")") << "\n";
      for (size_t i = 0; i < nodes.size() && i < 3; ++i) {
        for (const auto& d : nodes[i].second->details)
          out << "    " << *nodes[i].first << ": " << d << "\n";
      }
    }
  }

  // The closest nodes: those one Filter plugin rejects, with what is missing.
  std::vector<std::string> closest;
  for (const auto& n : e.filtered) {
    if (n.rejections.size() != 1) continue;
    const auto& r = n.rejections.front();
    std::string line = n.node + ": ";
    if (!r.shortfalls.empty()) {
      for (size_t i = 0; i < r.shortfalls.size(); ++i) {
        const auto& f = r.shortfalls[i];
        line += (i ? "; " : "") + std::string("Insufficient ") + f.resource + ": needs " +
                formatQuantity(f.resource, f.requested) + ", free " +
                formatQuantity(f.resource, std::max<int64_t>(0, f.allocatable - f.inUse));
      }
    } else {
      for (size_t i = 0; i < r.reasons.size(); ++i) line += (i ? ", " : "") + r.reasons[i];
      line += " (" + r.plugin + ")";
      if (!r.details.empty()) line += ": " + joined(r.details, "; ");
    }
    closest.push_back(std::move(line));
  }
  if (!closest.empty()) {
    out << "\nClosest nodes (one plugin rejects them):\n";
    for (size_t i = 0; i < closest.size() && i < maxRows; ++i) out << "  " << closest[i] << "\n";
    if (closest.size() > maxRows) out << "  ... " << closest.size() - maxRows << " more\n";
  }

  if (e.preemption) {
    if (!e.preemption->node.empty()) {
      out << "\n"
          << e.preemption->plugin << " would make room on " << e.preemption->node << " by evicting "
          << e.preemption->victims.size() << " pod(s):";
      for (const auto& v : e.preemption->victims) out << " " << v;
      out << "\n(nothing was evicted)\n";
    } else {
      std::string_view why = e.preemption->message;
      if (why.starts_with("preemption: ")) why.remove_prefix(12);
      out << "\n" << e.preemption->plugin << " would not help: " << why << "\n";
    }
  }

  if (!e.feasible.empty()) {
    out << "\nFeasible nodes, best first (weighted scores):\n";
    std::vector<std::string> header{"NODE", "TOTAL"};
    for (const auto& s : e.feasible.front().scores) header.push_back(s.plugin);
    std::vector<std::vector<std::string>> rows{header};
    for (size_t i = 0; i < e.feasible.size() && i < maxRows; ++i) {
      const auto& n = e.feasible[i];
      std::vector<std::string> row{n.node, std::to_string(n.total)};
      for (const auto& s : n.scores) row.push_back(std::to_string(s.normalized * s.weight));
      rows.push_back(std::move(row));
    }
    std::vector<size_t> width(header.size(), 0);
    for (const auto& row : rows) {
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    }
    for (const auto& row : rows) {
      std::string line = " ";
      for (size_t c = 0; c < row.size(); ++c) {
        line += " " + row[c] + std::string(width[c] - row[c].size(), ' ');
      }
      while (line.back() == ' ') line.pop_back();
      out << line << "\n";
    }
    if (e.feasible.size() > maxRows) out << "  ... " << e.feasible.size() - maxRows << " more\n";
    // What scores were computed from (ScoreExplainer), per plugin and node.
    bool titled = false;
    for (size_t i = 0; i < e.feasible.size() && i < maxRows; ++i) {
      for (const auto& s : e.feasible[i].scores) {
        if (s.detail.empty()) continue;
        if (!titled) out << "\nScores from:\n";
        titled = true;
        out << "  " << e.feasible[i].node << " " << s.plugin << ": " << s.detail << "\n";
      }
    }
    out << "\nA cycle would pick " << (e.selected.size() == 1 ? "" : "one of ");
    for (size_t i = 0; i < e.selected.size(); ++i) out << (i ? ", " : "") << e.selected[i];
    out << "\n";
  }
  if (e.group) out << toTable(*e.group);
  return out.str();
}

std::string diagnosisAnnotation(const framework::Framework& fwk, const CycleState& state,
                                const framework::Diagnosis& diagnosis, int numAllNodes,
                                const api::Pod& pod, const NodeInfoLister& snapshot,
                                size_t maxBytes) {
  struct Reason {
    std::string plugin, reason;
    int count = 0;
    std::vector<std::string> examples;
    std::vector<std::pair<std::string, std::string>> details;  // example node -> its details
  };
  std::map<std::pair<std::string, std::string>, Reason> reasons;
  struct Close {
    double missing = 0;  // the largest missing share of a request
    const std::string* node = nullptr;
    std::vector<Explanation::Rejection::Shortfall> shortfalls;
    std::string text;
  };
  std::vector<Close> closest;
  const api::Resource requests = api::schedulingRequestsResource(pod, fwk.features());
  for (const auto& [node, status] : diagnosis.nodeToStatus) {
    for (const auto& r : status.reasons()) {
      auto& entry = reasons[{status.plugin(), r}];
      entry.plugin = status.plugin();
      entry.reason = r;
      ++entry.count;
      // The first five node names, whatever order the statuses come in.
      auto at = std::lower_bound(entry.examples.begin(), entry.examples.end(), node);
      if (at - entry.examples.begin() < 5) {
        entry.examples.insert(at, node);
        if (entry.examples.size() > 5) entry.examples.pop_back();
      }
    }
    if (!hasShortfall(status)) continue;
    const NodeInfo* ni = snapshot.get(node);
    if (ni == nullptr) continue;
    Close c{0, &node, shortfalls(status, requests, *ni), ""};
    if (c.shortfalls.empty()) continue;
    for (const auto& f : c.shortfalls) {
      const int64_t free = std::max<int64_t>(0, f.allocatable - f.inUse);
      if (f.requested > 0) {
        c.missing = std::max(
            c.missing, static_cast<double>(f.requested - free) / static_cast<double>(f.requested));
      }
    }
    closest.push_back(std::move(c));
  }
  // The five closest; their text only (quantities are formatted for five nodes, not all).
  const auto nearer = [](const Close& a, const Close& b) {
    return a.missing != b.missing ? a.missing < b.missing : *a.node < *b.node;
  };
  const size_t keep = std::min<size_t>(5, closest.size());
  std::partial_sort(closest.begin(), closest.begin() + static_cast<std::ptrdiff_t>(keep),
                    closest.end(), nearer);
  closest.resize(keep);
  for (Close& c : closest) {
    for (const auto& f : c.shortfalls) {
      c.text += (c.text.empty() ? "" : "; ") + f.resource + ": needs " +
                formatQuantity(f.resource, f.requested) + ", free " +
                formatQuantity(f.resource, std::max<int64_t>(0, f.allocatable - f.inUse));
    }
  }
  // The details of the example nodes only: the cost stays bounded by five nodes per reason.
  std::map<std::string, std::string, std::less<>> detailOf;
  for (auto& [key, r] : reasons) {
    if (r.plugin.empty() || r.reason.starts_with(kInsufficient)) continue;
    for (const auto& node : r.examples) {
      auto known = detailOf.find(node);
      if (known == detailOf.end()) {
        const NodeInfo* ni = snapshot.get(node);
        auto st = diagnosis.nodeToStatus.find(node);
        std::string text;
        if (st != diagnosis.nodeToStatus.end() && !st->second.details().empty()) {
          text = joined(st->second.details(), "; ");
        } else if (ni != nullptr && st != diagnosis.nodeToStatus.end()) {
          text = joined(fwk.explainRejection(state, st->second, pod, *ni), "; ");
        }
        known = detailOf.emplace(node, truncated(std::move(text), kMaxDetailBytes)).first;
      }
      if (!known->second.empty()) r.details.emplace_back(node, known->second);
    }
  }
  std::vector<Reason> ordered;
  for (auto& [key, r] : reasons) ordered.push_back(std::move(r));
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Reason& a, const Reason& b) { return a.count > b.count; });

  auto render = [&](size_t examples, size_t numClosest, bool details) {
    json j;
    j["nodes"] = numAllNodes;
    if (!diagnosis.preFilterMsg.empty()) j["preFilter"] = diagnosis.preFilterMsg;
    json rs = json::array();
    for (const auto& r : ordered) {
      json rj = {{"plugin", r.plugin}, {"reason", r.reason}, {"count", r.count}};
      if (examples > 0) {
        rj["examples"] = std::vector<std::string>(
            r.examples.begin(), r.examples.begin() + static_cast<std::ptrdiff_t>(
                                                         std::min(examples, r.examples.size())));
      }
      if (details && examples > 0 && !r.details.empty()) {
        json dj = json::object();
        for (const auto& [node, text] : r.details) {
          const auto shown = r.examples.begin() +
                             static_cast<std::ptrdiff_t>(std::min(examples, r.examples.size()));
          if (std::find(r.examples.begin(), shown, node) != shown) dj[node] = text;
        }
        if (!dj.empty()) rj["details"] = std::move(dj);
      }
      rs.push_back(std::move(rj));
    }
    j["reasons"] = std::move(rs);
    if (numClosest > 0 && !closest.empty()) {
      json cs = json::array();
      for (size_t i = 0; i < closest.size() && i < numClosest; ++i) {
        cs.push_back({{"node", *closest[i].node}, {"shortfall", closest[i].text}});
      }
      j["closest"] = std::move(cs);
    }
    return j.dump();
  };
  struct Fit {
    size_t examples, closest;
    bool details;
  };
  for (auto [examples, numClosest, details] :
       {Fit{5, 5, true}, Fit{5, 0, true}, Fit{1, 0, true}, Fit{1, 0, false}, Fit{0, 0, false}}) {
    std::string out = render(examples, numClosest, details);
    if (out.size() <= maxBytes) return out;
  }
  return json({{"nodes", numAllNodes}, {"truncated", true}}).dump();
}

}  // namespace ksched::scheduler
