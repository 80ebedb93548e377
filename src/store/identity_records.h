// IdentityRecords: who a caller is, kept on both backends (issue 49; shared
// schema change 14, sql/sql_identity.cc):
//   - scoped API tokens (the api_tokens table grows an id, a name, scopes and
//     an expiry; ApiTokens in api_tokens.h keeps the old two-column calls),
//   - OIDC identities: (issuer, subject) bound to one maestro user name, and
//     the groups the provider last said the user is in,
//   - browser sessions (cookie → user) and pending OIDC logins (state →
//     nonce + PKCE verifier, consumed once),
//   - the audit log: who did what, when.
//
// Every secret is stored as its SHA-256 hex only (tokens, session ids, login
// states); the plain value is shown once and never logged.
//
// Who uses it: api/auth.h (tokens, sessions), api/routes_auth.cc (OIDC
// login), api/routes_tokens.cc, api/audit.h.
//
// Not pure, so other Store implementations (test fakes) need not provide
// them; the defaults answer kUnimplemented.
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/types.h"
#include "store/unsupported.h"

namespace maestro {

// A bearer token as stored (never its plain value).
struct ApiTokenRecord {
  std::string id;    // a ULID, how the owner names it to revoke it
  std::string user;  // the user it authenticates as
  std::string name;  // the owner's label ("" for tokens made before names)
  // Space-separated subset of "read run decide admin"; "*" = every scope the
  // user's roles grant (the admin token, tokens made before scopes).
  std::string scopes = "*";
  TimeMs created_at = 0;
  TimeMs expires_at = 0;  // 0: never
  TimeMs revoked_at = 0;  // 0: not revoked
};

struct SessionRecord {
  std::string user;
  std::string csrf;  // the session's CSRF token (plain: it is not a credential alone)
  TimeMs created_at = 0;
  TimeMs expires_at = 0;
};

// A sign-in started at /auth/login, waiting for the provider's callback.
struct PendingLogin {
  std::string nonce;
  std::string code_verifier;  // PKCE
  std::string return_to;      // a path of this server ("/" by default)
  TimeMs created_at = 0;
};

struct AuditEntry {
  int64_t id = 0;  // assigned by the store, increasing
  TimeMs at = 0;
  std::string actor;    // the user who acted ("system" for the server itself)
  std::string action;   // "task.create", "request.decide", "token.create", ...
  std::string task_id;  // "" when the action concerns no task
  std::string team;     // the team of the task's space, "" for none
  std::string detail;   // a JSON object: the action's arguments (ids, hashes, values)
};

struct AuditFilter {
  std::string actor;    // "" any
  std::string action;   // "" any; a trailing '.' matches a prefix ("task.")
  std::string task_id;  // "" any
  // Entries of these teams, plus (when include_unteamed) those of no team;
  // an empty list with include_unteamed = true means every entry.
  std::vector<std::string> teams;
  bool include_unteamed = true;
  TimeMs since = 0;       // at >= since
  TimeMs until = 0;       // 0: no bound; else at < until
  int64_t before_id = 0;  // 0: from the newest; else id < before_id (paging)
  int limit = 100;        // newest first
};

class IdentityRecords {
 public:
  virtual ~IdentityRecords() = default;

  // ---- scoped tokens (table api_tokens)
  // Adds a token; `rec.id` must be set. The hash is unique.
  virtual Status AddScopedToken(const std::string& /*token_hash*/, const ApiTokenRecord& /*rec*/) {
    return NotSupportedByStore();
  }
  // The record of a token hash (revoked and expired ones too: the caller
  // decides), or nullopt.
  virtual Result<std::optional<ApiTokenRecord>> TokenByHash(const std::string& /*token_hash*/) {
    return NotSupportedByStore();
  }
  // The user's tokens, newest first (revoked ones too).
  virtual Result<std::vector<ApiTokenRecord>> ListTokens(const std::string& /*user*/) {
    return NotSupportedByStore();
  }
  // Revokes the user's token `id` at `now`; false when the user has no such
  // (unrevoked) token.
  virtual Result<bool> RevokeToken(const std::string& /*user*/, const std::string& /*id*/,
                                   TimeMs /*now*/) {
    return NotSupportedByStore();
  }

  // ---- OIDC identities
  // Binds (issuer, subject) to `user`: true when it is bound now (new, or
  // already so); false when `user` is bound to another (issuer, subject) or
  // (issuer, subject) to another user — nothing changes then.
  virtual Result<bool> BindIdentity(const std::string& /*issuer*/, const std::string& /*subject*/,
                                    const std::string& /*user*/, TimeMs /*now*/) {
    return NotSupportedByStore();
  }
  // Replaces the groups the provider said `user` is in (sorted, unique).
  virtual Status SetUserGroups(const std::string& /*user*/,
                               const std::vector<std::string>& /*groups*/, TimeMs /*now*/) {
    return NotSupportedByStore();
  }
  // The user's groups from the last sign-in ([] when never signed in).
  virtual Result<std::vector<std::string>> UserGroups(const std::string& /*user*/) {
    return NotSupportedByStore();
  }

  // ---- browser sessions (keyed by the SHA-256 hex of the cookie's value)
  virtual Status AddSession(const std::string& /*id_hash*/, const SessionRecord& /*rec*/) {
    return NotSupportedByStore();
  }
  // The session if it exists and has not expired at `now`, else nullopt.
  virtual Result<std::optional<SessionRecord>> SessionByHash(const std::string& /*id_hash*/,
                                                             TimeMs /*now*/) {
    return NotSupportedByStore();
  }
  virtual Status DeleteSession(const std::string& /*id_hash*/) { return NotSupportedByStore(); }

  // ---- pending OIDC logins (keyed by the SHA-256 hex of the state)
  // Adds one and deletes those older than `now - max_age`.
  virtual Status AddPendingLogin(const std::string& /*state_hash*/, const PendingLogin& /*login*/,
                                 TimeMs /*now*/, TimeMs /*max_age*/) {
    return NotSupportedByStore();
  }
  // Consumes it: returns and deletes it in one step, so a state is used at
  // most once (two callbacks racing: one gets it). nullopt when missing or
  // older than `now - max_age`.
  virtual Result<std::optional<PendingLogin>> TakePendingLogin(const std::string& /*state_hash*/,
                                                               TimeMs /*now*/, TimeMs /*max_age*/) {
    return NotSupportedByStore();
  }

  // ---- audit log (append only)
  // Appends `e` (its id is assigned); returns the id.
  virtual Result<int64_t> AppendAudit(const AuditEntry& /*e*/) { return NotSupportedByStore(); }
  // Entries matching `f`, newest first, at most f.limit (1..1000).
  virtual Result<std::vector<AuditEntry>> ListAudit(const AuditFilter& /*f*/) {
    return NotSupportedByStore();
  }
};

}  // namespace maestro
