#include <cstdio>

int main() {
  std::puts("ksched " KSCHED_VERSION);
  return 0;
}
