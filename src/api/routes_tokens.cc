// Scoped API tokens (issue 49 item 4): a user makes, lists and revokes its
// own bearer tokens; the admin still makes tokens for other users.
//
//   GET    /api/local/tokens           {"tokens":[TokenJson]}  the caller's own, newest first
//   POST   /api/local/tokens           {"name"?, "scopes"?, "expires_in_s"?, "user"?}
//          → 201 {"token": <plain, shown once>, ...TokenJson}
//   DELETE /api/local/tokens/{ulid}    → 204; not the caller's (or no such) → 404
//
// TokenJson: {"id","name","user","scopes":["read",...],"created_at",
// "expires_at","revoked_at"} (ms since the epoch; 0 = none). The plain token
// is 32 random bytes as hex, shown once in the POST's answer; the store keeps
// its SHA-256 hex (IdentityRecords::AddScopedToken), and nothing logs it.
//
// POST checks, each a 400 naming the field: `name` at most 100 characters of
// printable UTF-8; `scopes` a non-empty array of read/run/decide/admin
// (absent: the scopes of the credential the caller uses); `expires_in_s`
// 1..31536000 (absent: 90 days). A scope the caller's own credential lacks
// is a 403 (a read token cannot mint a run token), and a token minted with a
// token never outlives it (its expiry is clamped to the minting token's).
// `user` naming someone else is the admin's call only (403 otherwise): the
// old `{"user":"alice"}` still answers 201 {"user","token",...}, and without
// `expires_in_s` that token never expires, as before scopes.
//
// A token only ever acts within its scopes AND its user's roles
// (api/access.h); the Authenticator refuses a revoked or expired token on
// its next request. Each create and revoke is audited (token.create,
// token.revoke: the token's id, name, scopes and user — never the token).
#include <algorithm>

#include "api/api_server.h"
#include "api/audit.h"
#include "api/http_util.h"
#include "core/hash.h"
#include "core/ids.h"
#include "core/utf8.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {
namespace tokens_routes {  // distinct names in the unity build

constexpr size_t kMaxNameChars = 100;
constexpr int64_t kMaxExpiresInS = 365LL * 24 * 3600;
constexpr int64_t kDefaultExpiresInS = 90LL * 24 * 3600;
constexpr uint32_t kCapsInOrder[] = {api::kCapRead, api::kCapRun, api::kCapDecide, api::kCapAdmin};

// The scope names of `caps`, in the order read, run, decide, admin.
Json ScopeNames(uint32_t caps) { return api::ScopeList(caps); }

Json TokenJson(const ApiTokenRecord& r) {
  // "*" (every scope the user's roles grant) lists all four: the roles
  // bound a token either way.
  auto caps = api::ParseScopes(r.scopes);
  return {{"id", r.id},
          {"name", r.name},
          {"user", r.user},
          {"scopes", ScopeNames(caps.ok() ? *caps : 0)},
          {"created_at", r.created_at},
          {"expires_at", r.expires_at},
          {"revoked_at", r.revoked_at}};
}

Status CheckName(const std::string& name) {
  if (!IsValidUtf8(name)) return InvalidArgument("name is not UTF-8", "name");
  size_t chars = 0;
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) return InvalidArgument("name has a control character", "name");
    if ((c & 0xc0) != 0x80) ++chars;  // a character's first byte
  }
  if (chars > kMaxNameChars) {
    return InvalidArgument("name is longer than 100 characters", "name");
  }
  return Status::Ok();
}

// `scopes`: a non-empty array of scope names → their bits.
Result<uint32_t> ScopesField(const Json& v) {
  const Status bad = InvalidArgument(
      "scopes must be a non-empty array of \"read\", \"run\", \"decide\", \"admin\"", "scopes");
  if (!v.is_array() || v.empty()) return bad;
  uint32_t caps = 0;
  for (const Json& s : v) {
    if (!s.is_string()) return bad;
    const std::string name = s.get<std::string>();
    uint32_t one = 0;
    for (uint32_t c : kCapsInOrder) {
      if (name == api::CapName(c)) one = c;
    }
    if (one == 0) {
      return InvalidArgument(
          "unknown scope '" + api::SafeEcho(name) + "'; scopes are read, run, decide, admin",
          "scopes");
    }
    caps |= one;
  }
  return caps;
}

// The caller's own token record `id`, or nullopt.
Result<std::optional<ApiTokenRecord>> OwnToken(IdentityRecords& store, const std::string& user,
                                               const std::string& id) {
  auto list = store.ListTokens(user);
  if (!list.ok()) return list.status();
  for (auto& t : *list) {
    if (t.id == id) return std::optional<ApiTokenRecord>(std::move(t));
  }
  return std::optional<ApiTokenRecord>();
}

Json AuditDetail(const ApiTokenRecord& r) {
  auto caps = api::ParseScopes(r.scopes);
  return {{"token_id", r.id},
          {"name", r.name},
          {"scopes", ScopeNames(caps.ok() ? *caps : 0)},
          {"user", r.user}};
}

// The handlers, one per route (docs/api.md "Tokens").

// GET /api/local/tokens: the caller's own tokens (revoked ones too).
api::HttpResponse ListTokens(IdentityRecords& store, const api::HttpRequest& req) {
  auto list = store.ListTokens(req.user);
  if (!list.ok()) return ReplyError(list.status());
  Json tokens = Json::array();
  for (const auto& t : *list) tokens.push_back(TokenJson(t));
  return Reply(200, {{"tokens", tokens}});
}

