// Authenticator: who is calling (issue 49 extends it from bearer tokens to
// scoped tokens and browser sessions). Sits at the front of every route that
// needs a credential (ApiServer::Dispatch); what the caller may then do is
// api/access.h.
//
// Credentials, in order:
//   1. `Authorization: Bearer <token>`: the configured admin token
//      (MAESTRO_ADMIN_TOKEN) is user "admin" with every scope; any other token
//      is looked up by its SHA-256 hex (store: IdentityRecords::TokenByHash) —
//      a revoked or expired one is refused (kUnauthenticated saying which),
//      a live one carries its scopes. The plain token is never stored or
//      logged.
//   2. The `maestro_session` cookie of a browser signed in through OIDC
//      (routes_auth.cc): its SHA-256 hex names a session row (user, CSRF
//      token, expiry); the session carries every scope. A state-changing
//      request on a session needs `X-CSRF-Token` equal to the session's
//      (CheckCsrf) — a cross-site form cannot read it.
//   3. Open mode: no admin token configured, no OIDC and no token in the
//      store: every caller is user "local" (tests and single-user setups).
//
// Token lookups are cached for a few seconds (kTokenCacheMs) so a busy
// client does not read the store per request; a revocation in this process
// drops the cache entry at once (ForgetTokenId), one in another API process
// takes effect within kTokenCacheMs.
//
// Thread safety: all methods may be called concurrently (a mutex guards the
// token cache).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "api/http.h"
#include "api/principal.h"
#include "core/clock.h"
#include "core/env.h"
#include "core/mutex.h"
#include "core/status.h"
#include "store/store.h"

namespace maestro::api {

inline constexpr const char* kSessionCookie = "maestro_session";
inline constexpr const char* kCsrfCookie = "maestro_csrf";
inline constexpr const char* kCsrfHeader = "X-CSRF-Token";
inline constexpr TimeMs kTokenCacheMs = 5'000;

class Authenticator {
 public:
  // `sessions`: whether browser sessions (OIDC) are on; open mode is off then.
  Authenticator(Store& store, std::string admin_token, bool sessions,
                Clock* clock = SystemClock::Default());

  // The caller of `req`, or kUnauthenticated naming why (never the token).
  Result<Principal> Authenticate(const HttpRequest& req);
  // A session request that changes something must carry the CSRF header:
  // kPermissionDenied when it does not match. Other callers pass.
  static Status CheckCsrf(const HttpRequest& req, const Principal& caller);

  // A new session of `user` for `ttl_ms`: {cookie value, csrf token}.
  struct NewSession {
    std::string cookie;
    std::string csrf;
  };
  Result<NewSession> StartSession(const std::string& user, TimeMs ttl_ms);
  // Ends the session of `req`'s cookie (if any).
  void EndSession(const HttpRequest& req);

  // Drops a revoked token from the cache now.
  void ForgetTokenId(const std::string& id);

 private:
  Result<Principal> FromToken(const std::string& token);

  Store& store_;
  const std::string admin_token_hash_;
  const bool sessions_;
  Clock* const clock_;
  Mutex mu_;
  struct Cached {
    ApiTokenRecord rec;
    TimeMs at = 0;
  };
  std::map<std::string, Cached> cache_ GUARDED_BY(mu_);  // token hash -> record
};

// The value of cookie `name` in the request's Cookie header(s), or "".
std::string CookieValue(const HttpRequest& req, std::string_view name);

// Creates the admin token on the first start: when the store has no token,
// generates a random one, stores its hash for user "admin", writes it to
// `<data_dir>/admin_token` (mode 0600) and returns it so the caller can print
// it once. Returns nullopt when tokens already exist.
Result<std::optional<std::string>> EnsureAdminToken(Env& env, ApiTokens& store,
                                                    const std::string& data_dir);

// 32 random bytes from /dev/urandom as lowercase hex.
Result<std::string> NewSecretToken();

}  // namespace maestro::api
