#!/usr/bin/env python3
"""Writes a drifted cluster for `ksched advise -f`: NODES nodes of 16 cpus and 64Gi in three
zones, and PODS bound pods of four shapes (250m/512Mi, 500m/1Gi, 1/2Gi, 2/4Gi) from 200
ReplicaSets (their objects included, so that default spreading applies), placed unevenly: a
tenth of the nodes empty, the others filled to a random share between 20 % and 95 % of their
cpu. Deterministic (seeded).

  tests/perf/advise_cluster.py NODES PODS > cluster.yaml
  /usr/bin/time -v build/ksched advise -f cluster.yaml -q --balance
"""
import json
import random
import sys

SHAPES = [("250m", 250, "512Mi"), ("500m", 500, "1Gi"), ("1", 1000, "2Gi"), ("2", 2000, "4Gi")]


def main():
    nodes, pods = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(7)
    docs = []
    names = []
    for i in range(nodes):
        name = f"node-{i}"
        names.append(name)
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": name,
                                  "labels": {"kubernetes.io/hostname": name,
                                             "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
                     "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                                "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"}}})
    for r in range(200):
        docs.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                     "metadata": {"name": f"rs-{r}", "namespace": "default", "uid": f"rs-{r}"},
                     "spec": {"selector": {"matchLabels": {"app": f"rs-{r}"}}}})
    # Each used node gets a cpu budget; pods go to the nodes with budget left, at random.
    used = [n for n in names if rng.random() >= 0.1]
    room = {n: int(16000 * rng.uniform(0.2, 0.95)) for n in used}
    placed = 0
    while placed < pods and room:
        node = rng.choice(list(room))
        r = rng.randrange(200)
        cpu, milli, memory = SHAPES[r % 4]
        if room[node] < milli:
            del room[node]
            continue
        room[node] -= milli
        name = f"rs-{r}-{placed}"
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": name, "namespace": "default", "uid": name,
                                  "labels": {"app": f"rs-{r}"},
                                  "ownerReferences": [{"apiVersion": "apps/v1",
                                                       "kind": "ReplicaSet", "name": f"rs-{r}",
                                                       "uid": f"rs-{r}", "controller": True}]},
                     "spec": {"nodeName": node, "schedulerName": "default-scheduler",
                              "containers": [{"name": "c", "image": "app",
                                              "resources": {"requests": {"cpu": cpu,
                                                                         "memory": memory}}}]},
                     "status": {"phase": "Running"}})
        placed += 1
    if placed < pods:
        print(f"only {placed} pods fit", file=sys.stderr)
    for d in docs:
        print("---")
        print(json.dumps(d))


if __name__ == "__main__":
    main()
