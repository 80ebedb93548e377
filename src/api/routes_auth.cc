// The web UI's sign-in through the company's identity provider (issue 49
// item 1; OpenID Connect authorization code + PKCE, identity/oidc.h), and
// GET /api/me (who the caller is, its teams, roles and scopes).
//
//   GET  /auth/login?return_to=/path  → 302 to the provider. The state,
//        nonce and PKCE verifier are kept in the store (any API process may
//        get the callback) under the state's hash, and the state in an
//        HttpOnly cookie of this browser (maestro_login, Path=/auth, 10 min):
//        a callback whose state is not this browser's is refused (login CSRF).
//   GET  /auth/callback?code&state    → the state consumed once (a replayed
//        callback is refused), the code exchanged, the ID token verified; its
//        username claim is the maestro user — bound to the token's (issuer,
//        subject) the first time, so another identity can never take that
//        name — and its groups claim the user's groups (teams: api/access.h).
//        Then a session: cookies maestro_session (HttpOnly, SameSite=Lax)
//        and maestro_csrf (readable by the UI, SameSite=Strict), Secure when
//        the redirect URI is https; 302 back to return_to (a path of this
//        server only: no open redirect).
//   POST /auth/logout                 → the session ends (CSRF-checked like
//        every session write); {logout_url}: the provider's end-session URL.
// Each failure is 401 (403 for a name bound to another identity) naming
// the check, never a token. Sign-ins and sign-outs are audited.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <regex>

#include "api/api_server.h"
#include "api/http_util.h"
#include "core/hash.h"

