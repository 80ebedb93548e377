#include "core/json.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/utf8.h"

namespace maestro {

namespace {

// `s` (well-formed UTF-8) as a JSON string, byte for byte what nlohmann's
// dump(ensure_ascii = false) writes: '"', '\\' and \b \f \n \r \t
// escaped, other bytes below 0x20 as \u00xx, everything else verbatim.
// The library runs every byte through its UTF-8 decoder; tool results of
// tens of KB are serialized once per message, so this copies runs instead.
std::string DumpValidUtf8String(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 16 + 2);
  out += '"';
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
      }
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
  return out;
}

}  // namespace

std::string DumpJson(const Json& value) {
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (IsValidUtf8(s)) return DumpValidUtf8String(s);
  }
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

namespace {

// nlohmann's what() starts with "[json.exception.parse_error.101] "; the
// rest says what went wrong and where. Callers show it to users, who need
// the second part only.
std::string_view WithoutLibraryTag(std::string_view what) {
  if (!what.empty() && what.front() == '[') {
    size_t end = what.find("] ");
    if (end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  return what;
}

}  // namespace

Result<Json> ParseJson(std::string_view text) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return InvalidArgument(
        fmt::format("invalid JSON at byte {}: {}", e.byte, WithoutLibraryTag(e.what())));
  } catch (const Json::exception& e) {  // out_of_range.406: a number that overflows a double
    return InvalidArgument(fmt::format("invalid JSON: {}", WithoutLibraryTag(e.what())));
  }
}

std::string YamlPosition(const std::string& source_name, const YAML::Node& node) {
  YAML::Mark m = node.Mark();
  if (m.is_null()) return source_name;
  return fmt::format("{}:{}:{}", source_name, m.line + 1, m.column + 1);
}

Result<YAML::Node> ParseYaml(const std::string& text, const std::string& source_name) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(
        fmt::format("{}:{}:{}: {}", source_name, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

Result<YAML::Node> LoadYamlFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(fmt::format("{}: cannot open file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseYaml(ss.str(), path);
}

Json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Sequence: {
      Json arr = Json::array();
      for (const auto& item : node) arr.push_back(YamlToJson(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      Json obj = Json::object();
      for (const auto& kv : node) obj[kv.first.as<std::string>()] = YamlToJson(kv.second);
      return obj;
    }
    case YAML::NodeType::Scalar: {
      // Quoted scalars ("123") keep their string type.
      if (node.Tag() == "!") return node.as<std::string>();
      int64_t i;
      if (YAML::convert<int64_t>::decode(node, i)) return i;
      double d;
      if (YAML::convert<double>::decode(node, d)) return d;
      bool b;
      if (YAML::convert<bool>::decode(node, b)) return b;
      return node.as<std::string>();
    }
  }
  return nullptr;
}

namespace {
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string NearestWord(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    // "listen_addr" for "listen": a shared stem counts as a near miss.
    bool stem = c.size() >= 4 && word.size() > c.size() && word.substr(0, c.size()) == c;
    size_t d = stem ? 1 : EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // Accept up to a third of the word's length in edits (at least 2).
  size_t limit = std::max<size_t>(2, word.size() / 3);
  return best_d <= limit ? best : std::string();
}

}  // namespace maestro
