// Access: who may do what (issue 49 item 2–3) — roles per team, token
// scopes, what each route needs, and which tasks a user sees.
//
//   Role (per team, and `auth.default_role` outside team spaces):
//     viewer    read
//     approver  read, decide
//     operator  read, run, decide
//     admin     read, run, decide, admin (the team's config, users, every task
//               of the team's spaces, its audit log)
//   The admin token's user ("admin") is admin everywhere. Without `teams:`
//   and with the default `auth.default_role: operator`, every user can do
//   what it could before roles existed (single-user / admin-token mode).
//
//   Scope (what a credential may be used for): read, run, decide, admin. A
//   browser session and a token made before scopes carry every scope; a
//   scoped token only its own. A request may do X when its credential's
//   scopes include X AND the user's role where it acts grants X.
//
//   Need: what a route needs, stated where it is registered (Router::Add):
//   kPublic (no credential), kRead, kRun, kDecide, kAdmin. The dispatcher
//   checks the scope and that the user holds the capability somewhere (else
//   403 naming both); the task operations (TaskService) check the role in the
//   task's team (else 403) after its visibility (else 404).
//
//   Teams (`teams: {name: {members: {user: role}, groups: {group: role}}}`):
//   a user's role in a team is the highest of its `members` entry and the
//   roles of the OIDC groups it was last seen in (store: UserGroups). A
//   space with `team: name` belongs to the team: its tasks are seen by the
//   team's members (a `private` task only by its owner and the team's
//   admins); a non-member gets 404 for them and does not see the space.
//   Tasks of spaces with no team keep the old rule (owner, or shared/unowned
//   for everyone).
//
// Thread safety: Access is immutable after construction except for a small
// cache of users' groups (mutex); every method may be called concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/access_config.h"
#include "api/principal.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/mutex.h"
#include "core/status.h"
#include "store/identity_records.h"
#include "store/judgement_types.h"
#include "store/schedule_types.h"
#include "store/types.h"

namespace maestro::api {

// What a route needs (Router::Add).
enum class Need { kPublic, kRead, kRun, kDecide, kAdmin };

std::string_view RoleName(Role r);  // "viewer", ...; "none"
std::optional<Role> ParseRole(std::string_view s);
uint32_t CapsOf(Role r);                     // viewer → read, ...
uint32_t CapOf(Need n);                      // kPublic → 0
std::string_view CapName(uint32_t one_cap);  // "read", "run", "decide", "admin"
// "read run" / "*" → bits; kInvalidArgument (field "scopes") naming an
// unknown scope.
Result<uint32_t> ParseScopes(std::string_view space_separated);
std::string ScopesText(uint32_t caps);
// The names of `caps`, in the order read, run, decide, admin.
std::vector<std::string> ScopeList(uint32_t caps);  // "read run" ("*" for kAllCaps)

class Access {
 public:
  // `groups` may be null (no OIDC: members only).
  Access(AccessSettings settings, IdentityRecords* groups, Clock* clock = SystemClock::Default());
  // Single-user / admin-token mode: no teams, default role operator.
  Access() : Access(AccessSettings{}, nullptr) {}

  // The user's role in `team` ("" = outside team spaces: default_role;
  // kAdmin for the admin user everywhere).
  Role RoleIn(const std::string& user, const std::string& team) const;
  // Every team the user has a role in, with it.
  std::map<std::string, Role> TeamsOf(const std::string& user) const;
  // The union of the capabilities the user's roles grant anywhere.
  uint32_t CapsAnywhere(const std::string& user) const;
  bool IsAdmin(const std::string& user) const;  // the admin user

  // The team of a space ("" for none or an unknown space).
  std::string TeamOfSpace(const std::string& space) const;
  // Whether the user may see the space at all (a team space: members only).
  bool SpaceVisible(const std::string& space, const std::string& user) const;

  // Visibility (404 when false): see the header comment.
  bool Visible(const Task& task, const std::string& user) const;
  bool Visible(const Schedule& schedule, const std::string& user) const;
  bool Visible(const Mission& mission, const std::string& user) const;
  // Whether `user` may do `cap` on the visible task (its team's role, else
  // default_role); PermissionDenied "your role <r> in team <t> cannot
  // <cap>" when not.
  Status Allow(const Task& task, const std::string& user, uint32_t cap) const;
  // The capabilities `user` has on a visible task (for the UI's buttons).
  uint32_t CapsOn(const Task& task, const std::string& user) const;

  // The route's check: `p`'s scopes include `need` and the user's roles
  // grant it somewhere. PermissionDenied naming what is missing.
  Status AllowRoute(const Principal& p, Need need) const;

  // Forget cached groups of `user` (after a sign-in changed them).
  void Forget(const std::string& user) const;

  const AccessSettings& settings() const { return settings_; }

 private:
  std::vector<std::string> GroupsOf(const std::string& user) const;

  const AccessSettings settings_;
  IdentityRecords* const store_;
  Clock* const clock_;
  mutable Mutex mu_;
  struct CachedGroups {
    std::vector<std::string> groups;
    TimeMs at = 0;
  };
  mutable std::map<std::string, CachedGroups> group_cache_ GUARDED_BY(mu_);
};

}  // namespace maestro::api