// POST /api/local/tokens: a new token for the caller (or, the admin's call,
// for `user`), shown once.
api::HttpResponse CreateToken(IdentityRecords& store, const api::Access& access,
                              api::AuditLog& audit, Clock* clock, const api::HttpRequest& req) {
  auto body = api::ParseObject(req.body);
  if (!body.ok()) return ReplyError(body.status());
  if (Status st = api::OnlyFields(*body, {"name", "scopes", "expires_in_s", "user"}); !st.ok()) {
    return ReplyError(st);
  }
  std::string user = req.user;
  const bool for_other = body->contains("user") && !(*body)["user"].is_null();
  if (for_other) {
    if (Status st = api::RequiredString(*body, "user", &user); !st.ok()) return ReplyError(st);
    if (user != req.user && !access.IsAdmin(req.user)) {
      return ReplyError(PermissionDenied("only the admin makes tokens for other users"));
    }
  }
  std::string name;
  if (Status st = api::OptionalString(*body, "name", &name); !st.ok()) return ReplyError(st);
  if (Status st = CheckName(name); !st.ok()) return ReplyError(st);
  uint32_t caps = req.caller.scopes;
  if (body->contains("scopes")) {
    auto parsed = ScopesField((*body)["scopes"]);
    if (!parsed.ok()) return ReplyError(parsed.status());
    caps = *parsed;
  }
  // The old admin call ({"user"} alone) made tokens that never expire.
  int expires_in_s = for_other && user != req.user ? 0 : static_cast<int>(kDefaultExpiresInS);
  if (Status st = api::OptionalInt(*body, "expires_in_s", 1, kMaxExpiresInS, &expires_in_s);
      !st.ok()) {
    return ReplyError(st);
  }
  if (uint32_t missing = caps & ~req.caller.scopes; missing != 0) {
    std::string names;
    for (const auto& n : ScopeNames(missing)) {
      names += (names.empty() ? "" : ", ") + n.get<std::string>();
    }
    return ReplyError(PermissionDenied("the credential you call with lacks scope " + names +
                                       ": a token cannot grant more than its maker's"));
  }
  const TimeMs now = clock->NowMs();
  ApiTokenRecord rec;
  rec.id = NewSortableId(now);
  rec.user = user;
  rec.name = name;
  rec.scopes = api::ScopesText(caps);
  rec.created_at = now;
  rec.expires_at = expires_in_s > 0 ? now + static_cast<TimeMs>(expires_in_s) * 1000 : 0;
  // A token minted with a token never outlives it.
  if (req.caller.via == api::Principal::Via::kToken && !req.caller.token_id.empty()) {
    auto parent = OwnToken(store, req.user, req.caller.token_id);
    if (!parent.ok()) return ReplyError(parent.status());
    if (parent->has_value() && (*parent)->expires_at > 0 &&
        (rec.expires_at == 0 || rec.expires_at > (*parent)->expires_at)) {
      rec.expires_at = (*parent)->expires_at;
    }
  }
  auto token = api::NewSecretToken();
  if (!token.ok()) return ReplyError(token.status());
  if (Status st = store.AddScopedToken(Sha256Hex(*token), rec); !st.ok()) return ReplyError(st);
  audit.Record(req.user, "token.create", "", "", AuditDetail(rec));
  // The only time the token is shown; the store keeps its hash.
  Json out = TokenJson(rec);
  out["token"] = *token;
  return Reply(201, out);
}

// DELETE /api/local/tokens/{ulid}: revokes the caller's own token; it is
// refused from its next request on.
api::HttpResponse RevokeToken(IdentityRecords& store, api::Authenticator& auth,
                              api::AuditLog& audit, Clock* clock, const api::HttpRequest& req) {
  const std::string& id = req.params[0];
  auto rec = OwnToken(store, req.user, id);
  if (!rec.ok()) return ReplyError(rec.status());
  if (!rec->has_value()) return ReplyError(NotFound("no such token"));
  auto revoked = store.RevokeToken(req.user, id, clock->NowMs());
  if (!revoked.ok()) return ReplyError(revoked.status());
  if (!*revoked) return ReplyError(NotFound("no such token"));
  // This process's cache forgets it now: its very next request is a 401
  // (another API process's cache within api::kTokenCacheMs).
  auth.ForgetTokenId(id);
  audit.Record(req.user, "token.revoke", "", "", AuditDetail(**rec));
  api::HttpResponse res;
  res.status = 204;
  return res;
}

}  // namespace tokens_routes
}  // namespace

void ApiServer::RoutesTokens() {
  using api::Need;
  using Req = api::HttpRequest;
  router_.Add("GET", "/api/local/tokens", Need::kRead,
              [this](const Req& r) { return tokens_routes::ListTokens(store_, r); });
  router_.Add("POST", "/api/local/tokens", Need::kRead, [this](const Req& r) {
    return tokens_routes::CreateToken(store_, *access_, *audit_, options_.clock, r);
  });
  router_.Add("DELETE", "/api/local/tokens/{ulid}", Need::kRead, [this](const Req& r) {
    return tokens_routes::RevokeToken(store_, auth_, *audit_, options_.clock, r);
  });
}

}  // namespace maestro
