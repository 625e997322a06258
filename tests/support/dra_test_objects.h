// The DRA allocator's test objects (tests and benchmark): builders of slices, classes, claims and
// results in the style of upstream's allocator_testing.go, and a stand-in CEL compiler.
//
// fakeCompile understands the device selectors the tests use, in real CEL syntax, joined by
// "&&": device.driver == "d", device.allowMultipleAllocations == true|false,
// device.attributes["domain"].name (a bool attribute), device.attributes["domain"].name ==
// "s" | 42, device.capacity["domain"].name.compareTo(quantity("1Gi")) >= 0 (also with
// ["name"]). A missing attribute is a runtime error, "noSuchVar" a compile error ("undeclared
// reference"), anything else a compile error that says the stand-in lacks it. To run the tests
// against the real evaluator, pass `[&cache](auto e) { return cache.get(e); }` instead (a table
// case says `realCel`).
#pragma once

#include <cctype>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/resource.h>

#include "cel/cel.h"
#include "plugins/dynamic_resources/allocator.h"

namespace ksched::plugins::dra::testutil {

inline const std::string kDriverA = "driver-a";
inline const std::string kDriverB = "driver-b";
inline const std::string kClassA = "class-a";
inline const std::string kClassB = "class-b";
inline const std::string kNode1 = "node-1";
inline const std::string kNode2 = "node-2";
inline const std::string kRegion1 = "region-1";
inline const std::string kRegion2 = "region-2";
inline const std::string kFixedShareId = "fixed-share-id";

// ---- The CEL stand-in --------------------------------------------------------------------

namespace fakecel {

struct Term {
  enum Kind { kDriver, kMulti, kAttrBool, kAttrString, kAttrInt, kCapacityAtLeast } kind;
  std::string domain, name, text;
  int64_t number = 0;
  bool flag = false;
  api::Quantity quantity;
};

// true/false, or nullopt with *error set.
inline std::optional<bool> evalTerm(const Term& t, const cel::DeviceView& d, std::string* error) {
  auto attribute = [&]() -> const api::DeviceAttribute* {
    auto it = d.attributes->find(t.domain + "/" + t.name);
    if (it == d.attributes->end() && t.domain == d.driver) it = d.attributes->find(t.name);
    return it == d.attributes->end() ? nullptr : &it->second;
  };
  switch (t.kind) {
    case Term::kDriver:
      return d.driver == t.text;
    case Term::kMulti:
      return d.allowMultipleAllocations == t.flag;
    case Term::kCapacityAtLeast: {
      auto it = d.capacity->find(t.domain + "/" + t.name);
      if (it == d.capacity->end() && t.domain == d.driver) it = d.capacity->find(t.name);
      if (it == d.capacity->end()) {
        *error = "no such key: " + t.name;
        return std::nullopt;
      }
      return it->second.value >= t.quantity;
    }
    default:
      break;
  }
  const api::DeviceAttribute* a = attribute();
  if (!a) {
    *error = "no such key: " + t.name;
    return std::nullopt;
  }
  if (t.kind == Term::kAttrBool) {
    if (const auto* b = std::get_if<bool>(&a->value)) return *b;
  } else if (t.kind == Term::kAttrString) {
    if (const auto* s = std::get_if<std::string>(&a->value)) return *s == t.text;
  } else if (const auto* i = std::get_if<int64_t>(&a->value)) {
    return *i == t.number;
  }
  *error = "no such overload";
  return std::nullopt;
}

class Program final : public cel::Program {
 public:
  explicit Program(std::vector<Term> terms) : terms_(std::move(terms)) {}
  [[nodiscard]] cel::EvalResult evaluate(const cel::DeviceView& device,
                                         int64_t /*costLimit*/) const override {
    cel::EvalResult r;
    std::string error;
    bool anyFalse = false;
    for (const auto& t : terms_) {
      std::string e;
      const auto v = evalTerm(t, device, &e);
      if (!v && error.empty()) error = e;
      if (v && !*v) anyFalse = true;
    }
    r.value = !anyFalse && error.empty();
    if (!anyFalse) r.error = error;  // CEL's &&: false wins over an error
    r.cost = static_cast<int64_t>(terms_.size());
    return r;
  }

