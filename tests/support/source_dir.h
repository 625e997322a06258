// The repository's root, for tests that read its files (fuzz corpora, examples, config/).
#pragma once

#include <filesystem>

namespace ksched::testing {

// __FILE__ (this header's path) is relative to the directory the test binary is built in when
// the compiler cache rewrote it, whatever the working directory; absolute otherwise.
inline std::filesystem::path repoRoot() {
  std::filesystem::path dir = std::filesystem::path(__FILE__).parent_path();
  if (dir.is_relative()) dir = std::filesystem::read_symlink("/proc/self/exe").parent_path() / dir;
  return (dir / ".." / "..").lexically_normal();
}

}  // namespace ksched::testing
