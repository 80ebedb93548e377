#include "fakellm/reply_text.h"

#include <algorithm>

namespace maestro::fakellm {

std::vector<std::string> SplitUtf8(const std::string& s, size_t n) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    // i + n wraps for npos; min() then still gives the end of s.
    size_t end = std::min(s.size(), i + n);
    while (end < s.size() && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) ++end;
    out.push_back(s.substr(i, end - i));
    i = end;
  }
  return out;
}

}  // namespace maestro::fakellm
