#include "api/access.h"

#include <fmt/format.h>

#include <algorithm>

namespace maestro::api {

namespace {

// A user's groups are read again after this long (another API process may
// have seen a sign-in that changed them).
constexpr TimeMs kGroupsTtlMs = 30'000;

struct CapNames {
  uint32_t cap;
  const char* name;
};
constexpr CapNames kCapNames[] = {
    {kCapRead, "read"}, {kCapRun, "run"}, {kCapDecide, "decide"}, {kCapAdmin, "admin"}};

}  // namespace

std::string_view RoleName(Role r) {
  switch (r) {
    case Role::kViewer:
      return "viewer";
    case Role::kApprover:
      return "approver";
    case Role::kOperator:
      return "operator";
    case Role::kAdmin:
      return "admin";
    case Role::kNone:
      break;
  }
  return "none";
}

std::optional<Role> ParseRole(std::string_view s) {
  for (Role r : {Role::kViewer, Role::kApprover, Role::kOperator, Role::kAdmin}) {
    if (s == RoleName(r)) return r;
  }
  return std::nullopt;
}

uint32_t CapsOf(Role r) {
  switch (r) {
    case Role::kViewer:
      return kCapRead;
    case Role::kApprover:
      return kCapRead | kCapDecide;
    case Role::kOperator:
      return kCapRead | kCapRun | kCapDecide;
    case Role::kAdmin:
      return kAllCaps;
    case Role::kNone:
      break;
  }
  return 0;
}

uint32_t CapOf(Need n) {
  switch (n) {
    case Need::kRead:
      return kCapRead;
    case Need::kRun:
      return kCapRun;
    case Need::kDecide:
      return kCapDecide;
    case Need::kAdmin:
      return kCapAdmin;
    case Need::kPublic:
      break;
  }
  return 0;
}

std::string_view CapName(uint32_t one_cap) {
  for (const auto& c : kCapNames) {
    if (c.cap == one_cap) return c.name;
  }
  return "none";
}

Result<uint32_t> ParseScopes(std::string_view text) {
  if (text == "*") return kAllCaps;
  uint32_t caps = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view word = text.substr(i, j - i);
    i = j + 1;
    if (word.empty()) continue;
    bool known = false;
    for (const auto& c : kCapNames) {
      if (word == c.name) {
        caps |= c.cap;
        known = true;
      }
    }
    if (!known) {
      return InvalidArgument(fmt::format("unknown scope '{}' (read, run, decide, admin)",
                                         std::string(word).substr(0, 40)),
                             "scopes");
    }
  }
  return caps;
}

std::vector<std::string> ScopeList(uint32_t caps) {
  std::vector<std::string> out;
  for (const auto& c : kCapNames) {
    if (caps & c.cap) out.push_back(c.name);
  }
  return out;
}

std::string ScopesText(uint32_t caps) {
  if ((caps & kAllCaps) == kAllCaps) return "*";
  std::string out;
  for (const auto& c : kCapNames) {
    if (!(caps & c.cap)) continue;
    if (!out.empty()) out += ' ';
    out += c.name;
  }
  return out;
}

Access::Access(AccessSettings settings, IdentityRecords* groups, Clock* clock)
    : settings_(std::move(settings)), store_(groups), clock_(clock) {}

bool Access::IsAdmin(const std::string& user) const { return user == kAdminUser; }

