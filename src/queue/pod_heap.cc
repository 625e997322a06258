#include "queue/pod_heap.h"

#include <utility>

namespace ksched::queue::detail {

void EntryHeap::push(Entry* e) {
  e->heapIndex = items_.size();
  items_.push_back(e);
  up(e->heapIndex);
}

Entry* EntryHeap::pop() {
  Entry* top = items_.front();
  erase(top);
  return top;
}

void EntryHeap::erase(Entry* e) {
  const size_t i = e->heapIndex;
  const size_t last = items_.size() - 1;
  if (i != last) {
    swap(i, last);
    items_.pop_back();
    if (!down(i)) up(i);
  } else {
    items_.pop_back();
  }
}

void EntryHeap::fix(Entry* e) {
  if (!down(e->heapIndex)) up(e->heapIndex);
}

void EntryHeap::swap(size_t i, size_t j) noexcept {
  std::swap(items_[i], items_[j]);
  items_[i]->heapIndex = i;
  items_[j]->heapIndex = j;
}

void EntryHeap::up(size_t i) {
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!less_(*items_[i], *items_[parent])) break;
    swap(i, parent);
    i = parent;
  }
}

bool EntryHeap::down(size_t i) {
  const size_t start = i;
  const size_t n = items_.size();
  while (true) {
    const size_t left = 2 * i + 1;
    if (left >= n) break;
    size_t best = left;
    if (const size_t right = left + 1; right < n && less_(*items_[right], *items_[left])) {
      best = right;
    }
    if (!less_(*items_[best], *items_[i])) break;
    swap(i, best);
    i = best;
  }
  return i > start;
}

}  // namespace ksched::queue::detail
