// Command-line flags of the benchmark tools (tests/perf): "--name value" or "--name=value";
// "--help" or "-h" prints the usage and exits 0.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <set>
#include <string>

namespace ksched::perf {

// Calls set(name, value) for each flag; a name in `switches` takes no value (it gets "true").
// False, after a message and the usage on stderr, when a flag lacks its value, set() returns
// false (an unknown flag or a value it refuses) or throws (a number that is not one).
inline bool parseFlags(int argc, char** argv, const char* usage,
                       const std::set<std::string>& switches,
                       const std::function<bool(const std::string&, const std::string&)>& set) {
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i], v;
    if (k == "--help" || k == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    if (switches.contains(k)) {
      v = "true";
    } else if (auto eq = k.find('='); eq != std::string::npos) {
      v = k.substr(eq + 1);
      k.resize(eq);
    } else if (i + 1 < argc) {
      v = argv[++i];
    } else {
      std::fprintf(stderr, "flag %s has no value\n%s", k.c_str(), usage);
      return false;
    }
    try {
      if (!set(k, v)) {
        std::fprintf(stderr, "unknown flag or bad value: %s %s\n%s", k.c_str(), v.c_str(), usage);
        return false;
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "flag %s: bad value %s\n", k.c_str(), v.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace ksched::perf
