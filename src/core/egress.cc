#include "core/egress.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace maestro {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The host as the allow-list compares it: lowercase, no trailing dot.
std::string HostKey(std::string_view host) {
  std::string h = Lower(host);
  while (!h.empty() && h.back() == '.') h.pop_back();
  return h;
}

IpAddress V4(const uint8_t* b) {
  IpAddress a;
  std::copy(b, b + 4, a.bytes.begin());
  return a;
}

bool InNet(const IpAddress& a, const IpAddress& base, int prefix) {
  if (a.v6 != base.v6) return false;
  for (int i = 0; prefix > 0; ++i, prefix -= 8) {
    const uint8_t mask = prefix >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - prefix));
    if ((a.bytes[i] & mask) != (base.bytes[i] & mask)) return false;
  }
  return true;
}

std::string_view InternalV4(const uint8_t* b) {
  const uint8_t x = b[0], y = b[1], z = b[2], w = b[3];
  if (x == 0) return "unspecified (0.0.0.0/8)";
  if (x == 127) return "loopback (127.0.0.0/8)";
  if (x == 10 || (x == 172 && (y & 0xf0) == 16) || (x == 192 && y == 168)) return "private";
  if (x == 100 && (y & 0xc0) == 64) return "shared CGNAT (100.64.0.0/10)";
  if (x == 169 && y == 254) {
    return z == 169 && w == 254 ? "cloud metadata (169.254.169.254)"
                                : "link-local (169.254.0.0/16)";
  }
  if (x == 192 && y == 0 && (z == 0 || z == 2)) return "reserved";
  if ((x == 198 && (y == 18 || y == 19)) || (x == 198 && y == 51 && z == 100) ||
      (x == 203 && y == 0 && z == 113)) {
    return "reserved";
  }
  if ((x & 0xf0) == 224) return "multicast (224.0.0.0/4)";
  if (x == 255 && y == 255 && z == 255 && w == 255) return "broadcast";
  if ((x & 0xf0) == 240) return "reserved (240.0.0.0/4)";
  return "";
}

bool AllZero(const uint8_t* b, int n) {
  return std::all_of(b, b + n, [](uint8_t c) { return c == 0; });
}

// The resolved addresses of `host` (numeric spellings normalized by the
// resolver, as the connection's own lookup would).
Result<std::vector<IpAddress>> Resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0) {
    return Status(StatusCode::kUnavailable,
                  fmt::format("cannot resolve {}: {}", host, gai_strerror(rc)), "url");
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(res, &freeaddrinfo);
  std::vector<IpAddress> out;
  for (const addrinfo* ai = res; ai; ai = ai->ai_next) {
    IpAddress a;
    if (ai->ai_family == AF_INET) {
      const auto* sin = reinterpret_cast<const sockaddr_in*>(ai->ai_addr);
      a = V4(reinterpret_cast<const uint8_t*>(&sin->sin_addr));
    } else if (ai->ai_family == AF_INET6) {
      const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(ai->ai_addr);
      a.v6 = true;
      std::memcpy(a.bytes.data(), &sin6->sin6_addr, 16);
    } else {
      continue;
    }
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
  if (out.empty())
    return Status(StatusCode::kUnavailable, "cannot resolve " + host + ": no address", "url");
  return out;
}

// One URL part, or "" when the URL has none.
std::string Part(CURLU* u, CURLUPart what, unsigned flags = 0) {
  char* p = nullptr;
  if (curl_url_get(u, what, &p, flags) != CURLUE_OK || !p) return "";
  std::string out(p);
  curl_free(p);
  return out;
}

Status Refused(const std::string& why) {
  return InvalidArgument("refused by the egress policy: " + why, "url");
}

}  // namespace

Result<IpAddress> IpAddress::Parse(std::string_view text) {
  const std::string s(text);
  IpAddress a;
  if (inet_pton(AF_INET, s.c_str(), a.bytes.data()) == 1) return a;
  a.v6 = true;
  if (inet_pton(AF_INET6, s.c_str(), a.bytes.data()) == 1) return a;
  return InvalidArgument("not an IP address: '" + s + "'");
}

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN] = {0};
  inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buf, sizeof buf);
  return buf;
}

std::string_view InternalRange(const IpAddress& a) {
  const uint8_t* b = a.bytes.data();
  if (!a.v6) return InternalV4(b);
  if (AllZero(b, 16)) return "unspecified (::)";
  if (AllZero(b, 15) && b[15] == 1) return "loopback (::1)";
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d carry a v4.
  if (AllZero(b, 10) && ((b[10] == 0xff && b[11] == 0xff) || (b[10] == 0 && b[11] == 0))) {
    std::string_view v4 = InternalV4(b + 12);
    return v4.empty() ? "" : "IPv6 form of an internal IPv4 address";
  }
  // NAT64 64:ff9b::a.b.c.d, and the local-use 64:ff9b:1::/48.
  if (b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) {
    if (b[4] == 0 && b[5] == 1) return "NAT64 local use (64:ff9b:1::/48)";
    if (AllZero(b + 4, 8) && !InternalV4(b + 12).empty()) return "NAT64 of an internal IPv4";
  }
  // 6to4 2002:AABB:CCDD::/48 carries a.b.c.d in its second and third groups.
  if (b[0] == 0x20 && b[1] == 0x02 && !InternalV4(b + 2).empty()) return "6to4 of an internal IPv4";
  if ((b[0] & 0xfe) == 0xfc) {
    return b[0] == 0xfd && b[1] == 0 && b[2] == 0x0e && b[3] == 0xc2
               ? "cloud metadata (fd00:ec2::/32)"
               : "private (fc00::/7)";
  }
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return "link-local (fe80::/10)";
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return "site-local (fec0::/10)";
  if (b[0] == 0xff) return "multicast (ff00::/8)";
  if (b[0] == 0x01 && b[1] == 0 && AllZero(b + 2, 6)) return "discard (100::/64)";
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return "documentation";
  return "";
}