 private:
  std::vector<Term> terms_;
};

}  // namespace fakecel

inline cel::CompileResult fakeCompile(std::string_view expression) {
  static const std::regex driver(R"re(^device\.driver == "([^"]*)"$)re");
  static const std::regex multi(R"re(^device\.allowMultipleAllocations == (true|false)$)re");
  static const std::regex attrString(
      R"re(^device\.attributes\["([^"]+)"\]\.(\w+) == "([^"]*)"$)re");
  static const std::regex attrInt(R"re(^device\.attributes\["([^"]+)"\]\.(\w+) == (-?\d+)$)re");
  static const std::regex attrBool(R"re(^device\.attributes\["([^"]+)"\]\.(\w+)$)re");
  static const std::regex capacity(
      R"re(^device\.capacity\["([^"]+)"\](?:\.(\w+)|\["([^"]+)"\])\.compareTo\(quantity\("([^"]+)"\)\) >= 0$)re");
  cel::CompileResult out;
  std::vector<fakecel::Term> terms;
  std::string text(expression);
  size_t start = 0;
  while (true) {
    const size_t end = text.find(" && ", start);
    const std::string part = text.substr(start, end == std::string::npos ? end : end - start);
    std::smatch m;
    fakecel::Term t{};
    if (part == "noSuchVar") {
      out.error =
          "compilation failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar' (in "
          "container '')";
      return out;
    } else if (std::regex_match(part, m, driver)) {
      t.kind = fakecel::Term::kDriver;
      t.text = m[1];
    } else if (std::regex_match(part, m, multi)) {
      t.kind = fakecel::Term::kMulti;
      t.flag = m[1] == "true";
    } else if (std::regex_match(part, m, attrString)) {
      t = {fakecel::Term::kAttrString, m[1], m[2], m[3]};
    } else if (std::regex_match(part, m, attrInt)) {
      t = {fakecel::Term::kAttrInt, m[1], m[2], ""};
      t.number = std::stoll(m[3]);
    } else if (std::regex_match(part, m, attrBool)) {
      t = {fakecel::Term::kAttrBool, m[1], m[2], ""};
    } else if (std::regex_match(part, m, capacity)) {
      t = {fakecel::Term::kCapacityAtLeast, m[1], m[2].matched ? m[2].str() : m[3].str(), ""};
      t.quantity = api::Quantity::parse(m[4].str());
    } else {
      out.error = "the test CEL stand-in does not support: " + part;
      return out;
    }
    terms.push_back(std::move(t));
    if (end == std::string::npos) break;
    start = end + 4;
  }
  out.program = std::make_shared<fakecel::Program>(std::move(terms));
  return out;
}

// ---- Nodes, classes, slices ----------------------------------------------------------------

inline api::Node node(const std::string& name, const std::string& region) {
  api::Node n;
  n.metadata.name = name;
  n.metadata.labels = {{"region", region}, {"planet", "earth"}};
  return n;
}

inline api::DeviceSelector sel(std::string expression) { return {std::move(expression)}; }

inline api::DeviceClass deviceClass(const std::string& name, const std::string& driver) {
  api::DeviceClass c;
  c.metadata.name = name;
  c.spec.selectors = {sel("device.driver == \"" + driver + "\"")};
  return c;
}

// Opaque parameters {"<attribute>":"<attribute>Value"} for `driver`.
inline api::DeviceConfiguration opaque(const std::string& driver, const std::string& attribute,
                                       std::vector<std::string> requests = {}) {
  return {std::move(requests), driver, "{\"" + attribute + "\":\"" + attribute + "Value\"}"};
}

inline api::DeviceClass classWithConfig(const std::string& name, const std::string& driver,
                                        const std::string& attribute) {
  api::DeviceClass c = deviceClass(name, driver);
  c.spec.config = {opaque(driver, attribute)};
  return c;
}

inline api::NodeSelector labelSelector(const std::string& key, std::vector<std::string> values) {
  api::NodeSelector s;
  s.nodeSelectorTerms.push_back({{{key, api::SelectorOperator::kIn, std::move(values)}}, {}});
  return s;
}

inline api::NodeSelector localNode(const std::string& name) {
  api::NodeSelector s;
  s.nodeSelectorTerms.push_back({{}, {{"metadata.name", api::SelectorOperator::kIn, {name}}}});
  return s;
}

// A device, built fluently: dev("device-1").attr("numa", int64_t{1}).cap("memory", "1Gi").
struct Dev {
  api::Device d;
  explicit Dev(std::string name) { d.name = std::move(name); }
  Dev& attr(const std::string& name, int64_t v) { return set(name, {v}); }
  Dev& attr(const std::string& name, bool v) { return set(name, {v}); }
  Dev& attr(const std::string& name, const char* v) { return set(name, {std::string(v)}); }
  Dev& version(const std::string& name, std::string v) {
    return set(name, {api::DeviceAttribute::Version{std::move(v)}});
  }
  // The list forms (DRAListTypeAttributes): dev("cpu-0").ints("numa", {0, 1}).
  Dev& ints(const std::string& name, api::DeviceAttribute::Ints v) {
    return set(name, {std::move(v)});
  }
  Dev& bools(const std::string& name, api::DeviceAttribute::Bools v) {
    return set(name, {std::move(v)});
  }
  Dev& strings(const std::string& name, api::DeviceAttribute::Strings v) {
    return set(name, {std::move(v)});
  }
  Dev& versions(const std::string& name, const std::vector<std::string>& v) {
    api::DeviceAttribute::Versions out;
    for (const auto& s : v) out.push_back({s});
    return set(name, {std::move(out)});
  }
  Dev& cap(const std::string& name, std::string_view q) {
    d.capacity[name] = {api::Quantity::parse(q), std::nullopt};
    return *this;
  }
  Dev& capPolicy(const std::string& name, std::string_view q, api::CapacityRequestPolicy p) {
    d.capacity[name] = {api::Quantity::parse(q), std::move(p)};
    return *this;
  }
  // consumesCounters; with capFromCounters the counters also become the device's capacity.
  Dev& consumes(const std::string& set, std::vector<std::pair<std::string, std::string>> counters,
                bool capFromCounters = false) {
    api::DeviceCounterConsumption c{set, {}};
    for (const auto& [n, q] : counters) {
      c.counters[n] = api::Quantity::parse(q);
      if (capFromCounters) d.capacity[n] = {api::Quantity::parse(q), std::nullopt};
    }
    d.consumesCounters.push_back(std::move(c));
    return *this;
  }
  Dev& taint(api::DeviceTaint t) {
    d.taints.push_back(std::move(t));
    return *this;
  }
  Dev& onNode(std::string n) {
    d.nodeName = std::move(n);
    return *this;
  }
  Dev& onAllNodes() {
    d.allNodes = true;
    return *this;
  }
  Dev& onNodes(api::NodeSelector s) {
    d.nodeSelector = std::move(s);
    return *this;
  }
  Dev& binding(std::vector<std::string> conditions, std::vector<std::string> failures) {
    d.bindingConditions = std::move(conditions);
    d.bindingFailureConditions = std::move(failures);
    return *this;
  }
  Dev& bindsToNode() {
    d.bindsToNode = true;
    return *this;
  }
  Dev& multi() {
    d.allowMultipleAllocations = true;
    return *this;
  }
  operator api::Device() const { return d; }  // NOLINT(google-explicit-constructor)

 private:
  Dev& set(const std::string& name, api::DeviceAttribute a) {
    d.attributes[name] = std::move(a);
    return *this;
  }
};
inline Dev dev(std::string name) { return Dev(std::move(name)); }

// "device-<first>" .. "device-<first+count-1>".
inline std::vector<api::Device> devices(int count, int first = 0) {
  std::vector<api::Device> out;
  for (int i = first; i < first + count; ++i) out.push_back(dev("device-" + std::to_string(i)));
  return out;
}

// How a slice reaches nodes.
struct Reach {
  std::optional<std::string> nodeName;
  bool allNodes = false;
  bool perDevice = false;
  std::optional<api::NodeSelector> selector;
};
inline Reach onNode(std::string n) { return {std::move(n), false, false, std::nullopt}; }
inline Reach allNodes() { return {std::nullopt, true, false, std::nullopt}; }
inline Reach perDevice() { return {std::nullopt, false, true, std::nullopt}; }
inline Reach bySelector(api::NodeSelector s) { return {std::nullopt, false, false, std::move(s)}; }

inline api::ResourcePool pool(std::string name, int64_t count = 1, int64_t generation = 1) {
  return {std::move(name), generation, count};
}

inline api::ResourceSlice slice(std::string name, const Reach& reach, api::ResourcePool pool,
                                std::string driver, std::vector<api::Device> devices = {}) {
  api::ResourceSlice s;
  s.metadata.name = std::move(name);
  s.spec.driver = std::move(driver);
  s.spec.pool = std::move(pool);
  s.spec.nodeName = reach.nodeName;
  if (reach.allNodes) s.spec.allNodes = true;
  if (reach.perDevice) s.spec.perDeviceNodeSelection = true;
  s.spec.nodeSelector = reach.selector;
  s.spec.devices = std::move(devices);
  return s;
}

inline api::CounterSet counterSet(std::string name,
                                  std::vector<std::pair<std::string, std::string>> counters) {
  api::CounterSet c{std::move(name), {}};
  for (const auto& [n, q] : counters) c.counters[n] = api::Quantity::parse(q);
  return c;
}

inline api::ResourceSlice counterSlice(std::string name, const Reach& reach, api::ResourcePool pool,
                                       std::string driver, std::vector<api::CounterSet> sets) {
  api::ResourceSlice s = slice(std::move(name), reach, std::move(pool), std::move(driver));
  s.spec.sharedCounters = std::move(sets);
  return s;
}

// ---- Claims --------------------------------------------------------------------------------

inline api::ExactDeviceRequest exact(const std::string& cls, int64_t count,
                                     std::vector<api::DeviceSelector> selectors = {}) {
  api::ExactDeviceRequest e;
  e.deviceClassName = cls;
  e.count = count;
  e.selectors = std::move(selectors);
  return e;
}

inline api::DeviceRequest request(std::string name, const std::string& cls, int64_t count,
                                  std::vector<api::DeviceSelector> selectors = {}) {
  return {std::move(name), exact(cls, count, std::move(selectors)), {}};
}

inline api::DeviceRequest allRequest(std::string name, const std::string& cls,
                                     std::vector<api::DeviceSelector> selectors = {}) {
  api::DeviceRequest r = request(std::move(name), cls, 0, std::move(selectors));
  r.exactly->allocationMode = std::string(api::kAllocationModeAll);
  return r;
}

inline api::DeviceRequest withAdmin(api::DeviceRequest r) {
  r.exactly->adminAccess = true;
  return r;
}

inline api::DeviceRequest withTolerations(api::DeviceRequest r,
                                          std::vector<api::DeviceToleration> t) {
  r.exactly->tolerations = std::move(t);
  return r;
}

inline api::DeviceRequest withCapacity(api::DeviceRequest r, std::string name, std::string_view q) {
  r.exactly->capacity[std::move(name)] = api::Quantity::parse(q);
  return r;
}

inline api::DeviceSubRequest subRequest(std::string name, const std::string& cls, int64_t count,
                                        std::vector<api::DeviceSelector> selectors = {}) {
  return {std::move(name), exact(cls, count, std::move(selectors))};
}

inline api::DeviceSubRequest allSubRequest(std::string name, const std::string& cls,
                                           std::vector<api::DeviceSelector> selectors = {}) {
  api::DeviceSubRequest s = subRequest(std::move(name), cls, 0, std::move(selectors));
  s.request.allocationMode = std::string(api::kAllocationModeAll);
  return s;
}

inline api::DeviceRequest firstAvailable(std::string name,
                                         std::vector<api::DeviceSubRequest> subs) {
  return {std::move(name), std::nullopt, std::move(subs)};
}

inline api::DeviceConstraint matchAttribute(std::string attribute,
                                            std::vector<std::string> requests = {}) {
  return {std::move(requests), std::move(attribute), std::nullopt};
}

inline api::DeviceConstraint distinctAttribute(std::string attribute,
                                               std::vector<std::string> requests = {}) {
  return {std::move(requests), std::nullopt, std::move(attribute)};
}

inline api::ResourceClaim claim(std::string name, std::vector<api::DeviceRequest> requests,
                                std::vector<api::DeviceConstraint> constraints = {},
                                std::vector<api::DeviceConfiguration> config = {}) {
  api::ResourceClaim c;
  c.metadata.name = std::move(name);
  c.spec.requests = std::move(requests);
  c.spec.constraints = std::move(constraints);
  c.spec.config = std::move(config);
  return c;
}

// ---- Results -------------------------------------------------------------------------------

inline api::DeviceRequestAllocationResult result(
    std::string request, std::string driver, std::string pool, std::string device,
    bool admin = false, std::vector<api::DeviceToleration> tolerations = {}) {
  api::DeviceRequestAllocationResult r;
  r.request = std::move(request);
  r.driver = std::move(driver);
  r.pool = std::move(pool);
  r.device = std::move(device);
  if (admin) r.adminAccess = true;
  r.tolerations = std::move(tolerations);
  return r;
}

inline api::DeviceRequestAllocationResult withBinding(api::DeviceRequestAllocationResult r,
                                                      std::vector<std::string> conditions,
                                                      std::vector<std::string> failures) {
  r.bindingConditions = std::move(conditions);
  r.bindingFailureConditions = std::move(failures);
  return r;
}

// A shared device's result: kFixedShareId stands for the random shareID.
inline api::DeviceRequestAllocationResult shared(
    api::DeviceRequestAllocationResult r,
    std::vector<std::pair<std::string, std::string>> consumed = {}) {
  r.shareID = kFixedShareId;
  for (const auto& [n, q] : consumed) r.consumedCapacity[n] = api::Quantity::parse(q);
  return r;
}

// (devices, config) -> an AllocationResult with that node selector.
inline api::AllocationResult allocation(
    std::optional<api::NodeSelector> selector,
    std::vector<api::DeviceRequestAllocationResult> devices,
    std::vector<api::DeviceAllocationConfiguration> config = {}) {
  api::AllocationResult a;
  a.devices = std::move(devices);
  a.config = std::move(config);
  a.nodeSelector = std::move(selector);
  return a;
}

inline api::DeviceAllocationConfiguration fromClass(api::DeviceConfiguration c) {
  return {std::string(api::kAllocationConfigFromClass), std::move(c)};
}
inline api::DeviceAllocationConfiguration fromClaim(api::DeviceConfiguration c) {
  return {std::string(api::kAllocationConfigFromClaim), std::move(c)};
}

// One line per device, config and node selector term, for failure messages.
inline std::string describe(const api::AllocationResult& a) {
  std::string s;
  for (const auto& d : a.devices) {
    s += "  " + d.request + " " + d.driver + "/" + d.pool + "/" + d.device;
    if (d.adminAccess) s += " admin";
    if (d.shareID) s += " share=" + *d.shareID;
    for (const auto& [n, q] : d.consumedCapacity) s += " " + n + "=" + q.toString();
    for (const auto& t : d.tolerations) s += " tolerates " + t.key + ":" + t.effect;
    for (const auto& b : d.bindingConditions) s += " binding " + b;
    s += "\n";
  }
  for (const auto& c : a.config) {
    s += "  config " + c.source + " " + c.config.driver + " " + c.config.opaque + " [";
    for (const auto& r : c.config.requests) s += r + " ";
    s += "]\n";
  }
  if (a.nodeSelector) {
    for (const auto& t : a.nodeSelector->nodeSelectorTerms) {
      s += "  node selector term:";
      for (const auto& r : t.matchExpressions)
        s += " " + r.key + " in [" + r.values.front() + "...]";
      for (const auto& r : t.matchFields) s += " field " + r.key + " in [" + r.values.front() + "]";
      s += "\n";
    }
  }
  return s;
}

}  // namespace ksched::plugins::dra::testutil
