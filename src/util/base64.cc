#include "util/base64.h"

#include <array>
#include <cstdint>

namespace ksched::util {
namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

}  // namespace

std::optional<std::string> base64Decode(std::string_view in) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::array<int8_t, 256> table{};
  table.fill(-1);
  for (size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  }

  std::string out;
  out.reserve(in.size() / 4 * 3 + 3);
  uint32_t acc = 0;
  int bits = 0;
  size_t symbols = 0;
  size_t padding = 0;
  for (char c : in) {
    if (isSpace(c)) continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding > 0) return std::nullopt;
    int8_t v = table[static_cast<unsigned char>(c)];
    if (v < 0) return std::nullopt;
    acc = ((acc << 6) | static_cast<uint32_t>(v)) & 0xFFFFFFu;
    bits += 6;
    ++symbols;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFFu));
    }
  }
  if (symbols % 4 == 1) return std::nullopt;
  if (padding > 0 && (padding > 2 || (symbols + padding) % 4 != 0)) return std::nullopt;
  return out;
}

std::string base64Encode(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const auto n = (static_cast<uint32_t>(static_cast<uint8_t>(in[i])) << 16) |
                   (static_cast<uint32_t>(static_cast<uint8_t>(in[i + 1])) << 8) |
                   static_cast<uint32_t>(static_cast<uint8_t>(in[i + 2]));
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i + 1 == in.size()) {
    const auto n = static_cast<uint32_t>(static_cast<uint8_t>(in[i])) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    const auto n = (static_cast<uint32_t>(static_cast<uint8_t>(in[i])) << 16) |
                   (static_cast<uint32_t>(static_cast<uint8_t>(in[i + 1])) << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

}  // namespace ksched::util
