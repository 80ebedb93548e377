// Principal: the authenticated caller of one request (issue 49) — its user,
// what its credential may be used for (scopes), and how it came. Set by
// ApiServer::Dispatch on HttpRequest::caller before a route runs; the rules
// that use it are in api/access.h.
//
// Thread safety: a plain value.
#pragma once

#include <cstdint>
#include <string>

namespace maestro::api {

// The admin token's user: admin everywhere (api/access.h).
inline constexpr const char* kAdminUser = "admin";

// Capability bits; a scope set is their OR.
enum Cap : uint32_t { kCapRead = 1, kCapRun = 2, kCapDecide = 4, kCapAdmin = 8 };
inline constexpr uint32_t kAllCaps = kCapRead | kCapRun | kCapDecide | kCapAdmin;

// The authenticated caller of one request.
struct Principal {
  std::string user;
  uint32_t scopes = kAllCaps;  // the credential's
  enum class Via { kOpen, kAdminToken, kToken, kSession } via = Via::kToken;
  std::string csrf;      // kSession: the session's CSRF token
  std::string token_id;  // kToken: the scoped token's id ("" for legacy)
};

}  // namespace maestro::api