std::string EgressTarget::AddressLiteral() const {
  return address.v6 ? "[" + address.ToString() + "]" : address.ToString();
}

Result<EgressPolicy> EgressPolicy::WithAllowList(const std::vector<std::string>& entries,
                                                 const std::string& field) {
  EgressPolicy p;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string& e = entries[i];
    const std::string at = fmt::format("{}[{}]", field, i);
    if (e.empty()) return InvalidArgument(at + ": an empty entry", at);
    const size_t slash = e.find('/');
    auto ip = IpAddress::Parse(e.substr(0, slash));
    if (ip.ok()) {
      const int max = ip->v6 ? 128 : 32;
      int prefix = max;
      if (slash != std::string::npos) {
        const std::string n = e.substr(slash + 1);
        if (n.empty() || n.size() > 3 ||
            !std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
            std::stoi(n) > max) {
          return InvalidArgument(
              fmt::format("{}: '{}' is not a CIDR (prefix 0..{} after the /)", at, e, max), at);
        }
        prefix = std::stoi(n);
      }
      p.nets_.push_back({*ip, prefix});
    } else if (slash == std::string::npos && e.find_first_of(":@ []?#\\") == std::string::npos) {
      p.hosts_.push_back(HostKey(e));
    } else {
      return InvalidArgument(
          fmt::format("{}: '{}' is neither a host name, an IP address nor a CIDR", at, e), at);
    }
    p.allow_.push_back(e);
  }
  return p;
}

bool EgressPolicy::Allows(std::string_view host, const IpAddress& address) const {
  const std::string key = HostKey(host);
  if (std::find(hosts_.begin(), hosts_.end(), key) != hosts_.end()) return true;
  return std::any_of(nets_.begin(), nets_.end(),
                     [&](const Net& n) { return InNet(address, n.base, n.prefix); });
}

Result<EgressTarget> EgressPolicy::Check(const std::string& url) const {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), &curl_url_cleanup);
  if (!u) return Internal("curl_url failed");
  if (CURLUcode rc = curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0); rc != CURLUE_OK) {
    return InvalidArgument(std::string("not a URL: ") + curl_url_strerror(rc), "url");
  }
  EgressTarget t;
  t.scheme = Lower(Part(u.get(), CURLUPART_SCHEME));
  if (t.scheme != "http" && t.scheme != "https") {
    return Refused("only http and https URLs (not " + t.scheme + ")");
  }
  if (!Part(u.get(), CURLUPART_USER).empty() || !Part(u.get(), CURLUPART_PASSWORD).empty()) {
    return Refused("a URL with a user:password@ part");
  }
  if (!Part(u.get(), CURLUPART_ZONEID).empty()) return Refused("a URL with an IPv6 zone id");
  t.host = Part(u.get(), CURLUPART_HOST);
  if (t.host.size() >= 2 && t.host.front() == '[' && t.host.back() == ']') {
    t.host = t.host.substr(1, t.host.size() - 2);
  }
  if (t.host.empty()) return Refused("a URL without a host");
  const std::string port = Part(u.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
  t.port = port.empty() ? 0 : std::atoi(port.c_str());
  if (t.port <= 0 || t.port > 65535) return Refused("a URL without a valid port");

  MAESTRO_ASSIGN_OR_RETURN(std::vector<IpAddress> addresses,
                           resolve_ ? resolve_(t.host) : Resolve(t.host));
  if (addresses.empty()) {
    return Status(StatusCode::kUnavailable, "cannot resolve " + t.host + ": no address", "url");
  }
  // Every address is checked, not only the one connected to: a name that
  // answers with one public and one internal address is refused as a whole.
  for (const IpAddress& a : addresses) {
    std::string_view range = InternalRange(a);
    if (!range.empty() && !Allows(t.host, a)) {
      return Refused(fmt::format(
          "{} is {}, an internal address (the operator may allow it under egress.allow)",
          t.host == a.ToString() ? t.host : t.host + " resolves to " + a.ToString(), range));
    }
  }
  t.address = addresses.front();
  return t;
}

Result<EgressPolicy> EgressPolicyFrom(const Json& section, const std::string& where) {
  auto at = [&](const Status& st) {
    return where.empty() ? st : InvalidArgument(where + ": " + st.message(), st.field());
  };
  if (section.is_null() || (section.is_object() && section.empty())) return EgressPolicy();
  if (!section.is_object()) return at(InvalidArgument("egress must be a mapping", "egress"));
  std::vector<std::string> allow;
  for (const auto& [key, v] : section.items()) {
    const std::string field = "egress." + key;
    if (key != "allow") {
      return at(InvalidArgument(fmt::format("unknown key '{}'; egress has allow", field), field));
    }
    if (v.is_null()) continue;
    if (!v.is_array()) {
      return at(InvalidArgument(field + " must be a list of hosts, IP addresses or CIDRs", field));
    }
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) {
        const std::string f = fmt::format("{}[{}]", field, i);
        return at(InvalidArgument(f + " must be a string (a host, an IP address or a CIDR)", f));
      }
      allow.push_back(v[i].get<std::string>());
    }
  }
  auto p = EgressPolicy::WithAllowList(allow);
  if (!p.ok()) return at(p.status());
  return p;
}

}  // namespace maestro
