#!/usr/bin/env python3
"""Writes a cluster for `ksched simulate -f` with one gang: NODES nodes (16 cpus each, in racks
of 40), a scheduling.k8s.io/v1beta1 PodGroup of PODS pods with minCount PODS, and PODS pending
pods of 1 cpu in it. With --one-by-one the same pods carry no schedulingGroup, and no PodGroup
is written: the pod-by-pod baseline. With --rack the PodGroup asks for one rack
(schedulingConstraints.topology), and the racks are made large enough to hold it. With
--composite=K the pods are K PodGroups (gangs of PODS/K) under one v1alpha3 CompositePodGroup
that needs all K (the CompositePodGroup gate); with --rack, the CompositePodGroup asks for the
rack.

  tests/perf/gang_cluster.py NODES PODS [--one-by-one] [--rack] [--composite=K] > cluster.yaml
  /usr/bin/time -v build/ksched simulate -f cluster.yaml -q \\
      --feature-gates GenericWorkload=true,TopologyAwareWorkloadScheduling=true
"""
import json
import sys


def main():
    nodes, pods = int(sys.argv[1]), int(sys.argv[2])
    one_by_one = "--one-by-one" in sys.argv
    rack = "--rack" in sys.argv
    groups = next((int(a.split("=")[1]) for a in sys.argv if a.startswith("--composite=")), 0)
    per_rack = max(40, pods // 16 + 1) if rack else 40
    docs = []
    for i in range(nodes):
        name = f"node-{i}"
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": name,
                                  "labels": {"kubernetes.io/hostname": name,
                                             "example.com/rack": f"rack-{i // per_rack}"}},
                     "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                                "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"}}})
    topology = {"topology": [{"key": "example.com/rack"}]}
    if groups and not one_by_one:
        spec = {"workloadRef": {"workloadName": "train", "templateName": "train"},
                "schedulingPolicy": {"gang": {"minGroupCount": groups}}}
        if rack:
            spec["schedulingConstraints"] = topology
        docs.append({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
                     "metadata": {"name": "train", "namespace": "bench", "uid": "train-uid"},
                     "spec": spec})
        for g in range(groups):
            docs.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                         "metadata": {"name": f"train-{g}", "namespace": "bench",
                                      "uid": f"train-{g}-uid"},
                         "spec": {"parentCompositePodGroupName": "train",
                                  "schedulingPolicy": {"gang": {"minCount": pods // groups}}}})
    elif not one_by_one:
        spec = {"schedulingPolicy": {"gang": {"minCount": pods}}}
        if rack:
            spec["schedulingConstraints"] = topology
        docs.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                     "metadata": {"name": "train", "namespace": "bench", "uid": "train-uid"},
                     "spec": spec})
    for i in range(pods):
        spec = {"containers": [{"name": "c", "image": "trainer",
                                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}
        if groups and not one_by_one:
            spec["schedulingGroup"] = {"podGroupName": f"train-{i * groups // pods}"}
        elif not one_by_one:
            spec["schedulingGroup"] = {"podGroupName": "train"}
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"worker-{i}", "namespace": "bench"}, "spec": spec})
    for d in docs:
        print("---")
        print(json.dumps(d))


if __name__ == "__main__":
    main()
