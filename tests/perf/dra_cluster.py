#!/usr/bin/env python3
"""Writes a cluster for `ksched simulate -f` shaped as upstream's DRA scheduler_perf workloads:
NODES nodes, each with a ResourceSlice of DEVICES devices of one driver, a DeviceClass, a
ResourceClaimTemplate asking for one device, and PODS pending pods each with a claim from that
template (the simulator generates the claims as the resourceclaim controller would).

  tests/perf/dra_cluster.py NODES DEVICES PODS > cluster.yaml
"""
import json
import sys


def main():
    nodes, devices, pods = (int(a) for a in sys.argv[1:4])
    docs = []
    for i in range(nodes):
        name = f"node-{i}"
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                     "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                                "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}}})
        docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                     "metadata": {"name": f"{name}-gpus"},
                     "spec": {"driver": "gpu.example.com", "nodeName": name,
                              "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                              "devices": [{"name": f"gpu-{d}",
                                           "attributes": {"index": {"int": d},
                                                          "model": {"string": "a100"}},
                                           "capacity": {"memory": {"value": "80Gi"}}}
                                          for d in range(devices)]}})
    docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                 "metadata": {"name": "gpu.example.com"},
                 "spec": {"selectors": [{"cel": {"expression":
                                                 "device.driver == \"gpu.example.com\""}}]}})
    docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                 "metadata": {"name": "one-gpu", "namespace": "bench"},
                 "spec": {"spec": {"devices": {"requests": [
                     {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}})
    for i in range(pods):
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"pod-{i}", "namespace": "bench", "uid": f"pod-{i}-uid"},
                     "spec": {"resourceClaims": [{"name": "gpu",
                                                  "resourceClaimTemplateName": "one-gpu"}],
                              "containers": [{"name": "c", "image": "registry.example/app:1",
                                              "resources": {"requests": {"cpu": "100m"},
                                                            "claims": [{"name": "gpu"}]}}]}})
    sys.stdout.write("\n---\n".join(json.dumps(d) for d in docs) + "\n")


if __name__ == "__main__":
    main()
