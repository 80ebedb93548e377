// The browser's allow-list: which hosts, and optionally which ports, a
// job's Chromium may reach. An entry is a host ("docs.example.com",
// "10.0.0.5", "[::1]") or "*.example.com" (any subdomain, not the domain
// itself), optionally followed by ":port" (then only that port; without
// it every port). Hosts are compared as written, case-insensitively: no
// entry matches another spelling of an address ("2130706433" is not
// "127.0.0.1"), and a name is resolved only after it matched.
//
// Where it sits: BrowserProxy (browser_proxy.h) admits a connection with
// EndpointAllowed; BrowserSession checks the agent's URLs and the page's
// requests with HostAllowed first (for a clearer error); the config
// (browser_service.h) validates entries with ValidAllowEntry.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

namespace maestro::browser {

// True when `entry` is a host or *.domain, optionally with ":port".
bool ValidAllowEntry(const std::string& entry);

// True when `host` (lower-cased here; an IPv6 literal in brackets) and
// `port` match an entry of `allowed`.
bool EndpointAllowed(const std::vector<std::string>& allowed, const std::string& host, int port);

// True when `url` is http(s) and its host and port (80/443 when absent)
// are on `allowed`.
bool HostAllowed(const std::vector<std::string>& allowed, const std::string& url);

// Splits an authority "host", "host:port", "[v6]" or "[v6]:port" (no
// userinfo) into a lower-cased host and a port (`default_port` when
// absent). False when it is malformed: an empty host, a port that is not
// 1..65535, characters a host name or address cannot have.
bool SplitAuthority(const std::string& authority, int default_port, std::string* host, int* port);

}  // namespace maestro::browser
