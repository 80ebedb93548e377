#include "store/title.h"

#include <fmt/format.h>

#include <vector>

#include "core/strings.h"
#include "core/utf8.h"

namespace maestro {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// Byte length of the (valid) UTF-8 sequence starting with `lead`.
size_t SeqLen(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  return 4;
}

// The code point of the valid sequence at s[i] (for the C1 control check).
uint32_t CodePoint(std::string_view s, size_t i, size_t n) {
  auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(s[i + k])); };
  if (n == 1) return b(0);
  if (n == 2) return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  if (n == 3) return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

bool IsControl(uint32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }

// One marker at the front of `line`: a run of '#' (a heading), or a single
// '-', '*' (list items) or '>' (a quote), followed by a space or the end; a
// '>' needs no space. Returns whether one was removed.
bool StripMarker(std::string_view* line) {
  std::string_view s = *line;
  if (s.empty()) return false;
  size_t n = 0;
  if (s[0] == '#') {
    while (n < s.size() && s[n] == '#') ++n;
  } else if (s[0] == '-' || s[0] == '*' || s[0] == '>') {
    n = 1;
  } else {
    return false;
  }
  if (n < s.size() && !IsSpace(s[n]) && s[0] != '>') return false;
  *line = Trim(s.substr(n));
  return true;
}

// The characters of `line` (valid UTF-8) with every run of whitespace and
// control characters made one space.
std::vector<std::string_view> Characters(std::string_view line) {
  std::vector<std::string_view> out;
  bool space = false;
  for (size_t i = 0; i < line.size();) {
    size_t n = SeqLen(static_cast<unsigned char>(line[i]));
    if (IsControl(CodePoint(line, i, n)) || line[i] == ' ') {
      space = true;
    } else {
      if (space && !out.empty()) out.push_back(" ");
      space = false;
      out.push_back(line.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string AutoTitle(std::string_view instruction) {
  const std::string text = ValidUtf8(instruction);
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = Trim(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    while (StripMarker(&line)) {
    }
    std::vector<std::string_view> chars = Characters(line);
    if (chars.empty()) continue;
    std::string out;
    if (chars.size() <= kAutoTitleMaxChars) {
      for (auto c : chars) out += c;
      return out;
    }
    // Keep room for the ellipsis; cut before the last space that fits.
    size_t keep = kAutoTitleMaxChars - 1;
    size_t cut = keep;
    while (cut > 0 && chars[cut] != " ") --cut;
    if (cut > 0) keep = cut;
    while (keep > 0 && chars[keep - 1] == " ") --keep;
    for (size_t i = 0; i < keep; ++i) out += chars[i];
    return out + "…";
  }
  return "";
}

Status CheckTitle(std::string_view title, std::string* out) {
  if (!IsValidUtf8(title)) return InvalidArgument("title must be valid UTF-8", "title");
  std::string_view t = Trim(title);
  size_t chars = 0;
  for (size_t i = 0; i < t.size(); ++chars) {
    size_t n = SeqLen(static_cast<unsigned char>(t[i]));
    if (IsControl(CodePoint(t, i, n))) {
      return InvalidArgument("title must not contain control characters", "title");
    }
    i += n;
  }
  if (chars == 0) return InvalidArgument("title must not be empty", "title");
  if (chars > kTitleMaxChars) {
    return InvalidArgument(fmt::format("title must be at most {} characters", kTitleMaxChars),
                           "title");
  }
  *out = std::string(t);
  return Status::Ok();
}

}  // namespace maestro
