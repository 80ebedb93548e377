// OIDC relying party (oidc.h): discovery, the JWKS cache, ID-token checks
// with libcjose, the PKCE code exchange.
#include "identity/oidc.h"

#include <cjose/cjose.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/base64.h"

namespace maestro::identity {

// (Named, not anonymous: OidcClient::Keys holds them.)
namespace oidc_detail {

// One verification key of the provider's JWKS.
struct Key {
  std::string kid;  // "" when the JWK has none
  std::string alg;  // the JWK's own "alg" ("" when absent): then only that alg
  cjose_jwk_kty_t kty = CJOSE_JWK_KTY_RSA;
  std::shared_ptr<cjose_jwk_t> jwk;  // read-only once made; shared with verifiers
};

struct Endpoints {
  std::string authorization;
  std::string token;
  std::string jwks_uri;
  std::string end_session;
};

}  // namespace oidc_detail

namespace {

using oidc_detail::Endpoints;
using oidc_detail::Key;

constexpr size_t kMaxReplyBytes = 1 << 20;  // discovery, JWKS, token replies
constexpr size_t kMaxTokenBytes = 64 * 1024;
constexpr size_t kMaxGroups = 200;
constexpr size_t kMaxGroupChars = 200;
constexpr size_t kMaxProviderWords = 200;  // of a token endpoint's error text in a message

// Printable ASCII only, cut short: a provider's words in our messages.
std::string Sanitize(std::string_view text, size_t max) {
  std::string out;
  for (char c : text) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out;
}

bool IsHttpUrl(const std::string& url) {
  return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
}

// The key type and (for EC) curve an asymmetric JWS algorithm needs; nullopt
// for anything not on the allow-list (none, HS*, unknown).
struct AlgNeeds {
  cjose_jwk_kty_t kty;
  int curve;  // cjose_jwk_ec_curve for EC, 0 for RSA
};
std::optional<AlgNeeds> AllowedAlg(std::string_view alg) {
  if (alg == "RS256" || alg == "RS384" || alg == "RS512" || alg == "PS256" || alg == "PS384" ||
      alg == "PS512") {
    return AlgNeeds{CJOSE_JWK_KTY_RSA, 0};
  }
  if (alg == "ES256") return AlgNeeds{CJOSE_JWK_KTY_EC, CJOSE_JWK_EC_P_256};
  if (alg == "ES384") return AlgNeeds{CJOSE_JWK_KTY_EC, CJOSE_JWK_EC_P_384};
  if (alg == "ES512") return AlgNeeds{CJOSE_JWK_KTY_EC, CJOSE_JWK_EC_P_521};
  return std::nullopt;
}

bool KeyFits(const Key& key, const std::string& alg, const AlgNeeds& needs) {
  if (key.kty != needs.kty) return false;
  if (!key.alg.empty() && key.alg != alg) return false;
  if (needs.kty == CJOSE_JWK_KTY_EC) {
    cjose_err err{};
    if (static_cast<int>(cjose_jwk_EC_get_curve(key.jwk.get(), &err)) != needs.curve) return false;
  }
  return true;
}

// The usable signature keys of a JWKS document: RSA (2048 bits or more) and
// EC keys whose `use` is absent or "sig"; symmetric and malformed keys are
// skipped (a provider never publishes a key maestro should trust as HMAC).
Result<std::vector<Key>> ParseJwks(const std::string& body, const std::string& url) {
  auto doc = ParseJson(body);
  if (!doc.ok() || !doc->is_object() || !doc->contains("keys") || !(*doc)["keys"].is_array()) {
    return Unavailable("the identity provider's JWKS at " + RedactUrl(url) +
                       " is not a JSON object with a \"keys\" array");
  }
  std::vector<Key> keys;
  for (const Json& jwk : (*doc)["keys"]) {
    if (!jwk.is_object()) continue;
    auto text_of = [&](const char* name) {
      auto it = jwk.find(name);
      return it != jwk.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string use = text_of("use");
    if (!use.empty() && use != "sig") continue;
    const std::string kty = text_of("kty");
    if (kty != "RSA" && kty != "EC") continue;
    // Only the public members go to cjose: a JWKS that (wrongly) carries a
    // private key must not make maestro hold it.
    Json pub = {{"kty", kty}};
    for (const char* member : {"n", "e", "crv", "x", "y", "kid"}) {
      if (jwk.contains(member)) pub[member] = jwk[member];
    }
    const std::string text = pub.dump();
    cjose_err err{};
    cjose_jwk_t* raw = cjose_jwk_import(text.data(), text.size(), &err);
    if (raw == nullptr) continue;
    Key key;
    key.jwk = std::shared_ptr<cjose_jwk_t>(raw, [](cjose_jwk_t* k) { cjose_jwk_release(k); });
    key.kty = cjose_jwk_get_kty(raw, &err);
    if (key.kty == CJOSE_JWK_KTY_RSA && cjose_jwk_get_keysize(raw, &err) < 2048) continue;
    key.kid = text_of("kid");
    key.alg = text_of("alg");
    keys.push_back(std::move(key));
  }
  return keys;
}

// An RFC 6749 §2.3.1 credential: each part form-urlencoded, then Basic.
std::string BasicAuth(const std::string& id, const std::string& secret) {
  return "Basic " + Base64Encode(UrlEncode(id) + ":" + UrlEncode(secret));
}

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// A NumericDate claim as whole seconds; nullopt when absent or not a number.
std::optional<int64_t> Seconds(const Json& claims, const char* name) {
  auto it = claims.find(name);
  if (it == claims.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0 || v > 1e13) return std::nullopt;
  return static_cast<int64_t>(v);
}

}  // namespace

struct OidcClient::Keys {
  std::optional<oidc_detail::Endpoints> endpoints;  // discovery, once it succeeded
  std::vector<oidc_detail::Key> keys;
  bool have_keys = false;
  // Of the last JWKS fetch tried (also a failed one: a provider that is
  // down is not asked more often either); the first is always due.
  TimeMs jwks_fetched_ms = std::numeric_limits<TimeMs>::min() / 2;
  // One fetch at a time: the others wait for its keys instead of failing
  // on the rate limit or asking the provider again.
  bool fetching = false;
  CondVar fetch_done;
};

namespace {
HttpClientOptions ClientOptions(const OidcSettings& s) {
  HttpClientOptions o;
  o.connect_timeout_ms = s.http_timeout_ms;
  o.total_timeout_ms = s.http_timeout_ms;
  o.max_body_bytes = kMaxReplyBytes;
  return o;
}
}  // namespace

OidcClient::OidcClient(OidcSettings settings, Clock* clock)
    : settings_(std::move(settings)),
      clock_(clock),
      http_(ClientOptions(settings_)),
      keys_(std::make_unique<Keys>()) {}

OidcClient::~OidcClient() = default;

namespace {

Result<Endpoints> FetchDiscovery(const HttpClient& http, const OidcSettings& s) {
  std::string base = s.issuer;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string url = base + "/.well-known/openid-configuration";
  auto reply = http.Request("GET", url, {{"Accept", "application/json"}});
  if (!reply.ok()) {
    return Unavailable("cannot read the identity provider's discovery document " + RedactUrl(url) +
                       ": " + reply.status().message());
  }
  if (reply->status != 200) {
    return Unavailable("the identity provider's discovery document " + RedactUrl(url) +
                       " answered HTTP " + std::to_string(reply->status));
  }
  auto doc = ParseJson(reply->body);
  if (!doc.ok() || !doc->is_object()) {
    return Unavailable("the identity provider's discovery document " + RedactUrl(url) +
                       " is not a JSON object");
  }
  auto text_of = [&](const char* name) {
    auto it = doc->find(name);
    return it != doc->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  // OpenID Connect Discovery §4.3: the document's issuer is exactly ours.
  if (text_of("issuer") != s.issuer) {
    return Unavailable("the identity provider at " + RedactUrl(url) + " names issuer \"" +
                       Sanitize(text_of("issuer"), 200) + "\", not the configured \"" + s.issuer +
                       "\" (auth.oidc.issuer must be exactly the provider's issuer)");
  }
  Endpoints e;
  e.authorization = text_of("authorization_endpoint");
  e.token = text_of("token_endpoint");
  e.jwks_uri = text_of("jwks_uri");
  e.end_session = text_of("end_session_endpoint");
  for (const auto& [name, value] :
       {std::pair<const char*, const std::string*>{"authorization_endpoint", &e.authorization},
        {"token_endpoint", &e.token},
        {"jwks_uri", &e.jwks_uri}}) {
    if (!IsHttpUrl(*value)) {
      return Unavailable("the identity provider's discovery document " + RedactUrl(url) +
                         " has no http(s) " + name);
    }
  }
  if (!e.end_session.empty() && !IsHttpUrl(e.end_session)) e.end_session.clear();
  return e;
}

}  // namespace

Status OidcClient::Discover() {
  auto endpoints = FetchDiscovery(http_, settings_);
  if (!endpoints.ok()) return endpoints.status();
  MutexLock lock(&mu_);
  keys_->endpoints = std::move(*endpoints);
  return Status();
}

std::string OidcClient::EndSessionEndpoint() {
  {
    MutexLock lock(&mu_);
    if (keys_->endpoints) return keys_->endpoints->end_session;
  }
  if (!Discover().ok()) return "";
  MutexLock lock(&mu_);
  return keys_->endpoints ? keys_->endpoints->end_session : "";
}

Result<OidcStart> OidcClient::Start() {
  std::string authorization;
  {
    MutexLock lock(&mu_);
    if (keys_->endpoints) authorization = keys_->endpoints->authorization;
  }
  if (authorization.empty()) {
    MAESTRO_RETURN_IF_ERROR(Discover());
    MutexLock lock(&mu_);
    authorization = keys_->endpoints->authorization;
  }
  OidcStart start;
  MAESTRO_ASSIGN_OR_RETURN(std::string state, RandomBytes(32));
  MAESTRO_ASSIGN_OR_RETURN(std::string nonce, RandomBytes(32));
  MAESTRO_ASSIGN_OR_RETURN(std::string verifier, RandomBytes(32));
  start.state = Base64UrlEncode(state);
  start.nonce = Base64UrlEncode(nonce);
  start.code_verifier = Base64UrlEncode(verifier);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(start.code_verifier.data(), start.code_verifier.size(), digest, &len, EVP_sha256(),
                 nullptr) != 1) {
    return Internal("SHA-256 failed");
  }
  const std::string challenge =
      Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(digest), len));
  // `openid` always (without it this is plain OAuth and no ID token comes).
  std::string scope = "openid";
  for (const std::string& s : settings_.scopes) {
    if (s != "openid") scope += " " + s;
  }
  start.url = authorization + (authorization.find('?') == std::string::npos ? "?" : "&") +
              "response_type=code&client_id=" + UrlEncode(settings_.client_id) +
              "&redirect_uri=" + UrlEncode(settings_.redirect_uri) + "&scope=" + UrlEncode(scope) +
              "&state=" + start.state + "&nonce=" + start.nonce + "&code_challenge=" + challenge +
              "&code_challenge_method=S256";
  return start;
}

