#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/resource.h>

#include "resource_reader.h"

namespace ksched::api {
namespace {

// The readers of resource_reader.h, by name: this file is their one user.
using namespace resource_reader;  // NOLINT(google-build-using-namespace)

// --- The shapes ------------------------------------------------------------------------------

// v1 and v1beta2 share one shape; v1beta1 nests a device's fields under "basic" and puts an
// exact request's fields on the request.
enum class Shape { kV1, kV1beta1 };

Shape shapeOf(const json& j, std::string_view fallbackVersion) {
  std::string version(fallbackVersion);
  read(j, "apiVersion", version);
  if (version.empty() || version == "resource.k8s.io/v1" || version == "resource.k8s.io/v1beta2") {
    return Shape::kV1;
  }
  if (version == "resource.k8s.io/v1beta1") return Shape::kV1beta1;
  within("apiVersion", [&] {
    fail("\"" + version +
         "\" is not a version ksched reads (resource.k8s.io/v1, v1beta2 or v1beta1)");
  });
  return Shape::kV1;
}

constexpr std::string_view kOneValue =
    "exactly one of int, bool, string, version, ints, bools, strings, versions must be set";

// A list form of an attribute: a non-empty array, each item read as the scalar would be.
template <typename T, typename F>
std::vector<T> asValues(const json& v, F&& one) {
  if (!v.is_array()) fail(std::string("expected an array, got ") + v.type_name());
  if (v.empty()) fail("must not be empty");
  std::vector<T> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) out.push_back(withinItem(i, [&] { return one(v[i]); }));
  return out;
}

DeviceAttribute::Version asVersion(const json& v) { return DeviceAttribute::Version{asString(v)}; }

DeviceAttribute asAttribute(const json& v) {
  expectObject(v);
  using Value = decltype(DeviceAttribute::value);
  std::optional<DeviceAttribute> out;
  int set = 0;
  auto take = [&](std::string_view key, auto convert) {
    if (const json* f = member(v, key)) {
      ++set;
      out = DeviceAttribute{within(key, [&] { return convert(*f); })};
    }
  };
  take("int", [](const json& f) { return Value(asInt(f)); });
  take("bool", [](const json& f) { return Value(asBool(f)); });
  take("string", [](const json& f) { return Value(asString(f)); });
  take("version", [](const json& f) { return Value(asVersion(f)); });
  take("ints", [](const json& f) { return Value(asValues<int64_t>(f, asInt)); });
  take("bools", [](const json& f) { return Value(asValues<bool>(f, asBool)); });
  take("strings", [](const json& f) { return Value(asValues<std::string>(f, asString)); });
  take("versions",
       [](const json& f) { return Value(asValues<DeviceAttribute::Version>(f, asVersion)); });
  if (set != 1) fail(std::string(kOneValue));
  return *out;
}

CapacityRequestPolicy asRequestPolicy(const json& v) {
  expectObject(v);
  CapacityRequestPolicy p;
  read(v, "default", p.defaultValue);
  readList(v, "validValues", p.validValues, asQuantity);
  if (const json* range = member(v, "validRange")) {
    within("validRange", [&] {
      expectObject(*range);
      read(*range, "min", p.validRangeMin);
      read(*range, "max", p.validRangeMax);
      read(*range, "step", p.validRangeStep);
    });
  }
  return p;
}

DeviceCapacity asCapacity(const json& v) {
  expectObject(v);
  DeviceCapacity c;
  read(v, "value", c.value, asQuantity);
  read(v, "requestPolicy", c.requestPolicy, asRequestPolicy);
  return c;
}

// counters: name -> {value}.
Counters asCounters(const json& v) {
  return asMap<Counters>(v, [](const json& c) {
    expectObject(c);
    Quantity q;
    read(c, "value", q, asQuantity);
    return q;
  });
}

CounterSet asCounterSet(const json& v) {
  expectObject(v);
  CounterSet s;
  read(v, "name", s.name);
  read(v, "counters", s.counters, asCounters);
  return s;
}

DeviceCounterConsumption asCounterConsumption(const json& v) {
  expectObject(v);
  DeviceCounterConsumption c;
  read(v, "counterSet", c.counterSet);
  read(v, "counters", c.counters, asCounters);
  return c;
}

DeviceTaint asTaint(const json& v) {
  expectObject(v);
  DeviceTaint t;
  read(v, "key", t.key);
  read(v, "value", t.value);
  read(v, "effect", t.effect);
  read(v, "timeAdded", t.timeAdded);
  return t;
}

DeviceToleration asToleration(const json& v) {
  expectObject(v);
  DeviceToleration t;
  read(v, "key", t.key);
  read(v, "operator", t.operator_);
  if (t.operator_.empty()) t.operator_ = "Equal";
  read(v, "value", t.value);
  read(v, "effect", t.effect);
  read(v, "tolerationSeconds", t.tolerationSeconds);
  return t;
}

// The fields of a device: the device itself in v1, its "basic" in v1beta1.
void readDeviceFields(const json& v, Device& d) {
  expectObject(v);
  readMap(v, "attributes", d.attributes, asAttribute);
  readMap(v, "capacity", d.capacity, asCapacity);
  readList(v, "consumesCounters", d.consumesCounters, asCounterConsumption);
  read(v, "nodeName", d.nodeName);
  read(v, "nodeSelector", d.nodeSelector, asNested<NodeSelector>);
  read(v, "allNodes", d.allNodes);
  readList(v, "taints", d.taints, asTaint);
  read(v, "bindsToNode", d.bindsToNode);
  readList(v, "bindingConditions", d.bindingConditions);
  readList(v, "bindingFailureConditions", d.bindingFailureConditions);
  read(v, "allowMultipleAllocations", d.allowMultipleAllocations);
}

Device asDevice(const json& v, Shape shape) {
  expectObject(v);
  Device d;
  read(v, "name", d.name);
  if (shape == Shape::kV1) {
    readDeviceFields(v, d);
  } else if (const json* basic = member(v, "basic")) {
    within("basic", [&] { readDeviceFields(*basic, d); });
  }
  return d;
}

ResourceSliceSpec asSliceSpec(const json& v, Shape shape) {
  expectObject(v);
  ResourceSliceSpec s;
  read(v, "driver", s.driver);
  if (const json* pool = member(v, "pool")) {
    within("pool", [&] {
      expectObject(*pool);
      read(*pool, "name", s.pool.name);
      read(*pool, "generation", s.pool.generation);
      read(*pool, "resourceSliceCount", s.pool.resourceSliceCount);
    });
  }
  read(v, "nodeName", s.nodeName);
  read(v, "nodeSelector", s.nodeSelector, asNested<NodeSelector>);
  read(v, "allNodes", s.allNodes);
  read(v, "perDeviceNodeSelection", s.perDeviceNodeSelection);
  if (shape == Shape::kV1beta1) {
    // v1beta1 has a plain string and bool there; the conversion makes "" and false unset.
    if (s.nodeName && s.nodeName->empty()) s.nodeName.reset();
    if (s.allNodes && !*s.allNodes) s.allNodes.reset();
  }
  readList(v, "devices", s.devices, [&](const json& d) { return asDevice(d, shape); });
  readList(v, "sharedCounters", s.sharedCounters, asCounterSet);
  return s;
}

DeviceSelector asSelector(const json& v) {
  expectObject(v);
  DeviceSelector s;
  if (const json* cel = member(v, "cel")) {
    within("cel", [&] {
      expectObject(*cel);
      read(*cel, "expression", s.celExpression);
    });
  }
  return s;
}

// The inline DeviceConfiguration: opaque{driver, parameters}.
void readOpaque(const json& v, DeviceConfiguration& c) {
  const json* opaque = member(v, "opaque");
  if (opaque == nullptr) return;
  within("opaque", [&] {
    expectObject(*opaque);
    read(*opaque, "driver", c.driver);
    if (const json* p = member(*opaque, "parameters")) {
      // A number beyond double's range parses as infinity and prints as null: absent, as null is.
      std::string text = p->dump(-1, ' ', false, json::error_handler_t::replace);
      if (text != "null") c.opaque = std::move(text);
    }
  });
}

DeviceConfiguration asConfig(const json& v) {
  expectObject(v);
  DeviceConfiguration c;
  readList(v, "requests", c.requests);
  readOpaque(v, c);
  return c;
}

CapacityRequirements asCapacityRequirements(const json& v) {
  expectObject(v);
  CapacityRequirements out;
  readMap(v, "requests", out, asQuantity);
  return out;
}

// The fields of an exact request or a subrequest (the request itself in v1beta1), defaulted as
// the apiserver does: allocationMode ExactCount, and then count 1.
void readExactFields(const json& v, ExactDeviceRequest& r) {
  read(v, "deviceClassName", r.deviceClassName);
  readList(v, "selectors", r.selectors, asSelector);
  r.allocationMode.clear();
  read(v, "allocationMode", r.allocationMode);
  if (r.allocationMode.empty()) r.allocationMode = kAllocationModeExactCount;
  r.count = 0;
  read(v, "count", r.count);
  if (r.allocationMode == kAllocationModeExactCount && r.count == 0) r.count = 1;
  read(v, "adminAccess", r.adminAccess);
  readList(v, "tolerations", r.tolerations, asToleration);
  read(v, "capacity", r.capacity, asCapacityRequirements);
}

ExactDeviceRequest asExact(const json& v) {
  expectObject(v);
  ExactDeviceRequest r;
  readExactFields(v, r);
  return r;
}

DeviceSubRequest asSubRequest(const json& v) {
  expectObject(v);
  DeviceSubRequest s;
  read(v, "name", s.name);
  readExactFields(v, s.request);
  s.request.adminAccess.reset();
  return s;
}

// v1beta1: an exact request when any of its fields is set (upstream's conversion).
bool hasExactFields(const json& v) {
  for (const char* key : {"deviceClassName", "selectors", "allocationMode", "count", "adminAccess",
                          "tolerations", "capacity"}) {
    const json* f = member(v, key);
    if (f == nullptr) continue;
    if (f->is_string() && f->get_ref<const std::string&>().empty()) continue;
    if (f->is_number() && *f == 0) continue;
    return true;
  }
  return false;
}

DeviceRequest asRequest(const json& v, Shape shape) {
  expectObject(v);
  DeviceRequest r;
  read(v, "name", r.name);
  if (shape == Shape::kV1) {
    read(v, "exactly", r.exactly, asExact);
  } else if (hasExactFields(v)) {
    r.exactly = asExact(v);
  }
  readList(v, "firstAvailable", r.firstAvailable, asSubRequest);
  return r;
}

DeviceConstraint asConstraint(const json& v) {
  expectObject(v);
  DeviceConstraint c;
  readList(v, "requests", c.requests);
  read(v, "matchAttribute", c.matchAttribute);
  read(v, "distinctAttribute", c.distinctAttribute);
  return c;
}

// ResourceClaimSpec: its devices.
ResourceClaimSpec asClaimSpec(const json& v, Shape shape) {
  expectObject(v);
  ResourceClaimSpec s;
  if (const json* devices = member(v, "devices")) {
    within("devices", [&] {
      expectObject(*devices);
      readList(*devices, "requests", s.requests,
               [&](const json& r) { return asRequest(r, shape); });
      readList(*devices, "constraints", s.constraints, asConstraint);
      readList(*devices, "config", s.config, asConfig);
    });
  }
  return s;
}

DeviceRequestAllocationResult asResult(const json& v) {
  expectObject(v);
  DeviceRequestAllocationResult r;
  read(v, "request", r.request);
  read(v, "driver", r.driver);
  read(v, "pool", r.pool);
  read(v, "device", r.device);
  read(v, "adminAccess", r.adminAccess);
  readList(v, "tolerations", r.tolerations, asToleration);
  readList(v, "bindingConditions", r.bindingConditions);
  readList(v, "bindingFailureConditions", r.bindingFailureConditions);
  read(v, "shareID", r.shareID);
  readMap(v, "consumedCapacity", r.consumedCapacity, asQuantity);
  return r;
}

DeviceAllocationConfiguration asAllocationConfig(const json& v) {
  expectObject(v);
  DeviceAllocationConfiguration c;
  read(v, "source", c.source);
  readList(v, "requests", c.config.requests);
  readOpaque(v, c.config);
  return c;
}

AllocationResult asAllocation(const json& v) {
  expectObject(v);
  AllocationResult a;
  if (const json* devices = member(v, "devices")) {
    within("devices", [&] {
      expectObject(*devices);
      readList(*devices, "results", a.devices, asResult);
      readList(*devices, "config", a.config, asAllocationConfig);
    });
  }
  read(v, "nodeSelector", a.nodeSelector, asNested<NodeSelector>);
  read(v, "allocationTimestamp", a.allocationTimestamp);
  return a;
}

ResourceClaimConsumerReference asConsumer(const json& v) {
  expectObject(v);
  ResourceClaimConsumerReference r;
  read(v, "apiGroup", r.apiGroup);
  read(v, "resource", r.resource);
  read(v, "name", r.name);
  read(v, "uid", r.uid);
  return r;
}

AllocatedDeviceStatus asDeviceStatus(const json& v) {
  expectObject(v);
  AllocatedDeviceStatus d;
  read(v, "driver", d.driver);
  read(v, "pool", d.pool);
  read(v, "device", d.device);
  read(v, "shareID", d.shareID);
  readList(v, "conditions", d.conditions, asNested<Condition>);
  return d;
}

ResourceClaimStatus asClaimStatus(const json& v) {
  expectObject(v);
  ResourceClaimStatus s;
  read(v, "allocation", s.allocation, asAllocation);
  readList(v, "reservedFor", s.reservedFor, asConsumer);
  readList(v, "devices", s.devices, asDeviceStatus);
  return s;
}

// Runs a kind's decoder at the top, turning a Failure into the DecodeError callers catch.
template <typename F>
void decodeTop(const json& j, std::string_view fallbackVersion, F&& decodeWith) {
  try {
    expectObject(j);
    decodeWith(shapeOf(j, fallbackVersion));
  } catch (const Failure& f) {
    throw DecodeError(message(f));
  }
}

void decodeSlice(const json& j, std::string_view version, ResourceSlice& s) {
  decodeTop(j, version, [&](Shape shape) {
    s = {};
    read(j, "metadata", s.metadata, asNested<ObjectMeta>);
    read(j, "spec", s.spec, [&](const json& v) { return asSliceSpec(v, shape); });
  });
}

void decodeClass(const json& j, std::string_view version, DeviceClass& c) {
  decodeTop(j, version, [&](Shape) {
    c = {};
    read(j, "metadata", c.metadata, asNested<ObjectMeta>);
    if (const json* spec = member(j, "spec")) {
      within("spec", [&] {
        expectObject(*spec);
        readList(*spec, "selectors", c.spec.selectors, asSelector);
        readList(*spec, "config", c.spec.config, asConfig);
        read(*spec, "extendedResourceName", c.spec.extendedResourceName);
      });
    }
  });
}

void decodeClaim(const json& j, std::string_view version, ResourceClaim& c) {
  decodeTop(j, version, [&](Shape shape) {
    c = {};
    read(j, "metadata", c.metadata, asNested<ObjectMeta>);
    read(j, "spec", c.spec, [&](const json& v) { return asClaimSpec(v, shape); });
    read(j, "status", c.status, asClaimStatus);
  });
}

void decodeTemplate(const json& j, std::string_view version, ResourceClaimTemplate& t) {
  decodeTop(j, version, [&](Shape shape) {
    t = {};
    read(j, "metadata", t.metadata, asNested<ObjectMeta>);
    if (const json* spec = member(j, "spec")) {
      within("spec", [&] {
        expectObject(*spec);
        read(*spec, "metadata", t.claimMetadata, asNested<ObjectMeta>);
        read(*spec, "spec", t.spec, [&](const json& v) { return asClaimSpec(v, shape); });
      });
    }
  });
}

void decodeTaintRule(const json& j, DeviceTaintRule& r) {
  try {
    expectObject(j);
    r = {};
    read(j, "metadata", r.metadata, asNested<ObjectMeta>);
    if (const json* spec = member(j, "spec")) {
      within("spec", [&] {
        expectObject(*spec);
        if (const json* sel = member(*spec, "deviceSelector")) {
          within("deviceSelector", [&] {
            expectObject(*sel);
            read(*sel, "driver", r.driver);
            read(*sel, "pool", r.pool);
            read(*sel, "device", r.device);
          });
        }
        read(*spec, "taint", r.taint, asTaint);
      });
    }
  } catch (const Failure& f) {
    throw DecodeError(message(f));
  }
}

}  // namespace

