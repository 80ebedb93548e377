#include "api/router.h"

#include <cctype>

namespace maestro::api {
namespace {

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 1;  // paths start with '/'
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

bool AllOf(std::string_view s, bool (*ok)(char)) {
  for (char c : s) {
    if (!ok(c)) return false;
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Decode(std::string_view s, bool plus_is_space = true) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (plus_is_space && s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 &&
               HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::string DecodePath(std::string_view path) { return Decode(path, /*plus_is_space=*/false); }

std::vector<Router::RouteInfo> Router::Routes() const {
  std::vector<RouteInfo> out;
  for (const auto& r : routes_) out.push_back({r.method, r.pattern, r.need});
  return out;
}

void Router::Add(std::string method, std::string_view pattern, Need need, Handler handler) {
  Route route{std::move(method), std::string(pattern), {}, need, std::move(handler)};
  for (std::string_view part : SplitPath(pattern)) {
    Segment seg;
    struct {
      std::string_view name;
      Kind kind;
    } const kPlaceholders[] = {{"{uuid}", Kind::kUuid},
                               {"{id}", Kind::kId},
                               {"{ulid}", Kind::kUlid},
                               {"{rest}", Kind::kRest}};
    for (const auto& p : kPlaceholders) {
      if (part.substr(0, p.name.size()) == p.name) {
        seg.kind = p.kind;
        part.remove_prefix(p.name.size());
        break;
      }
    }
    seg.text = std::string(part);
    route.segments.push_back(std::move(seg));
  }
  routes_.push_back(std::move(route));
}

bool Router::MatchSegment(const Segment& seg, std::string_view part, std::string* capture) {
  if (seg.kind == Kind::kLiteral) return part == seg.text;
  if (part.size() < seg.text.size() || part.substr(part.size() - seg.text.size()) != seg.text) {
    return false;
  }
  std::string_view value = part.substr(0, part.size() - seg.text.size());
  bool ok = false;
  switch (seg.kind) {
    case Kind::kUuid:
      ok = value.size() == 36 && AllOf(value, [](char c) {
             return isxdigit(static_cast<unsigned char>(c)) != 0 || c == '-';
           });
      break;
    case Kind::kId:
      ok = value.size() >= 26 && value.size() <= 36 && AllOf(value, [](char c) {
             return isalnum(static_cast<unsigned char>(c)) != 0 || c == '-';
           });
      break;
    case Kind::kUlid:
      ok = value.size() == 26 &&
           AllOf(value, [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'); });
      break;
    case Kind::kLiteral:
    case Kind::kRest:  // matched by Match (it spans segments)
      break;
  }
  if (ok) *capture = std::string(value);
  return ok;
}

bool Router::Fits(std::string_view placeholder, std::string_view value) {
  Segment seg;
  if (placeholder == "{uuid}") {
    seg.kind = Kind::kUuid;
  } else if (placeholder == "{id}") {
    seg.kind = Kind::kId;
  } else if (placeholder == "{ulid}") {
    seg.kind = Kind::kUlid;
  } else {
    return false;
  }
  std::string capture;
  return MatchSegment(seg, value, &capture);
}

void Router::CountRequest(std::string_view method, std::string_view pattern, int status) {
  static constexpr std::string_view kVerbs[] = {"GET",    "HEAD",    "POST", "PUT",
                                                "DELETE", "OPTIONS", "PATCH"};
  std::string verb = "OTHER";
  for (std::string_view v : kVerbs) {
    if (method == v) verb = std::string(v);
  }
  std::string route = kUnmatched;
  if (!pattern.empty()) {
    // Only a pattern of the table becomes a label (bounded cardinality).
    for (const Route& r : routes_) {
      if (r.pattern == pattern) {
        route = r.pattern;
        break;
      }
    }
  }
  MutexLock lock(&counts_mu_);
  ++counts_[{std::move(verb), std::move(route), status}];
}

std::vector<Router::RequestCount> Router::RequestCounts() const {
  std::vector<RequestCount> out;
  MutexLock lock(&counts_mu_);
  out.reserve(counts_.size());
  for (const auto& [key, n] : counts_) {
    out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), n});
  }
  return out;
}

bool Router::MatchPath(const Route& route, std::string_view path,
                       const std::vector<std::string_view>& parts,
                       std::vector<std::string>* captures) {
  const bool rest = !route.segments.empty() && route.segments.back().kind == Kind::kRest;
  const size_t fixed = route.segments.size() - (rest ? 1 : 0);
  if (rest ? parts.size() <= fixed : parts.size() != fixed) return false;
  captures->clear();
  for (size_t i = 0; i < fixed; ++i) {
    std::string capture;
    if (!MatchSegment(route.segments[i], parts[i], &capture)) return false;
    if (route.segments[i].kind != Kind::kLiteral) captures->push_back(capture);
  }
  if (rest) {
    // Everything after the fixed segments, as sent; an empty tail is no match.
    size_t at = 0;
    for (size_t i = 0; i < fixed; ++i) at += parts[i].size() + 1;
    std::string_view tail = path.substr(at + 1);
    if (tail.empty()) return false;
    captures->emplace_back(tail);
  }
  return true;
}

const Router::Handler* Router::Match(std::string_view method, std::string_view path,
                                     std::vector<std::string>* params, std::string* pattern,
                                     Need* need) const {
  if (pattern) pattern->clear();
  if (path.empty() || path.front() != '/') return nullptr;
  const std::vector<std::string_view> parts = SplitPath(path);
  std::vector<std::string> captures;
  for (const Route& route : routes_) {
    if (route.method != method || !MatchPath(route, path, parts, &captures)) continue;
    *params = std::move(captures);
    if (pattern) *pattern = route.pattern;
    if (need) *need = route.need;
    return &route.handler;
  }
  return nullptr;
}

bool Router::NeedsToken(std::string_view path) const {
  if (path.empty() || path.front() != '/') return false;
  const std::vector<std::string_view> parts = SplitPath(path);
  std::vector<std::string> captures;
  for (const Route& route : routes_) {
    if (route.need != Need::kPublic && MatchPath(route, path, parts, &captures)) return true;
  }
  return false;
}

void SplitTarget(std::string_view target, std::string* path,
                 std::vector<std::pair<std::string, std::string>>* query) {
  size_t q = target.find('?');
  *path = std::string(target.substr(0, q));
  if (q == std::string_view::npos) return;
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    size_t eq = pair.find('=');
    if (!pair.empty()) {
      query->emplace_back(Decode(pair.substr(0, eq)),
                          eq == std::string_view::npos ? "" : Decode(pair.substr(eq + 1)));
    }
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
}

}  // namespace maestro::api
