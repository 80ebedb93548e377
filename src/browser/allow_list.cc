#include "browser/allow_list.h"

#include <algorithm>
#include <cctype>

namespace maestro::browser {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Letters, digits, '-', '_' and non-empty dot-separated labels; or an IPv6
// literal in brackets (hex digits, ':' and '.').
bool ValidHost(const std::string& host) {
  if (host.empty()) return false;
  if (host.front() == '[') {
    if (host.size() < 4 || host.back() != ']') return false;
    return std::all_of(host.begin() + 1, host.end() - 1,
                       [](unsigned char c) { return std::isxdigit(c) || c == ':' || c == '.'; });
  }
  if (host.front() == '.' || host.back() == '.' || host.find("..") != std::string::npos) {
    return false;
  }
  return std::all_of(host.begin(), host.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

bool ParsePort(const std::string& s, int* port) {
  if (s.empty() || s.size() > 5 || !std::all_of(s.begin(), s.end(), ::isdigit)) return false;
  int p = std::stoi(s);
  if (p < 1 || p > 65535) return false;
  *port = p;
  return true;
}

// An entry as its host pattern and port (0 = any).
bool ParseEntry(const std::string& entry, std::string* pattern, int* port) {
  std::string e = Lower(entry);
  *port = 0;
  size_t colon = e.rfind(':');
  size_t bracket = e.rfind(']');
  if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
    if (!ParsePort(e.substr(colon + 1), port)) return false;
    e.erase(colon);
  }
  std::string host = e.rfind("*.", 0) == 0 ? e.substr(2) : e;
  if (!ValidHost(host)) return false;
  *pattern = e;
  return true;
}

std::string HostOf(const std::string& url, std::string* scheme, int* port) {
  size_t colon = url.find("://");
  if (colon == std::string::npos) return "";
  *scheme = Lower(url.substr(0, colon));
  size_t start = colon + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string authority =
      url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (size_t at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  std::string host;
  if (!SplitAuthority(authority, *scheme == "https" ? 443 : 80, &host, port)) return "";
  return host;
}

}  // namespace

bool ValidAllowEntry(const std::string& entry) {
  std::string pattern;
  int port;
  return ParseEntry(entry, &pattern, &port);
}

bool SplitAuthority(const std::string& authority, int default_port, std::string* host, int* port) {
  std::string a = Lower(authority);
  *port = default_port;
  size_t host_end;
  if (!a.empty() && a[0] == '[') {
    size_t close = a.find(']');
    if (close == std::string::npos) return false;
    host_end = close + 1;
  } else {
    host_end = a.find(':');
    if (host_end == std::string::npos) host_end = a.size();
  }
  *host = a.substr(0, host_end);
  if (host_end < a.size()) {
    if (a[host_end] != ':' || !ParsePort(a.substr(host_end + 1), port)) return false;
  }
  return ValidHost(*host);
}

bool EndpointAllowed(const std::vector<std::string>& allowed, const std::string& host_in,
                     int port) {
  const std::string host = Lower(host_in);
  if (!ValidHost(host)) return false;
  for (const std::string& entry : allowed) {
    std::string pattern;
    int entry_port;
    if (!ParseEntry(entry, &pattern, &entry_port)) continue;
    if (entry_port != 0 && entry_port != port) continue;
    if (pattern == host) return true;
    if (pattern.rfind("*.", 0) == 0) {
      std::string suffix = pattern.substr(1);  // ".example.com"
      if (host.size() > suffix.size() &&
          host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return true;
      }
    }
  }
  return false;
}

bool HostAllowed(const std::vector<std::string>& allowed, const std::string& url) {
  std::string scheme;
  int port = 0;
  std::string host = HostOf(url, &scheme, &port);
  if (host.empty() || (scheme != "http" && scheme != "https")) return false;
  return EndpointAllowed(allowed, host, port);
}

}  // namespace maestro::browser
