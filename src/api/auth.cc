#include "api/auth.h"

#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "api/access.h"
#include "core/hash.h"

namespace maestro::api {

Authenticator::Authenticator(Store& store, std::string admin_token, bool sessions, Clock* clock)
    : store_(store),
      admin_token_hash_(admin_token.empty() ? "" : Sha256Hex(admin_token)),
      sessions_(sessions),
      clock_(clock) {}

std::string CookieValue(const HttpRequest& req, std::string_view name) {
  for (const auto& [k, v] : req.headers) {
    if (k.size() != 6 || strncasecmp(k.c_str(), "cookie", 6) != 0) continue;
    std::string_view rest = v;
    while (!rest.empty()) {
      size_t semi = rest.find(';');
      std::string_view pair = rest.substr(0, semi);
      rest = semi == std::string_view::npos ? "" : rest.substr(semi + 1);
      while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
      size_t eq = pair.find('=');
      if (eq != std::string_view::npos && pair.substr(0, eq) == name) {
        return std::string(pair.substr(eq + 1));
      }
    }
  }
  return "";
}

Result<Principal> Authenticator::Authenticate(const HttpRequest& req) {
  static const std::string kPrefix = "Bearer ";
  if (!sessions_ && admin_token_hash_.empty()) {
    // Open mode lasts only while no token exists at all (never with OIDC).
    auto n = store_.CountApiTokens();
    if (n.ok() && *n == 0) {
      Principal p;
      p.user = "local";
      p.via = Principal::Via::kOpen;
      return p;
    }
  }
  const std::string header = req.Header("Authorization");
  if (!header.empty()) {
    if (header.rfind(kPrefix, 0) != 0 || header.size() == kPrefix.size()) {
      return Unauthenticated("missing or wrong bearer token");
    }
    return FromToken(header.substr(kPrefix.size()));
  }
  if (sessions_) {
    const std::string cookie = CookieValue(req, kSessionCookie);
    if (!cookie.empty()) {
      auto s = store_.SessionByHash(Sha256Hex(cookie), clock_->NowMs());
      if (!s.ok()) return s.status();
      if (!s->has_value()) return Unauthenticated("the session has ended: sign in again");
      Principal p;
      p.user = (*s)->user;
      p.via = Principal::Via::kSession;
      p.csrf = (*s)->csrf;
      return p;
    }
  }
  return Unauthenticated("missing or wrong bearer token");
}

Result<Principal> Authenticator::FromToken(const std::string& token) {
  const std::string hash = Sha256Hex(token);
  Principal p;
  if (!admin_token_hash_.empty() && hash == admin_token_hash_) {
    p.user = kAdminUser;
    p.via = Principal::Via::kAdminToken;
    return p;
  }
  const TimeMs now = clock_->NowMs();
  std::optional<ApiTokenRecord> rec;
  {
    MutexLock lock(&mu_);
    auto it = cache_.find(hash);
    if (it != cache_.end() && now - it->second.at < kTokenCacheMs) rec = it->second.rec;
  }
  if (!rec) {
    auto r = store_.TokenByHash(hash);
    if (!r.ok()) return r.status();
    if (!r->has_value()) return Unauthenticated("missing or wrong bearer token");
    rec = **r;
    MutexLock lock(&mu_);
    if (cache_.size() > 10'000) cache_.clear();  // bounded; refills on use
    cache_[hash] = {*rec, now};
  }
  if (rec->revoked_at != 0) return Unauthenticated("this token has been revoked");
  if (rec->expires_at != 0 && rec->expires_at <= now) {
    return Unauthenticated("this token has expired");
  }
  auto scopes = ParseScopes(rec->scopes);
  p.user = rec->user;
  p.scopes = scopes.ok() ? *scopes : 0;  // a damaged row grants nothing
  p.via = rec->user == kAdminUser ? Principal::Via::kAdminToken : Principal::Via::kToken;
  p.token_id = rec->id;
  return p;
}

Status Authenticator::CheckCsrf(const HttpRequest& req, const Principal& caller) {
  if (caller.via != Principal::Via::kSession) return Status::Ok();
  if (req.method == "GET" || req.method == "HEAD" || req.method == "OPTIONS") return Status::Ok();
  const std::string sent = req.Header(kCsrfHeader);
  // Compared as hashes: equal length, and no early exit on the secret.
  if (sent.empty() || caller.csrf.empty() || Sha256Hex(sent) != Sha256Hex(caller.csrf)) {
    return PermissionDenied("missing or wrong X-CSRF-Token");
  }
  return Status::Ok();
}

Result<Authenticator::NewSession> Authenticator::StartSession(const std::string& user,
                                                              TimeMs ttl_ms) {
  auto cookie = NewSecretToken();
  if (!cookie.ok()) return cookie.status();
  auto csrf = NewSecretToken();
  if (!csrf.ok()) return csrf.status();
  SessionRecord rec;
  rec.user = user;
  rec.csrf = *csrf;
  rec.created_at = clock_->NowMs();
  rec.expires_at = rec.created_at + ttl_ms;
  MAESTRO_RETURN_IF_ERROR(store_.AddSession(Sha256Hex(*cookie), rec));
  return NewSession{*cookie, *csrf};
}

void Authenticator::EndSession(const HttpRequest& req) {
  const std::string cookie = CookieValue(req, kSessionCookie);
  if (cookie.empty()) return;
  (void)store_.DeleteSession(Sha256Hex(cookie));
}

void Authenticator::ForgetTokenId(const std::string& id) {
  MutexLock lock(&mu_);
  for (auto it = cache_.begin(); it != cache_.end();) {
    it = it->second.rec.id == id ? cache_.erase(it) : std::next(it);
  }
}

Result<std::string> NewSecretToken() {
  unsigned char buf[32];
  std::ifstream in("/dev/urandom", std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(buf), sizeof(buf))) {
    return Internal("cannot read /dev/urandom");
  }
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : buf) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

Result<std::optional<std::string>> EnsureAdminToken(Env& env, ApiTokens& store,
                                                    const std::string& data_dir) {
  auto n = store.CountApiTokens();
  if (!n.ok()) return n.status();
  if (*n > 0) return std::optional<std::string>();
  auto token = NewSecretToken();
  if (!token.ok()) return token.status();
  // Write the file first: a token in the store that nobody can read is worse
  // than a file whose token is not yet valid (the next start retries).
  std::string path = data_dir + "/admin_token";
  if (Status st = WriteStringToFile(env, path, *token + "\n", 0600); !st.ok()) {
    return Internal("cannot write " + path + ": " + st.message());
  }
  // 0600 also when the file existed with a wider mode (open keeps it).
  MAESTRO_RETURN_IF_ERROR(env.SetPermissions(path, 0600));
  MAESTRO_RETURN_IF_ERROR(store.AddApiToken(Sha256Hex(*token), kAdminUser));
  return std::optional<std::string>(*token);
}

}  // namespace maestro::api