std::vector<std::string> Access::GroupsOf(const std::string& user) const {
  if (!store_ || !settings_.oidc) return {};
  const TimeMs now = clock_->NowMs();
  {
    MutexLock lock(&mu_);
    auto it = group_cache_.find(user);
    if (it != group_cache_.end() && now - it->second.at < kGroupsTtlMs) return it->second.groups;
  }
  auto g = store_->UserGroups(user);
  std::vector<std::string> groups = g.ok() ? *g : std::vector<std::string>{};
  MutexLock lock(&mu_);
  if (group_cache_.size() > 10'000) group_cache_.clear();  // bounded; refills on use
  group_cache_[user] = {groups, now};
  return groups;
}

void Access::Forget(const std::string& user) const {
  MutexLock lock(&mu_);
  group_cache_.erase(user);
}

std::map<std::string, Role> Access::TeamsOf(const std::string& user) const {
  std::map<std::string, Role> out;
  if (settings_.teams.empty()) return out;
  const auto groups = GroupsOf(user);
  for (const auto& [name, team] : settings_.teams) {
    Role best = IsAdmin(user) ? Role::kAdmin : Role::kNone;
    if (auto it = team.members.find(user); it != team.members.end())
      best = std::max(best, it->second);
    for (const auto& g : groups) {
      if (auto it = team.groups.find(g); it != team.groups.end()) best = std::max(best, it->second);
    }
    if (best != Role::kNone) out[name] = best;
  }
  return out;
}

Role Access::RoleIn(const std::string& user, const std::string& team) const {
  if (IsAdmin(user)) return Role::kAdmin;
  if (team.empty()) return settings_.default_role;
  auto teams = TeamsOf(user);
  auto it = teams.find(team);
  return it == teams.end() ? Role::kNone : it->second;
}

uint32_t Access::CapsAnywhere(const std::string& user) const {
  if (IsAdmin(user)) return kAllCaps;
  uint32_t caps = CapsOf(settings_.default_role);
  for (const auto& [team, role] : TeamsOf(user)) caps |= CapsOf(role);
  return caps;
}

std::string Access::TeamOfSpace(const std::string& space) const {
  auto it = settings_.space_team.find(space);
  return it == settings_.space_team.end() ? "" : it->second;
}

bool Access::SpaceVisible(const std::string& space, const std::string& user) const {
  const std::string team = TeamOfSpace(space);
  return team.empty() || RoleIn(user, team) != Role::kNone;
}

namespace {

// The rule before teams: the owner, or a shared or unowned one for all.
bool OldRule(const std::string& visibility, const std::string& owner, const std::string& user) {
  return visibility == "shared" || owner.empty() || owner == user;
}

// A team space's item: its team's members see it, a private one only its
// owner and the team's admins; a non-member sees nothing of it.
template <typename Item>
bool VisibleItem(const Access& access, const Item& item, const std::string& user) {
  const std::string team = access.TeamOfSpace(item.space);
  if (team.empty()) return OldRule(item.visibility, item.owner, user);
  const Role role = access.RoleIn(user, team);
  if (role == Role::kNone) return false;
  if (item.visibility == "private" && !item.owner.empty() && item.owner != user) {
    return role == Role::kAdmin;
  }
  return true;
}

}  // namespace

bool Access::Visible(const Task& task, const std::string& user) const {
  return VisibleItem(*this, task, user);
}
bool Access::Visible(const Schedule& schedule, const std::string& user) const {
  return VisibleItem(*this, schedule, user);
}
bool Access::Visible(const Mission& mission, const std::string& user) const {
  return VisibleItem(*this, mission, user);
}

uint32_t Access::CapsOn(const Task& task, const std::string& user) const {
  return CapsOf(RoleIn(user, TeamOfSpace(task.space)));
}

Status Access::Allow(const Task& task, const std::string& user, uint32_t cap) const {
  const std::string team = TeamOfSpace(task.space);
  const Role role = RoleIn(user, team);
  if (CapsOf(role) & cap) return Status::Ok();
  if (team.empty()) {
    return PermissionDenied(fmt::format("your role {} cannot {}", RoleName(role), CapName(cap)));
  }
  return PermissionDenied(
      fmt::format("your role {} in team {} cannot {}", RoleName(role), team, CapName(cap)));
}

Status Access::AllowRoute(const Principal& p, Need need) const {
  const uint32_t cap = CapOf(need);
  if (cap == 0) return Status::Ok();
  if (!(p.scopes & cap)) {
    return PermissionDenied(fmt::format("this token's scopes ({}) do not include {}",
                                        ScopesText(p.scopes), CapName(cap)));
  }
  if (!(CapsAnywhere(p.user) & cap)) {
    return PermissionDenied(
        fmt::format("your role {} cannot {}", RoleName(settings_.default_role), CapName(cap)));
  }
  return Status::Ok();
}

}  // namespace maestro::api