Result<OidcIdentity> OidcClient::Finish(const std::string& code, const std::string& code_verifier,
                                        const std::string& nonce) {
  if (code.empty() || code.size() > 4096) {
    return Unauthenticated("the sign-in callback carries no usable code");
  }
  std::string token_url;
  {
    MutexLock lock(&mu_);
    if (keys_->endpoints) token_url = keys_->endpoints->token;
  }
  if (token_url.empty()) {
    MAESTRO_RETURN_IF_ERROR(Discover());
    MutexLock lock(&mu_);
    token_url = keys_->endpoints->token;
  }
  const std::string body = "grant_type=authorization_code&code=" + UrlEncode(code) +
                           "&redirect_uri=" + UrlEncode(settings_.redirect_uri) +
                           "&code_verifier=" + UrlEncode(code_verifier);
  auto reply =
      http_.Request("POST", token_url,
                    {{"Authorization", BasicAuth(settings_.client_id, settings_.client_secret)},
                     {"Content-Type", "application/x-www-form-urlencoded"},
                     {"Accept", "application/json"}},
                    body);
  if (!reply.ok()) {
    return Unavailable("cannot reach the identity provider's token endpoint " +
                       RedactUrl(token_url) + ": " + reply.status().message());
  }
  auto doc = ParseJson(reply->body);
  if (reply->status != 200) {
    std::string words;
    if (doc.ok() && doc->is_object()) {
      if (auto it = doc->find("error"); it != doc->end() && it->is_string()) {
        words = Sanitize(it->get<std::string>(), 60);
      }
      if (auto it = doc->find("error_description"); it != doc->end() && it->is_string()) {
        words += (words.empty() ? "" : ": ") + Sanitize(it->get<std::string>(), kMaxProviderWords);
      }
    }
    return Unauthenticated("the identity provider refused the sign-in code (HTTP " +
                           std::to_string(reply->status) + (words.empty() ? "" : ", " + words) +
                           ")");
  }
  if (!doc.ok() || !doc->is_object() || !doc->contains("id_token") ||
      !(*doc)["id_token"].is_string()) {
    return Unauthenticated("the identity provider's token reply has no id_token");
  }
  return VerifyIdToken((*doc)["id_token"].get<std::string>(), nonce);
}

