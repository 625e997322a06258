// DRA objects as the apiserver serves them, for the DynamicResources plugin's tests (fed to a
// DraState through its on* methods).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace ksched::plugins::dra::testjson {

// metadata with name, uid "<name>-uid", resourceVersion "1" and, when given, the namespace.
inline nlohmann::json meta(const std::string& name, const std::string& ns = "") {
  nlohmann::json m = {{"name", name}, {"uid", name + "-uid"}, {"resourceVersion", "1"}};
  if (!ns.empty()) m["namespace"] = ns;
  return m;
}

// DeviceClass "gpu": every device of driver gpu.example.com.
inline nlohmann::json gpuClass() {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "DeviceClass"},
          {"metadata", meta("gpu")},
          {"spec",
           {{"selectors",
             nlohmann::json::array(
                 {{{"cel", {{"expression", "device.driver == \"gpu.example.com\""}}}}})}}}};
}

// The slice of `node`'s pool (driver gpu.example.com) holding `devices`.
inline nlohmann::json nodeSlice(const std::string& node, nlohmann::json devices) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", meta(node + "-gpus")},
          {"spec",
           {{"driver", "gpu.example.com"},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", std::move(devices)}}}};
}

// The same with `devices` plain GPUs named gpu-0, gpu-1, ...
inline nlohmann::json nodeSlice(const std::string& node, int devices) {
  nlohmann::json d = nlohmann::json::array();
  for (int i = 0; i < devices; ++i) d.push_back({{"name", "gpu-" + std::to_string(i)}});
  return nodeSlice(node, std::move(d));
}

}  // namespace ksched::plugins::dra::testjson
