// Replays the fuzz targets' inputs without libFuzzer (any compiler): every file of the
// directories given is fed to the target's LLVMFuzzerTestOneInput, as the fuzzer would.
//
//   ksched_fuzz_replay <target> <dir or file>...
//
// A directory that does not exist counts as empty. A crash of the target is a crash of this
// program (the sanitizer builds report it); an exception escaping is reported with the file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "targets.inc"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <target> <dir or file>...\ntargets:", argv[0]);
    for (const auto& t : kTargets) std::fprintf(stderr, " %s", t.name);
    std::fputc('\n', stderr);
    return 2;
  }
  const std::string_view name = argv[1];
  const auto* target = std::find_if(std::begin(kTargets), std::end(kTargets),
                                    [&](const auto& t) { return name == t.name; });
  if (target == std::end(kTargets)) {
    std::fprintf(stderr, "unknown target %s\n", argv[1]);
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i) {
    std::error_code ec;
    const fs::path p = argv[i];
    if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "%s: cannot read\n", f.c_str());
      return 1;
    }
    try {
      target->run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s: uncaught exception: %s\n", argv[1], f.c_str(), e.what());
      return 1;
    } catch (...) {
      std::fprintf(stderr, "%s: %s: uncaught exception\n", argv[1], f.c_str());
      return 1;
    }
  }
  std::printf("%s: replayed %zu inputs\n", argv[1], files.size());
  return 0;
}
