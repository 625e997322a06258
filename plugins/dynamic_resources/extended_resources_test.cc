// Extended resources backed by DRA (KEP 5004): the claim's requests and container mappings
// (upstream's Test_createRequestsAndMappings_requests and _mappings, with this SDK's container
// names: c<i> for containers, init<i> for init containers and sidecars), the names that
// qualify, the claim object and status patch the plugin writes, and which DeviceClass serves a
// resource when several name it.
#include "plugins/dynamic_resources/extended_resources.h"

#include <gtest/gtest.h>

#include <ksched/testing/fakes.h>

#include "plugins/dynamic_resources/dra_state.h"

namespace ksched::plugins::dra {
namespace {

using ksched::testing::PodWrapper;
using nlohmann::json;

constexpr const char* kEx = "example.com/gpu";
constexpr const char* kEx1 = "example.com/gpu1";
constexpr const char* kExInit = "example.com/gpuinit";
const std::string kImplicitInit = std::string(kDeviceClassPrefix) + "classInit";

struct Want {
  std::string name;
  std::string className;
  int64_t count;
};

std::vector<Want> requestsOf(const ExtendedRequests& r) {
  std::vector<Want> out;
  for (const auto& d : r.requests) {
    out.push_back({d.name, d.exactly->deviceClassName, d.exactly->count});
    EXPECT_EQ(d.exactly->allocationMode, "ExactCount");
  }
  return out;
}

bool operator==(const Want& a, const Want& b) {
  return a.name == b.name && a.className == b.className && a.count == b.count;
}
void PrintTo(const Want& w, std::ostream* os) {
  *os << "{" << w.name << ", " << w.className << ", " << w.count << "}";
}

using Mapping = api::ContainerExtendedResourceRequest;

// Mappings in upstream's comparison order (request name, then container), as text.
std::vector<std::string> sorted(std::vector<Mapping> m) {
  std::ranges::sort(m, [](const Mapping& a, const Mapping& b) {
    return std::tie(a.requestName, a.containerName) < std::tie(b.requestName, b.containerName);
  });
  std::vector<std::string> out;
  for (const auto& x : m)
    out.push_back(x.containerName + " " + x.resourceName + " " + x.requestName);
  return out;
}

// The pods of upstream's tables.
api::Pod pod1() { return PodWrapper("p").req({{kEx, "1"}, {kEx1, "2"}}).obj(); }
api::Pod pod2() { return PodWrapper("p").req({{kEx, "1"}}).req({{kEx1, "2"}}).obj(); }
api::Pod podInit() { return PodWrapper("p").req({{kEx, "1"}}).initReq({{kExInit, "2"}}).obj(); }
api::Pod podInit2() {
  return PodWrapper("p")
      .req({{kEx, "1"}})
      .initReq({{kExInit, "1"}})
      .initReq({{kExInit, "2"}})
      .obj();
}
api::Pod podInit3() {
  return PodWrapper("p")
      .req({{kEx, "1"}})
      .initReq({{kExInit, "1"}})
      .initReq({{kExInit, "1"}}, /*sidecar=*/true)
      .initReq({{kExInit, "2"}})
      .obj();
}
api::Pod pod1InitImplicit() {
  return PodWrapper("p").initReq({{kExInit, "1"}, {kImplicitInit, "2"}}).obj();
}
api::Pod podInitImplicit() {
  return PodWrapper("p")
      .req({{kEx, "1"}})
      .initReq({{kExInit, "1"}})
      .initReq({{kImplicitInit, "2"}})
      .obj();
}

using ClassOf = std::map<std::string, std::string, std::less<>>;

TEST(ExtendedResourceRequests, AreUpstreamsPerContainerRequests) {
  const ClassOf one = {{kEx, "class"}};
  const ClassOf two = {{kEx, "class"}, {kEx1, "class1"}};
  const ClassOf init = {{kEx, "class"}, {kExInit, "classInit"}};
  const struct {
    const char* name;
    api::Pod pod;
    ClassOf classOf;
    std::vector<Want> want;
  } cases[] = {
      {"nothing DRA serves", pod1(), {}, {}},
      {"one resource match", pod1(), one, {{"container-0-request-0", "class", 1}}},
      {"two resources match",
       pod1(),
       two,
       {{"container-0-request-0", "class", 1}, {"container-0-request-1", "class1", 2}}},
      {"two containers match",
       pod2(),
       two,
       {{"container-0-request-0", "class", 1}, {"container-1-request-0", "class1", 2}}},
      {"one init container, one regular container",
       podInit(),
       init,
       {{"container-0-request-0", "classInit", 2}, {"container-1-request-0", "class", 1}}},
      {"two init containers, one regular container: the larger init request only",
       podInit2(),
       init,
       {{"container-1-request-0", "classInit", 2}, {"container-2-request-0", "class", 1}}},
      {"three init containers, one a sidecar: the first reuses the sidecar's device",
       podInit3(),
       init,
       {{"container-1-request-0", "classInit", 1},
        {"container-2-request-0", "classInit", 2},
        {"container-3-request-0", "class", 1}}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(requestsOf(extendedResourceRequests(c.pod, c.classOf)), c.want) << c.name;
  }
}

TEST(ExtendedResourceRequests, MapEachContainerToTheRequestThatServesIt) {
  const ClassOf two = {{kEx, "class"}, {kEx1, "class1"}};
  const ClassOf init = {{kEx, "class"}, {kExInit, "classInit"}, {kImplicitInit, "classInit"}};
  const struct {
    const char* name;
    api::Pod pod;
    ClassOf classOf;
    std::vector<Mapping> want;
  } cases[] = {
      {"one container, two requests",
       pod1(),
       two,
       {{"c0", kEx, "container-0-request-0"}, {"c0", kEx1, "container-0-request-1"}}},
      {"one container, one explicit and one implicit request",
       pod1InitImplicit(),
       init,
       {{"init0", kImplicitInit, "container-0-request-0"},
        {"init0", kExInit, "container-0-request-1"}}},
      {"two containers, two requests",
       pod2(),
       two,
       {{"c0", kEx, "container-0-request-0"}, {"c1", kEx1, "container-1-request-0"}}},
      {"one init container, one regular container",
       podInit(),
       init,
       {{"init0", kExInit, "container-0-request-0"}, {"c0", kEx, "container-1-request-0"}}},
      {"two init containers: both map to the larger request",
       podInit2(),
       init,
       {{"init0", kExInit, "container-1-request-0"},
        {"init1", kExInit, "container-1-request-0"},
        {"c0", kEx, "container-2-request-0"}}},
      {"two init containers, explicit and implicit resources",
       podInitImplicit(),
       init,
       {{"init0", kExInit, "container-0-request-0"},
        {"init1", kImplicitInit, "container-1-request-0"},
        {"c0", kEx, "container-2-request-0"}}},
      {"an init container served by the sidecar after it",
       podInit3(),
       init,
       {{"init0", kExInit, "container-1-request-0"},
        {"init1", kExInit, "container-1-request-0"},
        {"init2", kExInit, "container-2-request-0"},
        {"c0", kEx, "container-3-request-0"}}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(sorted(extendedResourceRequests(c.pod, c.classOf).mappings), sorted(c.want))
        << c.name;
  }
}

TEST(ExtendedResourceRequests, AFractionalOrZeroRequestAsksForNothing) {
  const api::Pod pod = PodWrapper("p").req({{kEx, "500m"}}).req({{kEx1, "0"}}).obj();
  const auto r = extendedResourceRequests(pod, {{kEx, "class"}, {kEx1, "class1"}});
  EXPECT_TRUE(r.requests.empty());
  EXPECT_TRUE(r.mappings.empty());
}

TEST(ExtendedResourceNames, ExtendedAndImplicitClassNamesQualify) {
  EXPECT_TRUE(isDraExtendedResourceName("example.com/gpu"));
  EXPECT_TRUE(isDraExtendedResourceName("deviceclass.resource.kubernetes.io/gpu.example.com"));
  EXPECT_FALSE(isDraExtendedResourceName("cpu"));
  EXPECT_FALSE(isDraExtendedResourceName("hugepages-2Mi"));
  EXPECT_FALSE(isDraExtendedResourceName("kubernetes.io/something"));
  EXPECT_TRUE(requestsDraExtendedResourceName(PodWrapper("p").initReq({{kEx, "1"}}).obj()));
  EXPECT_FALSE(requestsDraExtendedResourceName(PodWrapper("p").req({{"cpu", "1"}}).obj()));
}

TEST(ExtendedClaimObject, IsOwnedByThePodAnnotatedAndProtectedInTheServedShape) {
  const api::Pod pod = PodWrapper("trainer").ns("ml").uid("u-1").req({{kEx, "2"}}).obj();
  const auto r = extendedResourceRequests(pod, {{kEx, "gpu.example.com"}});
  const json v1 = extendedClaimObject(pod, r.requests, "resource.k8s.io/v1");
  EXPECT_EQ(v1["metadata"]["generateName"], "trainer-extended-resources-");
  EXPECT_EQ(v1["metadata"]["namespace"], "ml");
  EXPECT_EQ(v1["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"],
            "true");
  EXPECT_EQ(v1["metadata"]["ownerReferences"][0]["uid"], "u-1");
  EXPECT_EQ(v1["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(v1["metadata"]["finalizers"],
            json::array({"resource.kubernetes.io/delete-protection"}));
  EXPECT_EQ(v1["spec"]["devices"]["requests"][0], (json{{"name", "container-0-request-0"},
                                                        {"exactly",
                                                         {{"deviceClassName", "gpu.example.com"},
                                                          {"allocationMode", "ExactCount"},
                                                          {"count", 2}}}}));
  const json beta1 = extendedClaimObject(pod, r.requests, "resource.k8s.io/v1beta1");
  EXPECT_EQ(beta1["spec"]["devices"]["requests"][0], (json{{"name", "container-0-request-0"},
                                                           {"deviceClassName", "gpu.example.com"},
                                                           {"allocationMode", "ExactCount"},
                                                           {"count", 2}}));
  const json status = extendedClaimStatusPatch(r.mappings, "trainer-extended-resources-x1y2z");
  EXPECT_EQ(status["status"]["extendedResourceClaimStatus"],
            (json{{"requestMappings", json::array({{{"containerName", "c0"},
                                                    {"resourceName", kEx},
                                                    {"requestName", "container-0-request-0"}}})},
                  {"resourceClaimName", "trainer-extended-resources-x1y2z"}}));
}

json deviceClass(const std::string& name, const std::string& created,
                 std::optional<std::string> extendedResourceName) {
  json j = {{"apiVersion", "resource.k8s.io/v1"},
            {"kind", "DeviceClass"},
            {"metadata", {{"name", name}, {"uid", name}, {"creationTimestamp", created}}},
            {"spec", json::object()}};
  if (extendedResourceName) j["spec"]["extendedResourceName"] = *extendedResourceName;
  return j;
}

TEST(DraStateExtendedResources, TheNewestClassWinsThenTheLowestNameAndEveryClassHasItsOwn) {
  DraState state;
  state.onClass(deviceClass("old", "2026-01-01T00:00:00Z", kEx));
  ASSERT_NE(state.classForExtendedResource(kEx), nullptr);
  EXPECT_EQ(state.classForExtendedResource(kEx)->metadata.name, "old");
  state.onClass(deviceClass("new", "2026-06-01T00:00:00Z", kEx));
  EXPECT_EQ(state.classForExtendedResource(kEx)->metadata.name, "new");
  // Same age: the lower name.
  state.onClass(deviceClass("another", "2026-06-01T00:00:00Z", kEx));
  EXPECT_EQ(state.classForExtendedResource(kEx)->metadata.name, "another");
  // Every class serves its implicit name.
  EXPECT_EQ(state.classForExtendedResource(std::string(kDeviceClassPrefix) + "old")->metadata.name,
            "old");
  state.onClassDelete("another");
  EXPECT_EQ(state.classForExtendedResource(kEx)->metadata.name, "new");
  // Renamed away: the older class serves it again.
  state.onClass(deviceClass("new", "2026-06-01T00:00:00Z", std::nullopt));
  EXPECT_EQ(state.classForExtendedResource(kEx)->metadata.name, "old");
  EXPECT_EQ(state.classForExtendedResource("example.com/other"), nullptr);
}

TEST(DraStateExtendedResources, FindsThePodsExtendedResourcesClaimByOwnerAndAnnotation) {
  DraState state;
  auto claim = [](const std::string& name, const std::string& owner, bool annotated) {
    json m = {{"name", name},
              {"namespace", "ml"},
              {"uid", name},
              {"resourceVersion", "1"},
              {"ownerReferences", json::array({{{"apiVersion", "v1"},
                                                {"kind", "Pod"},
                                                {"name", "p"},
                                                {"uid", owner},
                                                {"controller", true}}})}};
    if (annotated) m["annotations"] = {{"resource.kubernetes.io/extended-resource-claim", "true"}};
    return json{{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceClaim"},
                {"metadata", m},
                {"spec", json::object()}};
  };
  state.onClaim(claim("template-claim", "pod-uid", false));
  EXPECT_EQ(state.extendedResourceClaim("pod-uid"), nullptr);
  state.onClaim(claim("p-extended-resources-abcde", "pod-uid", true));
  ASSERT_NE(state.extendedResourceClaim("pod-uid"), nullptr);
  EXPECT_EQ(state.extendedResourceClaim("pod-uid")->claim->metadata.name,
            "p-extended-resources-abcde");
  EXPECT_EQ(state.extendedResourceClaim("other-uid"), nullptr);
  state.onClaimDelete("ml", "p-extended-resources-abcde");
  EXPECT_EQ(state.extendedResourceClaim("pod-uid"), nullptr);
}

}  // namespace
}  // namespace ksched::plugins::dra
