// EgressPolicy: what maestro may connect to on someone's behalf.
//
// Where it sits: every outbound URL a user, an agent or a config names — an
// A2A push receiver (api/a2a_push.h), a webhook (notify/webhooks.h), an MCP
// Streamable-HTTP server (mcp/http_transport.h) — goes through Check before
// any byte leaves, and HttpClient (core/http_client.h, HttpClientOptions::
// egress) connects only to the address Check returned. Internal calls (the
// LLM client, the OTLP exporter, the CLI talking to its own server) carry no
// policy and are not checked.
//
// Contract of Check(url):
//   - the URL is parsed by libcurl's URL API (the parser that will send it):
//     http or https only, no user:password@ part, no IPv6 zone id;
//   - the host is resolved with getaddrinfo, which also normalizes numeric
//     spellings (127.1, 2130706433, 0x7f000001, 0177.0.0.1);
//   - if ANY resolved address is internal (InternalRange: loopback,
//     unspecified, private, CGNAT, link-local and cloud metadata, multicast,
//     broadcast and reserved, and IPv6 forms embedding one of those v4
//     addresses) the URL is refused unless the operator's allow-list names
//     the URL's host, the address, or a CIDR holding it;
//   - the result carries the checked address; the caller connects to it
//     only (no second lookup: a DNS answer that changes between the check
//     and the connect cannot move the connection — no rebinding).
// Refusals are kInvalidArgument with field "url" and a message naming the
// host, the address and its range; a name that does not resolve is
// kUnavailable (it may resolve later).
//
// Config (`egress:` in maestro.yaml, docs/operations.md):
//   egress:
//     allow: [hooks.internal, 127.0.0.1, 10.1.0.0/16, "fd00::/8"]
// EgressPolicyFrom validates it; errors name `egress.<key>` and the
// section's file:line:col.
//
// Thread safety: immutable after construction; Check may run on any thread.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/status.h"

namespace maestro {

// One IP address, v4 or v6, in network byte order.
struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // v4: the first 4

  // The strict textual form (inet_pton: "127.0.0.1", "::1");
  // kInvalidArgument for anything else ("127.1" is a resolver's spelling).
  static Result<IpAddress> Parse(std::string_view text);
  std::string ToString() const;
  bool operator==(const IpAddress&) const = default;
};

// The internal range `a` falls in ("loopback", "private", "link-local", ...),
// or "" for a public address. IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
// (::a.b.c.d), 6to4 (2002:AABB:CCDD::) and NAT64 (64:ff9b::a.b.c.d) forms
// are judged by the v4 address they carry.
std::string_view InternalRange(const IpAddress& a);

// The URL after a successful Check: where to connect.
struct EgressTarget {
  std::string scheme;  // "http" | "https"
  std::string host;    // as the URL names it (IPv6 without brackets)
  int port = 0;
  IpAddress address;  // the checked address: the only one to connect to

  // The address as a URL host: "1.2.3.4" or "[2001:db8::1]".
  std::string AddressLiteral() const;
};

class EgressPolicy {
 public:
  // The strict policy: no internal destination at all.
  EgressPolicy() = default;

  // Entries are a host name (matched case-insensitively against the URL's
  // host, without a trailing dot), an IP address, or a CIDR (a.b.c.d/n,
  // v6/n). kInvalidArgument naming `field` (e.g. "egress.allow[2]") for a
  // malformed one.
  static Result<EgressPolicy> WithAllowList(const std::vector<std::string>& entries,
                                            const std::string& field = "egress.allow");

  // See the contract above. `url` as the caller will send it.
  Result<EgressTarget> Check(const std::string& url) const;

  // The name lookup Check uses (getaddrinfo unless replaced): tests stand
  // in a resolver whose answer differs from the system's, as a rebinding
  // DNS server's second answer would.
  using ResolveFn = std::function<Result<std::vector<IpAddress>>(const std::string& host)>;
  void set_resolver(ResolveFn resolve) { resolve_ = std::move(resolve); }

  // Whether an internal address of `host` is admitted by the allow-list.
  bool Allows(std::string_view host, const IpAddress& address) const;

  const std::vector<std::string>& allow() const { return allow_; }

 private:
  struct Net {
    IpAddress base;
    int prefix = 0;
  };
  std::vector<std::string> allow_;  // as configured (docs, messages)
  std::vector<std::string> hosts_;  // lowercase, no trailing dot
  std::vector<Net> nets_;           // an IP is a /32 or /128
  ResolveFn resolve_;               // null: getaddrinfo
};

// Validates the `egress` section (`where` = its file:line:col, "" = none).
// An empty or absent section is the strict policy.
Result<EgressPolicy> EgressPolicyFrom(const Json& section, const std::string& where);

}  // namespace maestro
