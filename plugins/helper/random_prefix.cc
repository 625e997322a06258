#include "plugins/helper/random_prefix.h"

#include <random>
#include <string_view>

namespace ksched::plugins::helper {

std::string randomString(size_t n) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::random_device rd;
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  std::string s(n, ' ');
  for (char& c : s) c = kAlphabet[pick(rd)];
  return s;
}

}  // namespace ksched::plugins::helper
