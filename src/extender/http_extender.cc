#include "extender/http_extender.h"

#include <httplib.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include <ksched/api/utf8.h>

#include "client/tls.h"
#include "client/url.h"
#include "extender/encode.h"

namespace ksched::extender {
namespace {

using nlohmann::json;

using api::equalFold;

// The member `name` of an object: the exact key, else the first key equal ignoring case (Go's
// encoding/json matching); nullptr when absent or null.
const json* member(const json& obj, std::string_view name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(std::string(name));
  if (it == obj.end()) {
    for (auto i = obj.begin(); i != obj.end(); ++i) {
      if (equalFold(i.key(), name)) {
        it = i;
        break;
      }
    }
  }
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string asString(const json& j, std::string_view field) {
  if (!j.is_string()) throw std::runtime_error(std::string(field) + ": expected a string");
  return j.get<std::string>();
}

int64_t asInt(const json& j, std::string_view field) {
  if (!j.is_number_integer())
    throw std::runtime_error(std::string(field) + ": expected an integer");
  return j.get<int64_t>();
}

std::vector<std::string> stringList(const json& j, std::string_view field) {
  if (!j.is_array()) throw std::runtime_error(std::string(field) + ": expected an array");
  std::vector<std::string> out;
  out.reserve(j.size());
  for (const auto& e : j) out.push_back(asString(e, field));
  return out;
}

FailedNodesMap failedMap(const json& j, std::string_view field) {
  if (!j.is_object()) throw std::runtime_error(std::string(field) + ": expected an object");
  FailedNodesMap out;
  for (const auto& [node, reason] : j.items()) {
    out.emplace(node, asString(reason, std::string(field) + "." + node));
  }
  return out;
}

// Text of an extender's answer quoted in a message: valid UTF-8 (a message ends up in events
// and pod conditions, which are JSON) and at most kMaxQuotedBytes.
constexpr size_t kMaxQuotedBytes = 256;
// The largest answer read: a NodeList of 15 000 nodes is about 50 MiB.
constexpr size_t kMaxAnswerBytes = size_t{256} << 20;
std::string boundedText(std::string_view outside) {
  return api::truncateUtf8(api::toValidUtf8(outside), kMaxQuotedBytes);
}

std::string readFile(const std::string& path, const std::string& field) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ExtenderError(field + ": cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The first address of `host` as text, or `host` itself when it does not resolve.
std::string resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return host;
  char buf[NI_MAXHOST];
  std::string out = host;
  if (getnameinfo(res->ai_addr, res->ai_addrlen, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST) ==
      0) {
    out = buf;
  }
  freeaddrinfo(res);
  return out;
}

json encodeNodeList(const std::vector<const NodeInfo*>& nodes) {
  json items = json::array();
  for (const NodeInfo* n : nodes) {
    if (n->node() != nullptr) items.push_back(encodeNode(*n->node()));
  }
  return {{"metadata", json::object()}, {"items", std::move(items)}};
}

}  // namespace

// ---- wire encoding ----

json encodeArgs(const api::Pod& pod, const std::vector<const NodeInfo*>& nodes,
                bool nodeCacheCapable) {
  json j = {{"pod", encodePod(pod)}};
  if (nodeCacheCapable) {
    json names = json::array();
    for (const NodeInfo* n : nodes) names.push_back(n->name());
    j["nodenames"] = std::move(names);
  } else {
    j["nodes"] = encodeNodeList(nodes);
  }
  return j;
}

FilterResult decodeFilterResult(const json& j) {
  if (!j.is_object()) throw std::runtime_error("ExtenderFilterResult: expected an object");
  FilterResult r;
  if (const json* nodes = member(j, "nodes")) {
    const json* items = member(*nodes, "items");
    std::vector<std::string> names;
    if (items != nullptr) {
      if (!items->is_array()) throw std::runtime_error("nodes.items: expected an array");
      for (const auto& item : *items) {
        const json* meta = member(item, "metadata");
        const json* name = meta == nullptr ? nullptr : member(*meta, "name");
        names.push_back(name == nullptr ? std::string() : asString(*name, "nodes.items.name"));
      }
    }
    r.nodes = std::move(names);
  }
  if (const json* names = member(j, "nodenames")) r.nodeNames = stringList(*names, "nodenames");
  if (const json* f = member(j, "failedNodes")) r.failedNodes = failedMap(*f, "failedNodes");
  if (const json* f = member(j, "failedAndUnresolvableNodes")) {
    r.failedAndUnresolvableNodes = failedMap(*f, "failedAndUnresolvableNodes");
  }
  if (const json* e = member(j, "error")) r.error = asString(*e, "error");
  return r;
}

std::vector<HostPriority> decodeHostPriorityList(const json& j) {
  std::vector<HostPriority> out;
  if (j.is_null()) return out;
  if (!j.is_array()) throw std::runtime_error("HostPriorityList: expected an array");
  out.reserve(j.size());
  for (const auto& e : j) {
    HostPriority hp;
    if (const json* h = member(e, "host")) hp.host = asString(*h, "host");
    if (const json* s = member(e, "score")) hp.score = asInt(*s, "score");
    out.push_back(std::move(hp));
  }
  return out;
}

json encodeBindingArgs(const api::Pod& pod, const std::string& node) {
  return {{"podName", pod.metadata.name},
          {"podNamespace", pod.metadata.namespace_},
          {"podUID", pod.metadata.uid},
          {"node", node}};
}

std::string decodeBindingResult(const json& j) {
  if (j.is_null()) return {};
  if (!j.is_object()) throw std::runtime_error("ExtenderBindingResult: expected an object");
  const json* e = member(j, "error");
  return e == nullptr ? std::string() : asString(*e, "error");
}

json encodePreemptionArgs(const api::Pod& pod, const std::map<std::string, Victims>& victims,
                          bool nodeCacheCapable) {
  json byNode = json::object();
  for (const auto& [node, v] : victims) {
    json pods = json::array();
    for (const auto& pi : v.pods) {
      pods.push_back(nodeCacheCapable ? json{{"uid", pi->pod->metadata.uid}} : encodePod(*pi->pod));
    }
    byNode[node] = {{"pods", std::move(pods)}, {"numPDBViolations", v.numPDBViolations}};
  }
  return {{"pod", encodePod(pod)},
          {nodeCacheCapable ? "nodeNameToMetaVictims" : "nodeNameToVictims", std::move(byNode)}};
}

std::map<std::string, MetaVictims> decodePreemptionResult(const json& j) {
  std::map<std::string, MetaVictims> out;
  if (j.is_null()) return out;
  if (!j.is_object()) throw std::runtime_error("ExtenderPreemptionResult: expected an object");
  const json* byNode = member(j, "nodeNameToMetaVictims");
  if (byNode == nullptr) return out;
  if (!byNode->is_object()) throw std::runtime_error("nodeNameToMetaVictims: expected an object");
  for (const auto& [node, v] : byNode->items()) {
    MetaVictims mv;
    if (!v.is_null()) {
      if (const json* pods = member(v, "pods")) {
        if (!pods->is_array())
          throw std::runtime_error("nodeNameToMetaVictims.pods: expected an array");
        for (const auto& p : *pods) {
          const json* uid = member(p, "uid");
          mv.podUIDs.push_back(uid == nullptr ? std::string() : asString(*uid, "uid"));
        }
      }
      if (const json* n = member(v, "numPDBViolations")) {
        mv.numPDBViolations = asInt(*n, "numPDBViolations");
      }
    }
    out.emplace(node, std::move(mv));
  }
  return out;
}

// ---- Extender ----

HttpExtender::HttpExtender(const config::Extender& config)
    : config_(config),
      timeout_(config.httpTimeout.count() == 0
                   ? std::chrono::duration_cast<std::chrono::nanoseconds>(kDefaultHTTPTimeout)
                   : config.httpTimeout) {
  std::string url = config_.urlPrefix;
  while (!url.empty() && url.back() == '/') url.pop_back();
  baseUrl_ = url;
  std::string error;
  const auto parsed = client::parseHttpUrl(url, error);
  if (!parsed) {
    // Go's client reports a scheme it cannot speak on every request, not at start-up.
    if (error.starts_with("unsupported protocol scheme")) {
      schemeError_ = error;
      return;
    }
    throw ExtenderError("urlPrefix: " + error + " in " + url);
  }
  https_ = parsed->https;
  host_ = parsed->host;
  port_ = parsed->port;
  basePath_ = parsed->path;

  // Upstream makeTransport: the TLS config as given; HTTPS without a CA skips verification.
  if (config_.tlsConfig) {
    const auto& tls = *config_.tlsConfig;
    insecure_ = tls.insecure;
    serverName_ = tls.serverName;
    caPem_ = !tls.caData.empty()   ? tls.caData
             : !tls.caFile.empty() ? readFile(tls.caFile, "tlsConfig.caFile")
                                   : std::string();
    certPem_ = !tls.certData.empty()   ? tls.certData
               : !tls.certFile.empty() ? readFile(tls.certFile, "tlsConfig.certFile")
                                       : std::string();
    keyPem_ = !tls.keyData.empty()   ? tls.keyData
              : !tls.keyFile.empty() ? readFile(tls.keyFile, "tlsConfig.keyFile")
                                     : std::string();
  }
  if (config_.enableHTTPS && caPem_.empty()) insecure_ = true;
  if (certPem_.empty() != keyPem_.empty()) {
    throw ExtenderError(
        "tlsConfig: a client certificate needs its key and the key its certificate");
  }
  if (!caPem_.empty()) {
    X509_STORE* store = client::storeFromPem(caPem_);
    if (store == nullptr) throw ExtenderError("tlsConfig: the CA holds no PEM certificate");
    X509_STORE_free(store);
  }
  if (!certPem_.empty() && client::newSSLClient(host_, port_, certPem_, keyPem_) == nullptr) {
    throw ExtenderError("tlsConfig: the client certificate or key is not valid PEM");
  }
}

bool HttpExtender::isInterested(const api::Pod& pod) const {
  if (config_.managedResources.empty()) return true;
  auto managed = [&](const api::ResourceList& list) {
    for (const auto& r : config_.managedResources) {
      if (list.contains(r.name)) return true;
    }
    return false;
  };
  auto any = [&](const std::vector<api::Container>& cs) {
    return std::any_of(cs.begin(), cs.end(), [&](const api::Container& c) {
      return managed(c.resources.requests) || managed(c.resources.limits);
    });
  };
  return any(pod.spec.containers) || any(pod.spec.initContainers);
}

Status HttpExtender::send(const std::string& verb, const json& args, json& result) const {
  const std::string url = baseUrl_ + "/" + verb;
  if (!schemeError_.empty()) return Status::error("Post \"" + url + "\": " + schemeError_);
  std::unique_ptr<httplib::ClientImpl> cli;
  if (https_) {
    const std::string& tlsHost = serverName_.empty() ? host_ : serverName_;
    std::unique_ptr<httplib::SSLClient> ssl =
        client::newSSLClient(tlsHost, port_, certPem_, keyPem_);
    if (ssl == nullptr)
      return Status::error("Post \"" + url + "\": client certificate or key is not valid PEM");
    if (tlsHost != host_) ssl->set_hostname_addr_map({{tlsHost, resolve(host_)}});
    if (insecure_) {
      ssl->enable_server_certificate_verification(false);
    } else if (!caPem_.empty()) {
      client::trustOnly(*ssl, client::storeFromPem(caPem_));
    }
    cli = std::move(ssl);
  } else {
    cli = std::make_unique<httplib::ClientImpl>(host_, port_);
  }
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(timeout_);
  cli->set_connection_timeout(micros);
  cli->set_read_timeout(micros);
  cli->set_write_timeout(micros);
  httplib::Request req;
  req.method = "POST";
  req.path = basePath_ + "/" + verb;
  req.set_header("Content-Type", "application/json");
  req.body = args.dump(-1, ' ', false, json::error_handler_t::replace);
  // The answer is read up to kMaxAnswerBytes: an extender cannot make the scheduler hold more.
  std::string answer;
  bool tooLarge = false;
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (answer.size() + n > kMaxAnswerBytes) {
      tooLarge = true;
      return false;
    }
    answer.append(data, n);
    return true;
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  if (!cli->send(req, res, err)) {
    if (tooLarge) {
      return Status::error("Post \"" + url + "\": the answer is larger than " +
                           std::to_string(kMaxAnswerBytes >> 20) + " MiB");
    }
    return Status::error("Post \"" + url + "\": " + httplib::to_string(err));
  }
  if (res.status != 200) {
    return Status::error("failed " + verb + " with extender at URL " + url + ", code " +
                         std::to_string(res.status));
  }
  try {
    result = json::parse(answer);
  } catch (const json::exception& e) {
    return Status::error("decoding the answer of " + verb + " from extender at URL " + url + ": " +
                         boundedText(e.what()));
  }
  return {};
}

Status HttpExtender::filter(const api::Pod& pod, std::vector<const NodeInfo*>& nodes,
                            FailedNodesMap& failed, FailedNodesMap& failedAndUnresolvable) const {
  if (!supportsFilter()) return {};
  json answer;
  if (Status s = send(config_.filterVerb, encodeArgs(pod, nodes, config_.nodeCacheCapable), answer);
      !s.ok()) {
    return s;
  }
  FilterResult r;
  try {
    r = decodeFilterResult(answer);
  } catch (const std::exception& e) {
    return Status::error("extender \"" + name() + "\": " + boundedText(e.what()));
  }
  if (!r.error.empty()) return Status::error(boundedText(r.error));
  std::unordered_map<std::string_view, const NodeInfo*> byName;
  byName.reserve(nodes.size());
  for (const NodeInfo* n : nodes) byName.emplace(n->name(), n);
  const std::optional<std::vector<std::string>>& passed =
      config_.nodeCacheCapable && r.nodeNames ? r.nodeNames : r.nodes;
  std::vector<const NodeInfo*> kept;
  if (passed) {
    kept.reserve(passed->size());
    for (const auto& nodeName : *passed) {
      auto it = byName.find(nodeName);
      if (it == byName.end()) {
        return Status::error("extender \"" + name() + "\" claims a filtered node \"" +
                             boundedText(nodeName) +
                             "\" which is not found in the input node list");
      }
      kept.push_back(it->second);
    }
  }
  nodes = std::move(kept);
  // Reasons become pod conditions and events: bounded like every quoted answer.
  for (auto& [_, reason] : r.failedNodes) reason = boundedText(reason);
  for (auto& [_, reason] : r.failedAndUnresolvableNodes) reason = boundedText(reason);
  failed = std::move(r.failedNodes);
  failedAndUnresolvable = std::move(r.failedAndUnresolvableNodes);
  return {};
}

Status HttpExtender::prioritize(const api::Pod& pod, const std::vector<const NodeInfo*>& nodes,
                                std::vector<HostPriority>& scores) const {
  scores.clear();
  if (!supportsPrioritize()) {
    for (const NodeInfo* n : nodes) scores.push_back({n->name(), 0});
    return {};
  }
  json answer;
  if (Status s =
          send(config_.prioritizeVerb, encodeArgs(pod, nodes, config_.nodeCacheCapable), answer);
      !s.ok()) {
    return s;
  }
  try {
    scores = decodeHostPriorityList(answer);
  } catch (const std::exception& e) {
    return Status::error("extender \"" + name() + "\": " + boundedText(e.what()));
  }
  return {};
}

Status HttpExtender::bind(const api::Pod& pod, const std::string& node) const {
  if (!isBinder()) return Status::error("unexpected empty bindVerb in extender");
  json answer;
  if (Status s = send(config_.bindVerb, encodeBindingArgs(pod, node), answer); !s.ok()) return s;
  std::string err;
  try {
    err = decodeBindingResult(answer);
  } catch (const std::exception& e) {
    return Status::error("extender \"" + name() + "\": " + boundedText(e.what()));
  }
  if (!err.empty()) return Status::error(boundedText(err));
  return {};
}

Status HttpExtender::processPreemption(const api::Pod& pod, std::map<std::string, Victims>& victims,
                                       const NodeInfoLister& snapshot) const {
  if (!supportsPreemption()) {
    return Status::error("preempt verb is not defined for extender " + name() +
                         " but run into ProcessPreemption");
  }
  json answer;
  if (Status s = send(config_.preemptVerb,
                      encodePreemptionArgs(pod, victims, config_.nodeCacheCapable), answer);
      !s.ok()) {
    return s;
  }
  std::map<std::string, MetaVictims> meta;
  try {
    meta = decodePreemptionResult(answer);
  } catch (const std::exception& e) {
    return Status::error("extender \"" + name() + "\": " + boundedText(e.what()));
  }
  std::map<std::string, Victims> out;
  for (const auto& [node, mv] : meta) {
    const NodeInfo* ni = snapshot.get(node);
    if (ni == nullptr) {
      return Status::error("nodeinfo not found for node name \"" + boundedText(node) + "\"");
    }
    Victims v;
    v.numPDBViolations = mv.numPDBViolations;
    for (const auto& uid : mv.podUIDs) {
      auto it = std::find_if(ni->pods().begin(), ni->pods().end(),
                             [&](const PodInfoPtr& pi) { return pi->pod->metadata.uid == uid; });
      if (it == ni->pods().end()) {
        return Status::error(
            "extender: " + name() + " claims to preempt pod (UID: " + boundedText(uid) +
            ") on node: " + boundedText(node) + ", but the pod is not found on that node");
      }
      v.pods.push_back(*it);
    }
    out.emplace(node, std::move(v));
  }
  victims = std::move(out);
  return {};
}

// ---- building ----

ExtenderList buildExtenders(const std::vector<config::Extender>& configs) {
  ExtenderList out;
  out.reserve(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    try {
      out.push_back(std::make_shared<const HttpExtender>(configs[i]));
    } catch (const ExtenderError& e) {
      throw ExtenderError("extenders[" + std::to_string(i) + "]." + e.what());
    }
  }
  return out;
}

}  // namespace ksched::extender
