// ksched: the daemon with the in-tree plugins (src/app/ holds the wiring).
#include <ksched/app.h>

#ifdef KSCHED_TCMALLOC
#include <gperftools/malloc_extension.h>

#include <cstdlib>
#endif

int main(int argc, char** argv) {
#ifdef KSCHED_TCMALLOC
  // tcmalloc lets its per-thread caches hold 32 MiB in all by default; ksched's few dozen
  // threads allocate little each, and 4 MiB costs no measurable CPU. The environment variable
  // tcmalloc reads at start still wins when set.
  if (std::getenv("TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES") == nullptr) {
    MallocExtension::instance()->SetNumericProperty("tcmalloc.max_total_thread_cache_bytes",
                                                    size_t{4} << 20);
  }
#endif
  return ksched::app::run(argc, argv);
}