bool DeviceToleration::tolerates(const DeviceTaint& taint) const noexcept {
  if (!effect.empty() && effect != taint.effect) return false;
  if (!key.empty() && key != taint.key) return false;
  if (operator_.empty() || operator_ == "Equal") return value == taint.value;
  return operator_ == "Exists";
}

void from_json(const nlohmann::json& j, ResourceSlice& s) { decodeSlice(j, "", s); }
void from_json(const nlohmann::json& j, DeviceClass& c) { decodeClass(j, "", c); }
void from_json(const nlohmann::json& j, ResourceClaim& c) { decodeClaim(j, "", c); }
void from_json(const nlohmann::json& j, ResourceClaimTemplate& t) { decodeTemplate(j, "", t); }
void from_json(const nlohmann::json& j, DeviceTaintRule& r) { decodeTaintRule(j, r); }

void decodeResource(const nlohmann::json& j, std::string_view listVersion, ResourceSlice& s) {
  decodeSlice(j, listVersion, s);
}
void decodeResource(const nlohmann::json& j, std::string_view listVersion, DeviceClass& c) {
  decodeClass(j, listVersion, c);
}
void decodeResource(const nlohmann::json& j, std::string_view listVersion, ResourceClaim& c) {
  decodeClaim(j, listVersion, c);
}
void decodeResource(const nlohmann::json& j, std::string_view listVersion,
                    ResourceClaimTemplate& t) {
  decodeTemplate(j, listVersion, t);
}

}  // namespace ksched::api
