// OIDC relying party (issue 49 item 1): maestro's side of the OpenID Connect
// authorization-code flow with PKCE, for the web UI's sign-in.
//
//   OidcClient::Start()     → the provider's authorization URL (state, nonce,
//                             S256 code challenge; the caller keeps the state,
//                             nonce and verifier: store/identity_records.h)
//   OidcClient::Finish()    → exchanges the callback's code at the token
//                             endpoint (client_secret_basic, the verifier) and
//                             verifies the ID token it gets
//   OidcClient::VerifyIdToken() → the checks, also on their own (tests)
//
// The ID token checks (OpenID Connect Core 1.0 §3.1.3.7): a JWS in compact
// form signed with an asymmetric algorithm the provider's JWKS has a key for
// (RS256/RS384/RS512, PS256/384/512, ES256/384/512; never "none" nor HMAC),
// the signature verified with libcjose (no hand-written crypto); `iss` equals
// the configured issuer exactly; `aud` is or contains the client id (and
// `azp`, when present with several audiences, is the client id); `exp` in the
// future and `iat` not in the future, both within `clock_skew_s`; `nonce`
// equals the login's nonce (no replay of another login's token). Any failure
// is kUnauthenticated with a message naming the check ("the ID token has
// expired", "the ID token's audience is not maestro", ...), never the token.
//
// Discovery and keys: `<issuer>/.well-known/openid-configuration` is read on
// first use (and again after a failure) for the endpoints and jwks_uri; the
// JWKS is cached and fetched again when a token names a `kid` the cache does
// not have (key rotation), at most once per `jwks_min_refresh_s` so a flood
// of forged kids does not hammer the provider. The issuer is an operator's
// setting (config `auth.oidc.issuer`), not a user's: its URL is fetched as
// given (internal providers on private addresses are normal).
//
// Thread safety: every method may be called from any thread concurrently
// (a mutex guards the cached discovery document and keys).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/http_client.h"
#include "core/json.h"
#include "core/mutex.h"
#include "core/status.h"

namespace maestro::identity {

struct OidcSettings {
  std::string issuer;  // exactly as the provider's `iss`
  std::string client_id;
  std::string client_secret;  // client_secret_basic at the token endpoint
  std::string redirect_uri;   // this server's /auth/callback as the provider knows it
  std::vector<std::string> scopes = {"openid", "profile", "email"};
  std::string username_claim = "preferred_username";
  std::string groups_claim = "groups";  // a list of strings (or one string)
  int64_t clock_skew_s = 60;
  int64_t jwks_min_refresh_s = 10;
  int64_t http_timeout_ms = 10'000;
};

// What a verified ID token says about the user.
struct OidcIdentity {
  std::string issuer;
  std::string subject;              // `sub`
  std::string username;             // the username_claim's value ("" when absent)
  std::vector<std::string> groups;  // the groups_claim's strings ([] when absent)
  std::string email;                // "" when absent
  Json claims;                      // every claim, for logs and tests
};

// A sign-in to start: send the browser to `url`; keep the rest for Finish.
struct OidcStart {
  std::string url;
  std::string state;          // random, 256 bits, base64url
  std::string nonce;          // random, 256 bits, base64url
  std::string code_verifier;  // random, 256 bits, base64url (RFC 7636)
};

class OidcClient {
 public:
  OidcClient(OidcSettings settings, Clock* clock = SystemClock::Default());
  ~OidcClient();

  // Reads discovery now (serve's start: a wrong issuer fails early and
  // loudly). kUnavailable naming the URL when it cannot.
  Status Discover();
  // The authorization URL with fresh state, nonce and verifier.
  Result<OidcStart> Start();
  // The callback's `code` exchanged and its ID token verified against
  // `nonce`; `code_verifier` as Start made it.
  Result<OidcIdentity> Finish(const std::string& code, const std::string& code_verifier,
                              const std::string& nonce);
  // The checks above on a compact JWS.
  Result<OidcIdentity> VerifyIdToken(const std::string& id_token, const std::string& nonce);
  // The provider's end_session_endpoint ("" when it has none), for logout.
  std::string EndSessionEndpoint();

  const OidcSettings& settings() const { return settings_; }

 private:
  struct Keys;  // discovery + JWKS cache (oidc.cc)
  const OidcSettings settings_;
  Clock* const clock_;
  HttpClient http_;
  Mutex mu_;
  std::unique_ptr<Keys> keys_ GUARDED_BY(mu_);
};

// `n` random bytes from the system's CSPRNG.
Result<std::string> RandomBytes(size_t n);

}  // namespace maestro::identity
