// Authenticator: maps a request's `Authorization: Bearer <token>` to a user,
// and decides task visibility. Sits at the front of every /api/local/* and
// /metrics request (ApiServer's pre-routing handler) and in every route that
// touches a task.
//
// Tokens: the configured admin token (MAESTRO_ADMIN_TOKEN) is user "admin";
// every other token is looked up by its SHA-256 hex in the store's
// api_tokens table (the plain token is never stored or logged). When no
// admin token is configured and the store holds no token, the API is open
// and every caller is user "local" (tests and single-user setups).
//
// Visibility: a task is visible to its owner; a `shared` task, or one with no
// owner (created offline), to everyone. An invisible task answers 404, exactly
// like a missing one, so ids of other users' private tasks do not leak.
//
// Thread safety: all methods may be called concurrently (a mutex guards the
// token cache).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/env.h"
#include "core/mutex.h"
#include "core/status.h"
#include "store/store.h"

namespace maestro::api {

inline constexpr const char* kAdminUser = "admin";

class Authenticator {
 public:
  Authenticator(ApiTokens& store, std::string admin_token);

  // The user of `authorization_header` ("Bearer <token>"), or nullopt.
  std::optional<std::string> UserFor(const std::string& authorization_header);
  static bool Visible(const Task& task, const std::string& user);
  // The same rule for a schedule (issue 20): shared, unowned, or the user's.
  static bool Visible(const Schedule& schedule, const std::string& user);
  // And for a mission (issue 21).
  static bool Visible(const Mission& mission, const std::string& user);

 private:
  ApiTokens& store_;
  const std::string admin_token_hash_;
  Mutex mu_;
  std::map<std::string, std::string> cache_ GUARDED_BY(mu_);  // token hash -> user
};

// Creates the admin token on the first start: when the store has no token,
// generates a random one, stores its hash for user "admin", writes it to
// `<data_dir>/admin_token` (mode 0600) and returns it so the caller can print
// it once. Returns nullopt when tokens already exist.
Result<std::optional<std::string>> EnsureAdminToken(Env& env, ApiTokens& store,
                                                    const std::string& data_dir);

// 32 random bytes from /dev/urandom as lowercase hex.
Result<std::string> NewSecretToken();

}  // namespace maestro::api
