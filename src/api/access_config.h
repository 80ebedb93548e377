// The `auth:` and `teams:` sections of maestro.yaml (issue 49), read into
// plain settings at start: who signs in how (OIDC or bearer tokens only),
// the role of every user outside team spaces, and each team's members and
// provider groups with their roles. Spaces name their team with
// `spaces.<name>.team` (core/config.h). The rules these settings drive are
// api/access.h; the sign-in routes are api/routes_auth.cc.
//
// Errors are kInvalidArgument prefixed with the section's file:line:col and
// naming the key (`auth.default_role`, `teams.platform.groups.eng`, ...).
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "api/principal.h"
#include "core/config.h"
#include "core/status.h"
#include "identity/oidc.h"

namespace maestro::api {

enum class Role { kNone = 0, kViewer = 1, kApprover = 2, kOperator = 3, kAdmin = 4 };

struct TeamSettings {
  std::map<std::string, Role> members;  // maestro user -> role
  std::map<std::string, Role> groups;   // provider group -> role
};

struct AccessSettings {
  Role default_role = Role::kOperator;  // outside team spaces
  int64_t session_ttl_s = 12 * 3600;
  std::optional<identity::OidcSettings> oidc;  // absent: bearer tokens only
  std::map<std::string, TeamSettings> teams;
  std::map<std::string, std::string> space_team;  // space -> team
};

// Reads and checks the sections; `secret_env` is MAESTRO_OIDC_CLIENT_SECRET's
// value ("" = unset), used when the file gives no client_secret.
Result<AccessSettings> AccessSettingsFrom(const Config& config, const std::string& secret_env);

}  // namespace maestro::api
