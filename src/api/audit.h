// The audit log's API side (issue 49 item 5): who did what, when.
//
// AuditLog::Record appends one entry through the store's IdentityRecords
// (store/identity_records.h; kept on both backends) with the clock's time.
// Recording never fails the action it records: a store failure is logged
// (spdlog::warn) and the action goes on — an audit row is evidence, not a
// gate. Actions and their `detail` (docs/api.md "Audit log"): task.create,
// task.comment, task.continue, task.cancel, task.rename, request.decide
// (request id, kind, decision, scope, args_sha256), budget.raise (the
// limits), token.create / token.revoke (token id, name, scopes, for whom),
// auth.login / auth.logout, config.change (old/new sha256 of the config).
// `detail` holds ids, names and hashes — never a secret (a token's plain
// value, a session id) and never a tool's arguments themselves.
//
// The reads (GET /api/local/audit[/export], api/routes_audit.cc) take their
// filter from ParseAuditFilter and answer each entry as AuditJson.
//
// Thread safety: AuditLog keeps no state of its own (the store is
// thread-safe), so Record may be called from any thread concurrently; the
// free functions are pure.
#pragma once

#include <string>
#include <string_view>

#include "api/http.h"
#include "core/clock.h"
#include "core/json.h"
#include "core/status.h"
#include "store/identity_records.h"

namespace maestro::api {

class AuditLog {
 public:
  // `store` and `clock` must outlive the log.
  AuditLog(IdentityRecords& store, Clock* clock);

  // Appends {actor, action, task_id, team, detail} at the clock's now.
  // `detail` should be a JSON object (anything else is stored as
  // {"value": detail}). Never fails: a store error is logged.
  void Record(std::string actor, std::string action, std::string task_id, std::string team,
              Json detail);

 private:
  IdentityRecords& store_;
  Clock* const clock_;
};

// {"id","at","actor","action","task_id","team","detail":{...}}; a detail
// that is not a JSON object (a row written by hand) is {"value": text}.
Json AuditJson(const AuditEntry& e);

// The filter of GET /api/local/audit[/export] from its query:
//   actor, action (a trailing '.' is a prefix: "task."), task_id: at most
//   200 bytes each; since, until: ms since the epoch or RFC 3339
//   ("2026-12-07T21:00:00Z", "...+01:00", fractions of a second), until >
//   since; before_id: an entry id >= 1 (paging); limit: 1..1000 (100).
// Anything else — a bad value or an unknown parameter (a typo must not
// silently widen the filter) — is kInvalidArgument naming the parameter.
// The teams part of the filter is left for the route to set (visibility).
Result<AuditFilter> ParseAuditFilter(const HttpRequest& req);

// An audit time: digits (ms since the epoch) or an RFC 3339 date-time.
// kInvalidArgument naming `field` otherwise.
Result<TimeMs> ParseAuditTime(std::string_view text, const char* field);

}  // namespace maestro::api