namespace maestro {
namespace {

using api::HttpRequest;
using api::HttpResponse;

constexpr TimeMs kLoginMaxAgeMs = 10 * 60 * 1000;
constexpr const char* kLoginCookie = "maestro_login";

// Names no OIDC user may take: the admin token's, open mode's, the server's.
bool ReservedUser(const std::string& name) {
  return name == api::kAdminUser || name == "local" || name == "system";
}

bool GoodUserName(const std::string& name) {
  static const std::regex kName(R"(^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$)");
  return std::regex_match(name, kName);
}

// A local path to go back to after signing in: "/..." but never "//host"
// or "/\host" (browsers read both as another origin).
std::string SafeReturnTo(const std::string& r) {
  if (r.empty() || r.size() > 512 || r[0] != '/') return "/";
  if (r.size() > 1 && (r[1] == '/' || r[1] == '\\')) return "/";
  for (unsigned char c : r) {
    if (c < 0x21 || c == 0x7f || c == '\\') return "/";
  }
  return r;
}

std::string CookieAttrs(bool secure, const char* path, int64_t max_age_s, const char* same_site,
                        bool http_only) {
  return fmt::format("; Path={}; Max-Age={}; SameSite={}{}{}", path, max_age_s, same_site,
                     http_only ? "; HttpOnly" : "", secure ? "; Secure" : "");
}

HttpResponse Redirect(const std::string& to) {
  HttpResponse res;
  res.status = 302;
  res.content_type = "text/plain";
  res.body = "redirecting\n";
  res.headers.emplace_back("Location", to);
  res.headers.emplace_back("Cache-Control", "no-store");
  return res;
}

HttpResponse SignInFailed(const Status& st, const std::string& where) {
  spdlog::warn("sign-in refused: {}", st.message());
  HttpResponse res = api::ReplyError(st);
  // The cookie of a failed attempt goes too.
  res.headers.emplace_back("Set-Cookie", std::string(kLoginCookie) + "=" +
                                             CookieAttrs(false, where.c_str(), 0, "Lax", true));
  return res;
}

}  // namespace

void ApiServer::AuthRoutes() {
  router_.Add("GET", "/auth/login", api::Need::kPublic, [this](const HttpRequest& req) {
    if (!options_.oidc) return api::ReplyError(NotFound("single sign-on is not configured"));
    auto start = options_.oidc->Start();
    if (!start.ok()) return api::ReplyError(start.status());
    const TimeMs now = options_.clock->NowMs();
    PendingLogin login{start->nonce, start->code_verifier, SafeReturnTo(req.Query("return_to")),
                       now};
    if (Status st = store_.AddPendingLogin(Sha256Hex(start->state), login, now, kLoginMaxAgeMs);
        !st.ok()) {
      return api::ReplyError(st);
    }
    const bool secure = options_.oidc->settings().redirect_uri.rfind("https:", 0) == 0;
    HttpResponse res = Redirect(start->url);
    res.headers.emplace_back("Set-Cookie",
                             std::string(kLoginCookie) + "=" + start->state +
                                 CookieAttrs(secure, "/auth", kLoginMaxAgeMs / 1000, "Lax", true));
    return res;
  });

  router_.Add("GET", "/auth/callback", api::Need::kPublic, [this](const HttpRequest& req) {
    if (!options_.oidc) return api::ReplyError(NotFound("single sign-on is not configured"));
    const std::string error = req.Query("error");
    if (!error.empty()) {
      return SignInFailed(Unauthenticated("the identity provider refused the sign-in: " +
                                          api::SafeEcho(error.substr(0, 100))),
                          "/auth");
    }
    const std::string state = req.Query("state");
    const std::string code = req.Query("code");
    if (state.empty() || code.empty()) {
      return SignInFailed(Unauthenticated("the callback has no code or state"), "/auth");
    }
    const std::string cookie = api::CookieValue(req, kLoginCookie);
    if (cookie.empty() || Sha256Hex(cookie) != Sha256Hex(state)) {
      return SignInFailed(
          Unauthenticated("this sign-in was not started in this browser (state mismatch)"),
          "/auth");
    }
    const TimeMs now = options_.clock->NowMs();
    auto login = store_.TakePendingLogin(Sha256Hex(state), now, kLoginMaxAgeMs);
    if (!login.ok()) return api::ReplyError(login.status());
    if (!login->has_value()) {
      return SignInFailed(Unauthenticated("this sign-in has expired or was already used"), "/auth");
    }
    auto who = options_.oidc->Finish(code, (*login)->code_verifier, (*login)->nonce);
    if (!who.ok()) return SignInFailed(who.status(), "/auth");
    const std::string& user = who->username;
    if (!GoodUserName(user) || ReservedUser(user)) {
      return SignInFailed(
          Unauthenticated(fmt::format("the ID token's {} claim is not a usable user name",
                                      options_.oidc->settings().username_claim)),
          "/auth");
    }
    auto bound = store_.BindIdentity(who->issuer, who->subject, user, now);
    if (!bound.ok()) return api::ReplyError(bound.status());
    if (!*bound) {
      return SignInFailed(PermissionDenied("the user name " + user +
                                           " belongs to another identity of the provider"),
                          "/auth");
    }
    if (Status st = store_.SetUserGroups(user, who->groups, now); !st.ok()) {
      return api::ReplyError(st);
    }
    access_->Forget(user);
    auto session = auth_.StartSession(user, options_.session_ttl_s * 1000);
    if (!session.ok()) return api::ReplyError(session.status());
    audit_->Record(user, "auth.login", "", "",
                   {{"issuer", who->issuer}, {"subject", who->subject}, {"groups", who->groups}});
    const bool secure = options_.oidc->settings().redirect_uri.rfind("https:", 0) == 0;
    HttpResponse res = Redirect((*login)->return_to);
    res.headers.emplace_back("Set-Cookie",
                             std::string(api::kSessionCookie) + "=" + session->cookie +
                                 CookieAttrs(secure, "/", options_.session_ttl_s, "Lax", true));
    res.headers.emplace_back("Set-Cookie",
                             std::string(api::kCsrfCookie) + "=" + session->csrf +
                                 CookieAttrs(secure, "/", options_.session_ttl_s, "Strict", false));
    res.headers.emplace_back("Set-Cookie", std::string(kLoginCookie) + "=" +
                                               CookieAttrs(secure, "/auth", 0, "Lax", true));
    return res;
  });

  router_.Add("POST", "/auth/logout", api::Need::kRead, [this](const HttpRequest& req) {
    auth_.EndSession(req);
    if (req.caller.via == api::Principal::Via::kSession) {
      audit_->Record(req.user, "auth.logout", "", "", Json::object());
    }
    std::string logout_url;
    if (options_.oidc) {
      logout_url = options_.oidc->EndSessionEndpoint();
      if (!logout_url.empty()) {
        logout_url += (logout_url.find('?') == std::string::npos ? "?" : "&");
        logout_url += "client_id=" + UrlEncode(options_.oidc->settings().client_id);
      }
    }
    HttpResponse res = api::Reply(200, {{"logout_url", logout_url}});
    res.headers.emplace_back("Set-Cookie", std::string(api::kSessionCookie) + "=" +
                                               CookieAttrs(false, "/", 0, "Lax", true));
    res.headers.emplace_back("Set-Cookie", std::string(api::kCsrfCookie) + "=" +
                                               CookieAttrs(false, "/", 0, "Strict", false));
    return res;
  });

  router_.Add("GET", "/api/me", api::Need::kRead, [this](const HttpRequest& req) {
    const api::Principal& p = req.caller;
    const char* via = p.via == api::Principal::Via::kSession      ? "session"
                      : p.via == api::Principal::Via::kAdminToken ? "admin_token"
                      : p.via == api::Principal::Via::kOpen       ? "open"
                                                                  : "token";
    Json teams = Json::array();
    for (const auto& [team, role] : access_->TeamsOf(p.user)) {
      teams.push_back({{"team", team}, {"role", std::string(api::RoleName(role))}});
    }
    const uint32_t can = access_->CapsAnywhere(p.user) & p.scopes;
    return api::Reply(
        200, {{"user", p.user},
              {"via", via},
              {"scopes", api::ScopeList(p.scopes)},
              {"admin", access_->IsAdmin(p.user)},
              {"default_role", std::string(api::RoleName(access_->settings().default_role))},
              {"teams", teams},
              {"can",
               {{"read", (can & api::kCapRead) != 0},
                {"run", (can & api::kCapRun) != 0},
                {"decide", (can & api::kCapDecide) != 0},
                {"admin", (can & api::kCapAdmin) != 0}}}});
  });
}

}  // namespace maestro
