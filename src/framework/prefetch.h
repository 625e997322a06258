// Prefetching the nodes a Filter or Score loop is about to visit. A cycle visits hundreds of
// nodes whose NodeInfo and Node (about 1.1 kB together) are rarely still in the core's cache
// from the last cycle: without a hint every plugin's first touch of a node waits for memory
// (the first Filter plugin, NodeUnschedulable, spent most of its time there).
#pragma once

#include <cstddef>

#include <ksched/api/node.h>
#include <ksched/node_info.h>

namespace ksched::framework {

inline void prefetchBytes(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += 64) {
#if defined(__x86_64__)
    // GCC 12 drops __builtin_prefetch of these addresses at -O2; the instruction itself stays.
    asm volatile("prefetcht0 %0" : : "m"(*(c + off)));
#else
    __builtin_prefetch(c + off);
#endif
  }
}

// The loop visits nodes[i] now: ask for nodes[i + 2 * kPrefetchDistance]'s NodeInfo and, its
// NodeInfo having been asked for earlier, for nodes[i + kPrefetchDistance]'s Node. `at(k)` gives
// the k-th node of the loop's order or nullptr past its end.
inline constexpr int kPrefetchDistance = 6;

template <typename At>
inline void prefetchAhead(int i, At&& at) {
  if (const NodeInfo* far = at(i + 2 * kPrefetchDistance); far != nullptr) {
    prefetchBytes(far, sizeof(NodeInfo));
  }
  if (const NodeInfo* near = at(i + kPrefetchDistance); near != nullptr) {
    if (const api::Node* node = near->node(); node != nullptr) {
      // The lines plugins read of a Node: its labels (NodeAffinity, spreading) and its spec
      // (unschedulable, taints); the rest of what they read is in the NodeInfo.
      prefetchBytes(&node->metadata.labels, sizeof(node->metadata.labels));
      prefetchBytes(&node->spec, sizeof(node->spec));
    }
  }
}

// The same for nodes only a few lines of which are read, those the plugins that always run
// read: the NodeInfo's first line (its node and name). Such a node takes a fraction of the
// time of one every plugin reads: the line is asked for further ahead. Not asked for: the
// image map (ImageLocality's answers are kept) and the Node's name (PodTopologySpread reads it
// only when it ignores nodes; reaching it needs the node pointer of a line not yet arrived).
inline constexpr int kNamesPrefetchDistance = 16;

template <typename At>
inline void prefetchNamesAhead(int i, At&& at) {
  if (const NodeInfo* far = at(i + kNamesPrefetchDistance); far != nullptr) {
    prefetchBytes(far, 64);
  }
}

}  // namespace ksched::framework
