#include "core/base64.h"

#include <array>

namespace maestro {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Symbol value per byte; -1 outside the alphabet.
const std::array<int, 256>& Values() {
  static const std::array<int, 256> values = [] {
    std::array<int, 256> v{};
    v.fill(-1);
    for (int i = 0; i < 64; ++i) v[static_cast<unsigned char>(kAlphabet[i])] = i;
    return v;
  }();
  return values;
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  size_t pad = 0;
  if (!text.empty() && text.back() == '=') pad = text[text.size() - 2] == '=' ? 2 : 1;
  const auto& values = Values();
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const size_t symbols = last ? 4 - pad : 4;
    uint32_t n = 0;
    for (size_t k = 0; k < 4; ++k) {
      int v = 0;
      if (k < symbols) {
        v = values[static_cast<unsigned char>(text[i + k])];
        if (v < 0) return std::nullopt;
      } else if (text[i + k] != '=') {
        return std::nullopt;
      }
      n = (n << 6) | static_cast<uint32_t>(v);
    }
    // Bits the padding drops must be zero (one encoding per byte string).
    if (symbols == 3 && (n & 0xFF) != 0) return std::nullopt;
    if (symbols == 2 && (n & 0xFFFF) != 0) return std::nullopt;
    out += static_cast<char>((n >> 16) & 0xFF);
    if (symbols >= 3) out += static_cast<char>((n >> 8) & 0xFF);
    if (symbols == 4) out += static_cast<char>(n & 0xFF);
  }
  return out;
}

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out = Base64Encode(bytes);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return out;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  std::string standard(text);
  for (char& c : standard) {
    if (c == '-') {
      c = '+';
    } else if (c == '_') {
      c = '/';
    } else if (c == '+' || c == '/' || c == '=') {
      return std::nullopt;  // not the URL alphabet, or padded
    }
  }
  while (standard.size() % 4 != 0) standard += '=';
  return Base64Decode(standard);  // strict: a length of 4n+1, stray bits
}

}  // namespace maestro