namespace {

Result<std::vector<Key>> FetchJwks(const HttpClient& http, const std::string& jwks_uri) {
  auto reply = http.Request("GET", jwks_uri, {{"Accept", "application/json"}});
  if (!reply.ok()) {
    return Unavailable("cannot read the identity provider's keys " + RedactUrl(jwks_uri) + ": " +
                       reply.status().message());
  }
  if (reply->status != 200) {
    return Unavailable("the identity provider's keys " + RedactUrl(jwks_uri) + " answered HTTP " +
                       std::to_string(reply->status));
  }
  return ParseJwks(reply->body, jwks_uri);
}

}  // namespace

Result<OidcIdentity> OidcClient::VerifyIdToken(const std::string& id_token,
                                               const std::string& nonce) {
  // The header first, by hand (base64url JSON, no signature yet): its alg
  // decides whether the token gets anywhere near a key.
  if (id_token.size() > kMaxTokenBytes) return Unauthenticated("the ID token is too large");
  const size_t dot1 = id_token.find('.');
  const size_t dot2 = dot1 == std::string::npos ? dot1 : id_token.find('.', dot1 + 1);
  if (dot2 == std::string::npos || id_token.find('.', dot2 + 1) != std::string::npos) {
    return Unauthenticated("the ID token is not a compact JWS");
  }
  auto header_bytes = Base64UrlDecode(std::string_view(id_token).substr(0, dot1));
  auto header = header_bytes ? ParseJson(*header_bytes) : Result<Json>(Internal(""));
  if (!header.ok() || !header->is_object() || !header->contains("alg") ||
      !(*header)["alg"].is_string()) {
    return Unauthenticated("the ID token's header is not a JSON object with an alg");
  }
  const std::string alg = (*header)["alg"].get<std::string>();
  auto needs = AllowedAlg(alg);
  if (!needs) {
    return Unauthenticated("the ID token's signature algorithm \"" + Sanitize(alg, 20) +
                           "\" is not allowed (only RS*, PS*, ES*)");
  }
  if (header->contains("crit")) {
    return Unauthenticated("the ID token's header has critical extensions maestro does not know");
  }
  std::string kid;
  if (auto it = header->find("kid"); it != header->end()) {
    if (!it->is_string()) return Unauthenticated("the ID token's kid is not a string");
    kid = it->get<std::string>();
  }
  if (dot2 + 1 == id_token.size()) return Unauthenticated("the ID token has no signature");

  // The keys: cached, or fetched (first use; a kid not cached: at most once
  // per jwks_min_refresh_s).
  std::vector<Key> keys;
  std::string jwks_uri;
  bool fetch = false;
  {
    MutexLock lock(&mu_);
    Keys* cache = keys_.get();
    cache->fetch_done.WaitFor(&mu_, std::chrono::milliseconds(3 * settings_.http_timeout_ms),
                              [cache] { return !cache->fetching; });
    if (cache->endpoints) jwks_uri = cache->endpoints->jwks_uri;
    keys = cache->keys;
    const bool known = std::any_of(keys.begin(), keys.end(), [&](const Key& k) {
      return kid.empty() ? KeyFits(k, alg, *needs) : k.kid == kid;
    });
    const TimeMs now = clock_->NowMs();
    fetch = !cache->fetching && (!cache->have_keys || !known) &&
            now - cache->jwks_fetched_ms >= settings_.jwks_min_refresh_s * 1000;
    if (fetch) {
      cache->jwks_fetched_ms = now;
      cache->fetching = true;
    } else if (!cache->have_keys) {
      return Unavailable("the identity provider's keys could not be read; try again shortly");
    }
  }
  if (fetch) {
    Result<std::vector<Key>> fetched = std::vector<Key>{};
    if (jwks_uri.empty()) {
      Status discovered = Discover();
      if (discovered.ok()) {
        MutexLock lock(&mu_);
        jwks_uri = keys_->endpoints->jwks_uri;
      } else {
        fetched = discovered;
      }
    }
    if (fetched.ok()) fetched = FetchJwks(http_, jwks_uri);
    MutexLock lock(&mu_);
    keys_->fetching = false;
    keys_->fetch_done.SignalAll();
    if (!fetched.ok()) return fetched.status();
    keys_->keys = *fetched;
    keys_->have_keys = true;
    keys = std::move(*fetched);
  }

  std::vector<const Key*> candidates;
  for (const Key& k : keys) {
    if (kid.empty() ? KeyFits(k, alg, *needs) : k.kid == kid) candidates.push_back(&k);
  }
  if (candidates.empty()) {
    return Unauthenticated(
        "the ID token is signed with a key the identity provider does not "
        "publish (bad signature)");
  }
  cjose_err err{};
  std::unique_ptr<cjose_jws_t, void (*)(cjose_jws_t*)> jws(
      cjose_jws_import(id_token.data(), id_token.size(), &err), cjose_jws_release);
  if (!jws) return Unauthenticated("the ID token is not a valid JWS");
  // cjose verifies with the alg of the header it parsed itself: it must be
  // the one checked above.
  cjose_header_t* protected_header = cjose_jws_get_protected(jws.get());
  const char* cjose_alg =
      protected_header ? cjose_header_get(protected_header, CJOSE_HDR_ALG, &err) : nullptr;
  if (cjose_alg == nullptr || alg != cjose_alg) {
    return Unauthenticated("the ID token's header is ambiguous");
  }
  bool verified = false;
  for (const Key* k : candidates) {
    if (!KeyFits(*k, alg, *needs)) continue;  // a kid naming a key of another type
    if (cjose_jws_verify(jws.get(), k->jwk.get(), &err)) {
      verified = true;
      break;
    }
  }
  if (!verified) return Unauthenticated("the ID token's signature does not verify (bad signature)");
  uint8_t* plain = nullptr;
  size_t plain_len = 0;
  if (!cjose_jws_get_plaintext(jws.get(), &plain, &plain_len, &err)) {
    return Unauthenticated("the ID token has no payload");
  }
  auto claims = ParseJson(std::string_view(reinterpret_cast<const char*>(plain), plain_len));
  if (!claims.ok() || !claims->is_object()) {
    return Unauthenticated("the ID token's payload is not a JSON object");
  }
  const Json& c = *claims;

  // OpenID Connect Core 1.0 §3.1.3.7.
  auto string_claim = [&](const char* name) -> std::optional<std::string> {
    auto it = c.find(name);
    if (it == c.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  if (string_claim("iss") != settings_.issuer) {
    return Unauthenticated("the ID token's issuer is not " + settings_.issuer);
  }
  const std::string not_ours = "the ID token's audience is not " + settings_.client_id;
  auto aud = c.find("aud");
  if (aud == c.end()) return Unauthenticated(not_ours);
  size_t audiences = 0;
  if (aud->is_string()) {
    if (aud->get<std::string>() != settings_.client_id) return Unauthenticated(not_ours);
    audiences = 1;
  } else if (aud->is_array()) {
    bool ours = false;
    for (const Json& a : *aud) {
      if (!a.is_string()) return Unauthenticated("the ID token's audience is malformed");
      ours = ours || a.get<std::string>() == settings_.client_id;
    }
    if (!ours) return Unauthenticated(not_ours);
    audiences = aud->size();
  } else {
    return Unauthenticated(not_ours);
  }
  if (c.contains("azp")) {
    if (string_claim("azp") != settings_.client_id) {
      return Unauthenticated("the ID token's authorized party (azp) is not " + settings_.client_id);
    }
  } else if (audiences > 1) {
    return Unauthenticated("the ID token has several audiences and no authorized party (azp)");
  }
  const int64_t now_s = clock_->NowMs() / 1000;
  const int64_t skew = settings_.clock_skew_s;
  auto exp = Seconds(c, "exp");
  if (!exp) return Unauthenticated("the ID token has no expiry (exp)");
  if (now_s >= *exp + skew) return Unauthenticated("the ID token has expired");
  auto iat = Seconds(c, "iat");
  if (!iat) return Unauthenticated("the ID token has no issue time (iat)");
  if (*iat > now_s + skew) return Unauthenticated("the ID token was issued in the future (iat)");
  if (c.contains("nbf")) {
    auto nbf = Seconds(c, "nbf");
    if (!nbf || *nbf > now_s + skew) return Unauthenticated("the ID token is not valid yet (nbf)");
  }
  auto token_nonce = string_claim("nonce");
  if (nonce.empty() || !token_nonce || !ConstantTimeEquals(*token_nonce, nonce)) {
    return Unauthenticated("the ID token's nonce does not match this sign-in (replayed token?)");
  }
  auto sub = string_claim("sub");
  if (!sub || sub->empty() || sub->size() > 255) {
    return Unauthenticated("the ID token has no subject (sub)");
  }

  OidcIdentity id;
  id.issuer = settings_.issuer;
  id.subject = *sub;
  id.username = string_claim(settings_.username_claim.c_str()).value_or("");
  id.email = string_claim("email").value_or("");
  auto add_group = [&](const Json& g) {
    if (!g.is_string() || id.groups.size() >= kMaxGroups) return;
    std::string name = g.get<std::string>();
    // Too long to be a group name an operator configured: dropped rather
    // than cut (a cut name could equal a configured one).
    if (name.empty() || name.size() > kMaxGroupChars) return;
    id.groups.push_back(std::move(name));
  };
  if (auto g = c.find(settings_.groups_claim); g != c.end()) {
    if (g->is_array()) {
      for (const Json& item : *g) add_group(item);
    } else {
      add_group(*g);
    }
  }
  id.claims = c;
  return id;
}

Result<std::string> RandomBytes(size_t n) {
  std::string out(n, '\0');
  if (n > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) {
    return Internal("the system's random number generator failed");
  }
  return out;
}

}  // namespace maestro::identity
