#include "api/access_config.h"

#include <fmt/format.h>

#include <regex>

#include "api/access.h"

namespace maestro::api {

namespace {

// A user, team or group name as the sections may hold it: printable, no
// spaces at the ends, at most 200 bytes.
bool GoodName(const std::string& s) {
  if (s.empty() || s.size() > 200) return false;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return s.front() != ' ' && s.back() != ' ';
}

Status Bad(const std::string& where, const std::string& key, const std::string& what) {
  std::string pos = where.empty() ? "" : where + ": ";
  return InvalidArgument(fmt::format("{}{} {}", pos, key, what), key);
}

Result<std::string> String(const Json& j, const std::string& where, const std::string& key) {
  if (!j.is_string() || j.get<std::string>().empty()) return Bad(where, key, "must be a string");
  return j.get<std::string>();
}

Result<int64_t> Int(const Json& j, const std::string& where, const std::string& key, int64_t min,
                    int64_t max) {
  if (!j.is_number_integer() || j.get<int64_t>() < min || j.get<int64_t>() > max) {
    return Bad(where, key, fmt::format("must be an integer from {} to {}", min, max));
  }
  return j.get<int64_t>();
}

Result<Role> RoleValue(const Json& j, const std::string& where, const std::string& key) {
  auto r = j.is_string() ? ParseRole(j.get<std::string>()) : std::nullopt;
  if (!r || *r == Role::kNone) {
    return Bad(where, key, "must be one of viewer, approver, operator, admin");
  }
  return *r;
}

Result<std::map<std::string, Role>> RoleMap(const Json& j, const std::string& where,
                                            const std::string& key) {
  std::map<std::string, Role> out;
  if (j.is_null()) return out;
  if (!j.is_object()) return Bad(where, key, "must be a mapping of names to roles");
  for (const auto& [name, v] : j.items()) {
    if (!GoodName(name)) return Bad(where, key, "has an empty or unprintable name");
    auto r = RoleValue(v, where, key + "." + name);
    if (!r.ok()) return r.status();
    out[name] = *r;
  }
  return out;
}

Status CheckKeys(const Json& j, const std::string& where, const std::string& prefix,
                 std::initializer_list<const char*> known) {
  for (const auto& [k, v] : j.items()) {
    bool ok = false;
    for (const char* n : known) ok = ok || k == n;
    if (!ok) return Bad(where, prefix + "." + k, "is not a known key");
  }
  return Status::Ok();
}

// An absolute http(s) URL (the issuer and the redirect URI).
Status Url(const std::string& v, const std::string& where, const std::string& key) {
  static const std::regex kUrl(R"(^https?://[^\s/?#]+(/[^\s?#]*)?$)");
  if (!std::regex_match(v, kUrl)) return Bad(where, key, "must be an http(s) URL");
  return Status::Ok();
}

Result<identity::OidcSettings> OidcFrom(const Json& j, const std::string& where,
                                        const std::string& secret_env) {
  const std::string p = "auth.oidc";
  if (!j.is_object()) return Bad(where, p, "must be a mapping");
  MAESTRO_RETURN_IF_ERROR(CheckKeys(j, where, p,
                                    {"issuer", "client_id", "client_secret", "redirect_uri",
                                     "scopes", "username_claim", "groups_claim", "clock_skew_s"}));
  identity::OidcSettings o;
  for (auto [key, out] : {std::pair{"issuer", &o.issuer}, std::pair{"client_id", &o.client_id},
                          std::pair{"redirect_uri", &o.redirect_uri}}) {
    auto v = String(j.value(key, Json()), where, p + "." + key);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  MAESTRO_RETURN_IF_ERROR(Url(o.issuer, where, p + ".issuer"));
  MAESTRO_RETURN_IF_ERROR(Url(o.redirect_uri, where, p + ".redirect_uri"));
  if (j.contains("client_secret")) {
    auto v = String(j["client_secret"], where, p + ".client_secret");
    if (!v.ok()) return v.status();
    o.client_secret = *v;
  } else {
    o.client_secret = secret_env;
  }
  if (o.client_secret.empty()) {
    return Bad(where, p + ".client_secret", "is missing (or set MAESTRO_OIDC_CLIENT_SECRET)");
  }
  if (j.contains("scopes")) {
    const Json& s = j["scopes"];
    if (!s.is_array()) return Bad(where, p + ".scopes", "must be a list of strings");
    o.scopes.clear();
    for (const auto& x : s) {
      if (!x.is_string() || x.get<std::string>().empty() ||
          x.get<std::string>().find(' ') != std::string::npos) {
        return Bad(where, p + ".scopes", "must be a list of strings without spaces");
      }
      o.scopes.push_back(x.get<std::string>());
    }
    if (std::find(o.scopes.begin(), o.scopes.end(), "openid") == o.scopes.end()) {
      return Bad(where, p + ".scopes", "must include openid");
    }
  }
  for (auto [key, out] : {std::pair{"username_claim", &o.username_claim},
                          std::pair{"groups_claim", &o.groups_claim}}) {
    if (!j.contains(key)) continue;
    auto v = String(j[key], where, p + "." + key);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  if (j.contains("clock_skew_s")) {
    auto v = Int(j["clock_skew_s"], where, p + ".clock_skew_s", 0, 600);
    if (!v.ok()) return v.status();
    o.clock_skew_s = *v;
  }
  return o;
}

}  // namespace

Result<AccessSettings> AccessSettingsFrom(const Config& config, const std::string& secret_env) {
  AccessSettings out;
  const Json& a = config.auth;
  const std::string& aw = config.auth_where;
  if (!a.is_null() && !a.is_object()) return Bad(aw, "auth", "must be a mapping");
  if (a.is_object()) {
    MAESTRO_RETURN_IF_ERROR(CheckKeys(a, aw, "auth", {"default_role", "session_ttl_s", "oidc"}));
    if (a.contains("default_role")) {
      auto r = RoleValue(a["default_role"], aw, "auth.default_role");
      if (!r.ok()) return r.status();
      out.default_role = *r;
    }
    if (a.contains("session_ttl_s")) {
      auto v = Int(a["session_ttl_s"], aw, "auth.session_ttl_s", 60, 30 * 86400);
      if (!v.ok()) return v.status();
      out.session_ttl_s = *v;
    }
    if (a.contains("oidc")) {
      auto o = OidcFrom(a["oidc"], aw, secret_env);
      if (!o.ok()) return o.status();
      out.oidc = std::move(*o);
    }
  }
  const Json& t = config.teams;
  const std::string& tw = config.teams_where;
  if (!t.is_null() && !t.is_object()) return Bad(tw, "teams", "must be a mapping");
  if (t.is_object()) {
    for (const auto& [name, v] : t.items()) {
      const std::string p = "teams." + name;
      if (!GoodName(name)) return Bad(tw, "teams", "has an empty or unprintable team name");
      if (!v.is_object()) return Bad(tw, p, "must be a mapping with members and/or groups");
      MAESTRO_RETURN_IF_ERROR(CheckKeys(v, tw, p, {"members", "groups"}));
      TeamSettings team;
      auto m = RoleMap(v.value("members", Json()), tw, p + ".members");
      if (!m.ok()) return m.status();
      auto g = RoleMap(v.value("groups", Json()), tw, p + ".groups");
      if (!g.ok()) return g.status();
      team.members = std::move(*m);
      team.groups = std::move(*g);
      out.teams[name] = std::move(team);
    }
  }
  for (const auto& [name, space] : config.spaces) {
    if (space.team.empty()) continue;
    if (!out.teams.count(space.team)) {
      std::string key = "spaces." + name + ".team";
      return Bad(space.where, key, fmt::format("names no team of `teams:` ('{}')", space.team));
    }
    out.space_team[name] = space.team;
  }
  return out;
}

}  // namespace maestro::api
