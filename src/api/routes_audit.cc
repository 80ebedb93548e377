// The audit log's reads (issue 49 item 5): who did what, when.
//
//   GET /api/local/audit?actor=&action=&task_id=&since=&until=&before_id=&limit=
//       → {"entries":[AuditJson...], "next_before_id": N|null}   newest first
//   GET /api/local/audit/export?<the same filters>
//       → application/x-ndjson, one AuditJson per line, oldest first,
//         Content-Disposition: attachment; filename="maestro-audit.jsonl"
//
// Both need the admin capability (Need::kAdmin: the admin scope and an
// admin role somewhere). What an admin sees:
//   - the admin user (Access::IsAdmin): every entry;
//   - a team admin: the entries of the teams it administers, the entries of
//     no team when its role outside team spaces (auth.default_role) is
//     admin, and its own actions anywhere — never another team's entry (the
//     store's filter says so, and every entry is checked again here).
// The filter (api/audit.h's ParseAuditFilter) is a 400 naming the bad
// parameter. `next_before_id` is the `before_id` of the next page (null on
// the last). The export pages through the store 1,000 entries at a time and
// holds at most the newest 100,000 matching entries (then it says so in
// `X-Maestro-Audit-Truncated: true`).
#include <algorithm>
#include <set>

#include "api/api_server.h"
#include "api/audit.h"
#include "api/http_util.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {
namespace audit_routes {  // distinct names in the unity build

constexpr size_t kExportMax = 100'000;
constexpr int kExportPage = 1000;

// What one admin may see of the log.
struct Scope {
  bool all = false;
  std::set<std::string> teams;  // teams it administers
  bool unteamed = false;        // entries of no team
  std::string self;             // its own actions, anywhere
  bool Sees(const AuditEntry& e) const {
    if (all || e.actor == self) return true;
    return e.team.empty() ? unteamed : teams.count(e.team) > 0;
  }
};

Scope ScopeOf(const api::Access& access, const std::string& user) {
  Scope s;
  s.self = user;
  if (access.IsAdmin(user)) {
    s.all = true;
    return s;
  }
  for (const auto& [team, role] : access.TeamsOf(user)) {
    if (role == api::Role::kAdmin) s.teams.insert(team);
  }
  s.unteamed = access.RoleIn(user, "") == api::Role::kAdmin;
  return s;
}

// One page of `f` (newest first, at most f.limit) within `scope`: the
// entries of the administered teams merged with the caller's own actions.
// Each query returns the newest f.limit of its part below f.before_id, so
// the newest f.limit of their union are among the merged lists.
Result<std::vector<AuditEntry>> Page(IdentityRecords& store, const Scope& scope,
                                     const AuditFilter& f) {
  if (scope.all) return store.ListAudit(f);
  std::vector<AuditEntry> merged;
  if (!scope.teams.empty() || scope.unteamed) {
    AuditFilter teams = f;
    teams.teams.assign(scope.teams.begin(), scope.teams.end());
    // An empty list with include_unteamed means every entry: name the
    // empty team instead ("no team" only).
    if (teams.teams.empty()) teams.teams.push_back("");
    teams.include_unteamed = scope.unteamed;
    auto part = store.ListAudit(teams);
    if (!part.ok()) return part.status();
    merged = std::move(*part);
  }
  if (f.actor.empty() || f.actor == scope.self) {
    AuditFilter own = f;
    own.actor = scope.self;
    auto part = store.ListAudit(own);
    if (!part.ok()) return part.status();
    merged.insert(merged.end(), part->begin(), part->end());
  }
  std::sort(merged.begin(), merged.end(),
            [](const AuditEntry& a, const AuditEntry& b) { return a.id > b.id; });
  merged.erase(std::unique(merged.begin(), merged.end(),
                           [](const AuditEntry& a, const AuditEntry& b) { return a.id == b.id; }),
               merged.end());
  // Defence in depth: whatever the store answered, nothing outside the
  // scope leaves this function.
  merged.erase(std::remove_if(merged.begin(), merged.end(),
                              [&](const AuditEntry& e) { return !scope.Sees(e); }),
               merged.end());
  if (merged.size() > static_cast<size_t>(f.limit)) merged.resize(static_cast<size_t>(f.limit));
  return merged;
}

// GET /api/local/audit: one page, newest first.
api::HttpResponse ListAudit(IdentityRecords& store, const api::Access& access,
                            const api::HttpRequest& req) {
  auto filter = api::ParseAuditFilter(req);
  if (!filter.ok()) return ReplyError(filter.status());
  auto page = Page(store, ScopeOf(access, req.user), *filter);
  if (!page.ok()) return ReplyError(page.status());
  Json entries = Json::array();
  for (const auto& e : *page) entries.push_back(api::AuditJson(e));
  Json next = page->size() == static_cast<size_t>(filter->limit) && !page->empty()
                  ? Json(page->back().id)
                  : Json();
  return Reply(200, {{"entries", entries}, {"next_before_id", next}});
}

// GET /api/local/audit/export: every matching entry (at most the newest
// 100,000) as JSON lines, oldest first.
api::HttpResponse ExportAudit(IdentityRecords& store, const api::Access& access,
                              const api::HttpRequest& req) {
  auto filter = api::ParseAuditFilter(req);
  if (!filter.ok()) return ReplyError(filter.status());
  const Scope scope = ScopeOf(access, req.user);
  AuditFilter f = *filter;
  f.limit = kExportPage;
  std::vector<AuditEntry> all;
  bool truncated = false;
  while (true) {
    auto page = Page(store, scope, f);
    if (!page.ok()) return ReplyError(page.status());
    for (auto& e : *page) {
      if (all.size() == kExportMax) {
        truncated = true;
        break;
      }
      all.push_back(std::move(e));
    }
    if (truncated || page->size() < static_cast<size_t>(kExportPage)) break;
    f.before_id = all.back().id;
  }
  std::string body;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    body += DumpJson(api::AuditJson(*it));
    body += '\n';
  }
  api::HttpResponse res;
  res.status = 200;
  res.content_type = "application/x-ndjson";
  res.body = std::move(body);
  res.headers.emplace_back("Content-Disposition", "attachment; filename=\"maestro-audit.jsonl\"");
  if (truncated) res.headers.emplace_back("X-Maestro-Audit-Truncated", "true");
  return res;
}

}  // namespace audit_routes
}  // namespace

void ApiServer::RoutesAudit() {
  using api::Need;
  using Req = api::HttpRequest;
  router_.Add("GET", "/api/local/audit", Need::kAdmin,
              [this](const Req& r) { return audit_routes::ListAudit(store_, *access_, r); });
  router_.Add("GET", "/api/local/audit/export", Need::kAdmin,
              [this](const Req& r) { return audit_routes::ExportAudit(store_, *access_, r); });
}

}  // namespace maestro
